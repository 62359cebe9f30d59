"""The exact reduced SGD simulator against the full d-dimensional one (numerics/sgd_reduced.py).

Routes: ``online_sgd_full`` (explicit vectors) and ``online_sgd_reduced`` (overlaps, O(1) per step).
Checks: (1) one step of each on the same samples gives the same overlaps to roundoff; (2) the
Bartlett pair has the law of the explicit Gaussian sums; (3) two-sample KS tests of the overlap
laws at several steps and d, with a power check against a simulator that drops the orthogonal
component; (4) d = 10^6 runs; (5) a run's numbers do not depend on its neighbours or on the
block length of the pre-drawn randomness; (6) the fresh test risk is unbiased for the closed form.
"""

import dataclasses

import numpy as np
import pytest
from scipy.stats import ks_2samp, norm

import numerics.sgd.reduced as sr
from numerics.montecarlo.geometry import vectors_from_overlaps
from numerics.dynamics.initial import sample_initial_overlaps, sample_initial_vectors
from numerics.dynamics.schedules import PaperSchedule
from numerics.sgd.full import minibatch_loss_grad, online_sgd_full
from numerics.sgd.reduced import online_sgd_reduced
from reduced_one_step import reduced_and_full_step
from theory import OVERLAP_NAMES, Overlaps, Problem
from theory.risk import risk_from_arrays
from numerics.dynamics.schedules import ScheduledProblem

EPS = np.finfo(float).eps
START = Overlaps(kappa=0.5, nu=0.4, theta=0.2, eta=-0.2, rho=0.3)


def _tile(overlaps, n):
    return Overlaps(**{k: np.full(n, float(x)) for k, x in overlaps.as_dict().items()})


def test_one_step_matches_the_full_step_on_the_same_samples(rng):
    got, want = reduced_and_full_step(START, sr._coefficients, minibatch_loss_grad, rng)
    # Both routes end with O(1) normalised numbers computed by different summation orders
    # (measured: at most 1 eps); 64 eps leaves room for other platforms' reduction orders.
    for name in OVERLAP_NAMES:
        assert abs(got[name] - want[name]) <= 64 * EPS, name


def test_bartlett_pair_has_the_law_of_the_gaussian_sums(rng):
    # u = sum c_i s_i G_i, w = sum e_i s_i G_i with G_i ~ N(0, I_m): their Gram matrix, explicitly
    # and through _perp_pair. KS on 3 statistics; family-wise false-failure rate 1e-3 (Bonferroni).
    m, N, n = 7, 12, 20000
    CE = rng.standard_normal((1, 2, N))
    scale2 = np.where(np.arange(N) == 0, 0.5, 1.0)
    G = rng.standard_normal((n, N, m))
    s = np.sqrt(scale2)[None, :, None]
    u = np.sum(CE[0, 0][None, :, None] * s * G, axis=1)
    w = np.sum(CE[0, 1][None, :, None] * s * G, axis=1)
    explicit = [np.sum(u * u, 1), np.sum(u * w, 1), np.sum(w * w, 1)]

    def bartlett(df_a22):
        a11 = np.sqrt(rng.chisquare(m, n))
        a22 = np.sqrt(rng.chisquare(df_a22, n))
        u5, w5, w6 = sr._perp_pair(np.broadcast_to(CE, (n, 2, N)), scale2, a11,
                                   rng.standard_normal(n), a22)
        return [u5 * u5, u5 * w5, w5 * w5 + w6 * w6]

    level = 1e-3 / 3
    for a, b in zip(explicit, bartlett(m - 1)):
        assert ks_2samp(a, b).pvalue > level
    # Power: a22 with m instead of m - 1 degrees of freedom must be seen in |w|^2.
    assert ks_2samp(explicit[2], bartlett(m)[2]).pvalue < level


def _one_step(KV0, aggregated, rng, n=20000, B=3, L=4, drop=False):
    """The five overlaps after one step from the state KV0 at d = 4 (F is the whole space: no Bartlett part),
    the noise tokens drawn in full (aggregated=False) or through their plane coordinates and the shared
    complement normals (``numerics.sgd.plane``; drop=True leaves the complement out)."""
    from numerics.sgd.frame import frame_overlaps
    from numerics.sgd.plane import frame_tokens, plane_basis, project_complement

    d, gamma, lam, alpha = 4, np.sqrt(0.5), 1.3, 0.1
    KV, scale2, noise = np.broadcast_to(np.array(KV0, float), (n, 2, 4)).copy(), np.ones(B * L), np.ones((B, L))
    scale2[::L], noise[:, 0] = gamma * gamma, 0.0
    inf = gamma * rng.standard_normal((n, 4, B))
    inf[:, 0] += np.sqrt(d / 2.0)
    Y = inf[:, 1] + 0.1 * rng.standard_normal((n, B))
    zero, work = np.zeros(n), np.zeros((n, 2, 6))
    if not aggregated:
        x = rng.standard_normal((n, 4, B, L))
        x[..., 0] = inf
        new = sr.sgd_step(KV, x.reshape(n, 4, B * L), Y, lam, alpha, 2.0 / B, B, scale2, zero, zero, zero, work)
        return frame_overlaps(new)
    E = plane_basis(KV)[0]
    QZ = (0.0 if drop else 1.0) * project_complement(E, rng.standard_normal((n, 2, 4)))
    x = frame_tokens(E, inf, rng.standard_normal((n, 2, B * (L - 1))), L)
    new = sr.sgd_step(KV, x, Y, lam, alpha, 2.0 / B, B, scale2, zero, zero, zero, work, complement=(noise.ravel(), QZ))
    return frame_overlaps(new)


@pytest.mark.parametrize("KV0", [[[0.5, -0.2, 0.84261498, 0.0], [0.2, 0.4, 0.29671303, 0.84261498]],
                                 [[0.6, 0.8, 0.0, 0.0], [0.6, 0.8, 0.0, 0.0]]], ids=["generic", "v=k"])
def test_aggregated_noise_tokens_have_the_law_of_full_tokens(KV0, rng):
    # docs/math/sgd-reduced.md#aggregated-noise-tokens: given the plane coordinates of every noise token,
    # their parts off the plane enter the step as one Gaussian pair; the step's law is that of tokens drawn
    # in full. One step at d = 4 (the in-frame part alone), 20,000 runs each way, KS on the five overlaps,
    # generic and v = k (e_b = 0, Q of rank 3); 2 x 5 tests in the family: level 1e-3 / 10.
    # Power: without the complement pair the same battery rejects.
    level = 1e-3 / 10
    full = _one_step(KV0, False, rng)
    p = lambda other: min(ks_2samp(full[name], other[name]).pvalue for name in OVERLAP_NAMES)
    assert p(_one_step(KV0, True, rng)) > level
    assert p(_one_step(KV0, True, rng, drop=True)) < level


@pytest.mark.parametrize("d", [6, 9, 40])
def test_the_simulator_draws_its_bartlett_variables_with_the_right_degrees_of_freedom(d, rng):
    # The law test above feeds _perp_pair degrees of freedom it picks itself; here the simulator's own
    # draw (_draw_chunk) is checked: a11^2 ~ chi2(d-4), a22^2 ~ chi2(d-5), n21 ~ N(0, 1), which with
    # the test above gives the Wishart(d-4, Sigma) Gram matrix of the orthogonal pair (module
    # docstring, step 3). One-sample KS, 3 tests per d, 9 in the family: level 1e-3 / 9.
    from scipy.stats import chi2, kstest

    level, n = 1e-3 / 9, 20000
    streams = [sr.child_streams(g, 5)[:4] for g in sr.run_generators(rng, 1)]
    *_, a11, n21, a22 = sr._draw_chunk(streams, n, d, 1, 2, 0.7, 0.1)
    m = d - 4
    assert kstest(a11[0] ** 2, chi2(m).cdf).pvalue > level
    assert kstest(a22[0] ** 2, chi2(m - 1).cdf).pvalue > level
    assert kstest(n21[0], norm.cdf).pvalue > level
    # Power: one degree of freedom more or less is seen at this sample size (the mean moves by one
    # against a spread sqrt(2 m)).
    assert kstest(a22[0] ** 2, chi2(m).cdf).pvalue < level
    assert kstest(a11[0] ** 2, chi2(m - 1).cdf).pvalue < level


def test_reduced_simulator_follows_a_decreasing_schedule_in_law(rng):
    # lambda_t = 2 / (1 + 0.2 t) falls from 2 to 0.5 over the 15 steps: the step must use lambda_t.
    # KS on the five overlaps at 3 steps (15 tests, level 1e-3 / 15), and power: the same battery
    # rejects the reduced simulator run at the constant lambda_0 (a step that ignores the schedule).
    d, alpha, n_runs, steps = 20, 0.05, 1000, (5, 10, 15)
    problem = Problem(d=d, L=10, eps=0.1, lam=2.0)
    schedule = PaperSchedule(lam0=2.0, rate=0.2)
    level = 1e-3 / (len(steps) * len(OVERLAP_NAMES))
    vecs = [np.tile(a, (n_runs, 1)) for a in vectors_from_overlaps(START, d)]
    kw = dict(alpha=alpha, n_steps=max(steps), batch_size=5, log_every=1)
    scheduled = ScheduledProblem(d=d, L=10, eps=0.1, lam=schedule)
    full = online_sgd_full(scheduled, *vecs, rng=rng, **kw)
    reduced = online_sgd_reduced(scheduled, _tile(START, n_runs), rng=rng, **kw)
    constant = online_sgd_reduced(problem, _tile(START, n_runs), rng=rng, **kw)
    assert np.array_equal(full.lam, reduced.lam) and full.lam[-1] == 0.5
    p = lambda a, b: min(ks_2samp(getattr(a, name)[s], getattr(b, name)[s]).pvalue
                         for s in steps for name in OVERLAP_NAMES)
    assert p(full, reduced) > level
    assert p(full, constant) < level


def _drop_orthogonal(draw):
    def wrong(*args):
        noise, a11, n21, a22 = draw(*args)
        return noise, 0 * a11, 0 * n21, 0 * a22
    return wrong


# Family: 4 (d, alpha) cases x 4 steps x 5 overlaps = 80 KS tests; family-wise false-failure
# rate 1e-3 over the whole family (Bonferroni), so each test is at level 1.25e-5.
_KS_LEVEL = 1e-3 / 80
_KS_STEPS = (1, 3, 10, 30)


@pytest.mark.parametrize("d, alpha", [(4, 0.05), (5, 0.1), (20, 0.03), (80, 0.01)])
def test_reduced_simulator_has_the_law_of_the_full_simulator(d, alpha, rng, monkeypatch):
    n_runs, problem = 1000, Problem(d=d, L=10, eps=0.1, lam=1.0)
    vecs = [np.tile(a, (n_runs, 1)) for a in vectors_from_overlaps(START, d)]
    kw = dict(alpha=alpha, n_steps=max(_KS_STEPS), batch_size=5, log_every=1)
    full = online_sgd_full(problem, *vecs, rng=rng, **kw)
    reduced = online_sgd_reduced(problem, _tile(START, n_runs), rng=rng, **kw)
    for step in _KS_STEPS:
        for name in OVERLAP_NAMES:
            p = ks_2samp(getattr(full, name)[step], getattr(reduced, name)[step]).pvalue
            assert p > _KS_LEVEL, (step, name, p)
    if d < 20:
        # d = 4: no orthogonal complement, the wrong simulator below coincides with the exact one;
        # d = 5: it differs by a single chi(1) coordinate and 1000 runs do not reliably see that.
        return
    # Power: the same test at the same sample size rejects a simulator without X^perp.
    monkeypatch.setattr(sr, "_draw_noise", _drop_orthogonal(sr._draw_noise))
    wrong = online_sgd_reduced(problem, _tile(START, n_runs), rng=rng, **kw)
    p_min = min(ks_2samp(getattr(full, name)[s], getattr(wrong, name)[s]).pvalue
                for s in _KS_STEPS for name in OVERLAP_NAMES)
    assert p_min < _KS_LEVEL


def test_reduced_simulator_runs_at_d_one_million(rng):
    d = 10**6
    problem = ScheduledProblem(d=d, L=10, eps=0.1, lam=PaperSchedule(lam0=2.0))
    start = sample_initial_overlaps(d, 8, rng)
    out = online_sgd_reduced(problem, start, alpha=1e-5, n_steps=500, batch_size=5, rng=rng,
                             log_every=100, test_size=100)
    for name in OVERLAP_NAMES + ("population_risk", "test_risk"):
        assert np.all(np.isfinite(getattr(out, name))), name
    out.overlaps()  # feasible: |overlaps| <= 1 and PSD Gram matrix, checked by Overlaps
    assert np.all(out.population_risk > 0)


def test_a_run_does_not_depend_on_its_neighbours_or_the_block_length(rng, monkeypatch):
    # Alone or with others, a run draws the same numbers; only the summation order of vectorised
    # reductions may change with the number of runs: a few eps per step, at most ~1e3 eps after
    # 50 steps of these contracting dynamics (bound with a factor > 10 of room: 1e3 * 50 eps).
    # The block length of the pre-drawn randomness changes nothing: bit-identical.
    problem = Problem(d=30, L=10, eps=0.1, lam=1.0)
    start = sample_initial_overlaps(30, 5, rng)
    gens = lambda: [np.random.default_rng(s) for s in np.random.SeedSequence(7).spawn(5)]
    kw = dict(alpha=0.01, n_steps=50, batch_size=5, log_every=10, test_size=20)
    together = online_sgd_reduced(problem, start, rng=gens(), **kw)
    one = Overlaps(**{k: x[2:3] for k, x in start.as_dict().items()})
    alone = online_sgd_reduced(problem, one, rng=gens()[2:3], **kw)
    monkeypatch.setattr(sr, "_CHUNK_FLOATS", 1)  # one step per block
    blocks = online_sgd_reduced(problem, start, rng=gens(), **kw)
    for name in OVERLAP_NAMES + ("population_risk", "test_risk"):
        scale = np.max(np.abs(getattr(alone, name)))
        assert np.max(np.abs(getattr(together, name)[:, 2:3] - getattr(alone, name))) <= 5e4 * EPS * scale, name
        assert np.array_equal(getattr(together, name), getattr(blocks, name)), name


@pytest.mark.parametrize("simulator", ["reduced", "full"])
def test_logged_risks_are_one_closed_form_call_per_logged_step(simulator, rng):
    # The population risks are evaluated after the run, all logged steps in one call; the closed form is
    # elementwise (zeta's Gauss-Legendre sum included), so they equal one call per logged step at that step's
    # lambda_n, bit for bit. d = 10, L = 2 and lambda_n down to 2/11 put points on both branches of zeta.
    problem = ScheduledProblem(d=10, L=2, gamma=np.sqrt(0.5), eps=0.1, lam=PaperSchedule(lam0=2.0, rate=1e-2))
    kw = dict(alpha=1e-2, n_steps=1000, batch_size=5, rng=np.random.default_rng(4), log_every=50)
    if simulator == "reduced":
        out = online_sgd_reduced(problem, sample_initial_overlaps(10, 6, rng), **kw)
    else:
        out = online_sgd_full(problem, *sample_initial_vectors(10, 6, rng), **kw)
    per_step = np.array([risk_from_arrays(10, 2, np.sqrt(0.5), 0.1, float(lam), *(getattr(out, name)[i]
                                                                                  for name in OVERLAP_NAMES))
                         for i, lam in enumerate(out.lam)])
    w = out.lam[:, None] * np.sqrt(5.0) * out.kappa / np.sqrt(1.0 + out.lam[:, None] ** 2)  # zeta's ratio a
    assert np.any((out.lam[:, None] * np.sqrt(0.5) < 0.5) & (np.abs(w) < 0.5))  # the Gauss-Legendre branch is used
    assert np.array_equal(out.population_risk, per_step)


def test_training_does_not_depend_on_the_test_set(rng):
    problem = Problem(d=30, L=10, eps=0.1, lam=1.0)
    start = sample_initial_overlaps(30, 3, rng)
    kw = dict(alpha=0.01, n_steps=40, batch_size=5, log_every=10)
    a = online_sgd_reduced(problem, start, rng=np.random.default_rng(3), test_size=0, **kw)
    b = online_sgd_reduced(problem, start, rng=np.random.default_rng(3), test_size=50, **kw)
    assert a.test_risk is None and b.test_risk_kind == "fresh"
    for name in OVERLAP_NAMES:
        assert np.array_equal(getattr(a, name), getattr(b, name))


def test_fresh_test_risk_is_unbiased_for_the_population_risk(rng):
    # Fresh test sets are independent across logged steps and runs given the trajectory, and
    # E[test risk | overlaps] = R(overlaps): the mean difference over all entries, divided by its
    # standard error, is N(0, 1) up to CLT error. Two-sided false-failure rate 1e-3.
    problem = Problem(d=40, L=10, eps=0.1, lam=1.5)
    start = sample_initial_overlaps(40, 20, rng)
    out = online_sgd_reduced(problem, start, alpha=0.005, n_steps=200, batch_size=5, rng=rng,
                             log_every=10, test_size=200)
    diff = (out.test_risk - out.population_risk).ravel()
    z = diff.mean() / (diff.std(ddof=1) / np.sqrt(diff.size))
    assert abs(z) < norm.isf(1e-3 / 2)


def test_reduced_simulator_rejects_bad_input(rng):
    start = _tile(START, 2)
    kw = dict(alpha=0.01, n_steps=5, batch_size=5, rng=rng)
    with pytest.raises(ValueError, match="problem.d=3"):
        online_sgd_reduced(Problem(d=3, lam=1.0), start, **kw)
    with pytest.raises(ValueError, match="alpha"):
        online_sgd_reduced(Problem(d=10, lam=1.0), start, **dict(kw, alpha=-1.0))
    with pytest.raises(ValueError, match="batch_size"):
        online_sgd_reduced(Problem(d=10, lam=1.0), start, **dict(kw, batch_size=0))
    with pytest.raises(ValueError, match="rng"):
        online_sgd_reduced(Problem(d=10, lam=1.0), start, **dict(kw, rng=[rng]))
    with pytest.raises(ValueError, match="problem.lam"):
        online_sgd_reduced(Problem(d=10, lam=np.array([1.0, 2.0])), start, **kw)
    with pytest.raises(ValueError, match="lam"):
        online_sgd_reduced(ScheduledProblem(d=10, lam=lambda t: 1.0 - t), start, **kw)


def test_trajectory_concatenation_and_properties(rng):
    problem = Problem(d=10, L=10, eps=0.1, lam=1.0)
    kw = dict(alpha=0.01, n_steps=7, batch_size=2, log_every=3)
    a = online_sgd_reduced(problem, _tile(START, 2), rng=rng, **kw)
    b = online_sgd_reduced(problem, _tile(START, 3), rng=rng, **kw)
    both = type(a).concat_runs([a, b])
    assert both.n_runs == 5 and list(both.steps) == [0, 3, 6, 7]
    assert np.array_equal(both.kappa[:, 2:], b.kappa)
    assert np.allclose(both.time, 0.01 * both.steps, rtol=EPS, atol=0)
    assert np.array_equal(both.excess_risk, both.population_risk - 0.01)
    with pytest.raises(ValueError, match="cannot be joined"):
        type(a).concat_runs([a, dataclasses.replace(b, alpha=0.02)])
