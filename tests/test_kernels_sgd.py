"""The compiled reduced-SGD step (numerics/kernels/sgd_step.py) against the NumPy reference route.

Same random numbers (``numerics.sgd.reduced._draw_chunk`` on the reference route; the kernel draws
the same tokens from the same generators itself), same formulas in the same order; they differ
where erf (the kernel's own, numerics/kernels/erf_poly.py) and exp round differently and in the summation
order of the sums over the B L tokens: at most ~B L ulps of O(1) quantities per step, added up at
most linearly over n steps (docs/math/kernels.md#reduced-sgd): the overlaps agree to within
4 B L n eps, the risks to that times their size (measured: <= 1e-14 after 5,000 steps).
"""

import functools

import numpy as np
import pytest

from numerics import PAPER_SGD, PaperSchedule, ScheduledProblem, online_sgd_reduced, sample_initial_overlaps
from theory import OVERLAP_NAMES, Overlaps, Problem

EPS = np.finfo(float).eps


def _compare(problem, start, steps, B, **kw):
    runs = [online_sgd_reduced(problem, start, n_steps=steps, batch_size=B,
                               rng=np.random.default_rng(17), engine=e, **kw)
            for e in ("numpy", "kernel")]
    tol = 4 * B * int(problem.L) * max(steps, 1) * EPS
    for name in OVERLAP_NAMES + ("population_risk", "test_risk"):
        ref, ker = getattr(runs[0], name), getattr(runs[1], name)
        if ref is None:
            assert ker is None
            continue
        diff = np.max(np.abs(ref - ker))
        assert diff <= tol * max(1.0, np.max(np.abs(ref))), (name, diff, tol)
    np.testing.assert_array_equal(runs[0].lam, runs[1].lam)
    return runs


def test_paper_sgd_configuration():
    """The paper's SGD experiment (d = 80, L = 10, B = 5, schedule from lambda = 2, alpha = 1e-3,
    eps = 0.1, fresh test risk), 30 runs from the sphere, first 500 steps (lambda_t falls by 5%; a wrong
    formula of the kernel moves the overlaps by O(alpha) from the first step, and the bound 4 B L n eps
    shrinks with n)."""
    c = PAPER_SGD
    start = sample_initial_overlaps(c.d, c.n_runs, np.random.default_rng(1))
    _compare(c.problem, start, 500, c.batch_size, alpha=c.alpha, log_every=100, test_size=200)


@pytest.mark.parametrize("case", ["sgd_vs_flow", "highdim_sgd d=1e3", "highdim_sgd d=1e4 c=2"])
def test_figure_configurations(case):
    """The other figures that run the reduced-SGD kernel, at their settings: sgd_vs_flow (d = 10, L = 2,
    B = 5, constant lambda = 1, its alpha = 8e-3 for its t_end = 1: 125 steps) and highdim_sgd (L = 10,
    gamma^2 = 1/2, B = 1, lambda = lambda_bar / sqrt(d/2), step c/d, from its path start (0.2, 0.2, 0, 0, 0)
    and from the sphere), 500 steps; the same 4 B L n eps bound as the paper's configuration."""
    if case == "sgd_vs_flow":
        problem = Problem(d=10, L=2, gamma=np.sqrt(0.5), eps=0.1, lam=1.0)
        start = sample_initial_overlaps(10, 8, np.random.default_rng(2))
        _compare(problem, start, 125, 5, alpha=8e-3, log_every=25, test_size=0)
        return
    d, c, lam_bar = (1000, 0.5, 2.0) if case.endswith("d=1e3") else (10_000, 2.0, 1.0)
    problem = Problem(d=d, L=10, gamma=np.sqrt(0.5), eps=0.1, lam=lam_bar / np.sqrt(d / 2.0))
    sphere = sample_initial_overlaps(d, 3, np.random.default_rng(4))
    start = Overlaps(**{name: np.append(getattr(sphere, name), value)
                        for name, value in zip(OVERLAP_NAMES, (0.2, 0.2, 0.0, 0.0, 0.0))})
    _compare(problem, start, 500, 1, alpha=c / d, log_every=100, test_size=0)


@pytest.mark.parametrize("d", [4, 5, 6])
@pytest.mark.parametrize("B, L", [(1, 2), (3, 4)])
def test_smallest_dimensions(d, B, L):
    """d = 4 (no orthogonal part: the Bartlett variables are all zero) and d = 5 (a11 only).

    Where these small-d dynamics expand, no rounding is reproducible (as for PGD,
    docs/math/kernels.md#reduced-sgd: with the sampler that drew every token in full, run 3 at d = 4,
    B = 3, L = 4 expanded in steps 200-500 and the reference started one ulp away (kappa) separated
    from itself by up to 1.2e-11, above 4 B L n eps = 1.1e-11). Each logged overlap (risk) must be
    within the linear bound or within 10 times that own separation; a wrong formula in the kernel
    moves the overlaps by O(alpha) = 1e-2 at the first step, so 300 steps (lambda_t falls by 23%) suffice."""
    problem = ScheduledProblem(d=d, L=L, gamma=np.sqrt(0.5), eps=0.1, lam=PaperSchedule(lam0=1.5, rate=1e-3))
    start = sample_initial_overlaps(d, 5, np.random.default_rng(d))
    kw = dict(n_steps=300, batch_size=B, alpha=1e-2, log_every=100, test_size=50)
    ref, ker = (online_sgd_reduced(problem, start, rng=np.random.default_rng(17), engine=e, **kw)
                for e in ("numpy", "kernel"))
    nudged = Overlaps(**dict(start.as_dict(), kappa=np.nextafter(start.kappa, 2.0)))
    own = online_sgd_reduced(problem, nudged, rng=np.random.default_rng(17), engine="numpy", **kw)
    tol = 4 * B * L * kw["n_steps"] * EPS
    for name in OVERLAP_NAMES + ("population_risk", "test_risk"):  # risks: times their size, as _compare
        r = getattr(ref, name)
        gap = np.abs(r - getattr(ker, name))
        allowed = np.maximum(tol * max(1.0, np.max(np.abs(r))), 10 * np.abs(r - getattr(own, name)))
        assert np.all(gap <= allowed), (name, np.max(gap / allowed))


def test_rank_deficient_starts():
    """Cholesky pivots that vanish: on M, at the oracle and its sign flips, k = v, v = k*."""
    corners = dict(kappa=[0.0, 1.0, -1.0, 0.6, 1.0, 0.3], nu=[0.0, 1.0, 1.0, 0.8, 0.0, 0.5],
                   theta=[0.0, 0.0, 0.0, 0.6, 1.0, 0.0], eta=[0.0, 0.0, 0.0, 0.8, 0.0, 0.0],
                   rho=[0.0, 0.0, 0.0, 1.0, 1.0, 0.0])
    start = Overlaps(**{k: np.array(v) for k, v in corners.items()})
    for d in (4, 5, 80):
        problem = Problem(d=d, L=10, gamma=np.sqrt(0.5), eps=0.1, lam=2.0)
        _compare(problem, start, 500, 5, alpha=1e-3, log_every=1, test_size=0)


def test_bad_engine():
    problem = Problem(d=10, L=3, eps=0.1, lam=1.0)
    start = sample_initial_overlaps(10, 1, np.random.default_rng(0))
    with pytest.raises(ValueError, match="engine='c'"):
        online_sgd_reduced(problem, start, alpha=1e-3, n_steps=1, batch_size=1,
                           rng=np.random.default_rng(0), engine="c")


@pytest.mark.parametrize("sigma", ["softmax", "erf"])
def test_nonlinearity_members_on_the_kernel(sigma):
    """The kernel's erf and softmax members against ``numerics.nonlinearity``'s NumPy coefficients
    (``ReducedCoefficients``, the reference route), same random numbers: the same 4 B L n eps bound
    (softmax: the weights' normalising sum and T are sums over the L tokens, like erf's; each
    weight is one exp and one division). The paper's SGD setting, 10 runs, 500 steps, and d = 4
    (no orthogonal part)."""
    from numerics.nonlinearity.sgd import online_sgd_reduced_sigma

    for d, steps in ((80, 500), (4, 500)):
        problem = ScheduledProblem(d=d, L=10, gamma=np.sqrt(0.5), eps=0.1, lam=PaperSchedule(lam0=2.0))
        start = sample_initial_overlaps(d, 10, np.random.default_rng(3))
        runs = [online_sgd_reduced_sigma(problem, start, sigma, alpha=1e-3, n_steps=steps, batch_size=5,
                                         rng=np.random.default_rng(5), log_every=100, engine=e)
                for e in ("numpy", "kernel")]
        tol = 4 * 5 * 10 * steps * EPS
        diffs = {name: np.max(np.abs(getattr(runs[0], name) - getattr(runs[1], name))) for name in OVERLAP_NAMES}
        assert max(diffs.values()) > 0  # the compiled route ran (it sums in another order)
        assert max(diffs.values()) <= tol, (diffs, tol)


@functools.cache
def _kernel_draws():
    """``_draw_step`` over the steps of a block, compiled once per process (not once per case) and
    cached with the kernels (tests/compiled_in_tests.py)."""
    from compiled_in_tests import njit_over_kernels

    from numerics.kernels import sgd_step as ks

    @njit_over_kernels
    def kernel_draws(state, gamma, mean, L, noise, KV, lam, code, X, AB, Zs, Es, Y, PQ, CE):
        for j in range(X.shape[0]):
            ks._draw_step(state, gamma, mean, L, noise[j], KV, lam, code, X[j], AB[j], Zs[j], Es[j], Y[j], PQ[j], CE[j])

    return kernel_draws


@pytest.mark.parametrize("member", ["erf", "softmax"])
@pytest.mark.parametrize("d, B, L", [(80, 5, 10), (4, 3, 4)])
@pytest.mark.parametrize("KV", [[[0.6, 0.0, 0.8, 0.0], [0.36, 0.48, 0.6, 0.52]], [[0.6, 0.8, 0.0, 0.0], [0.6, 0.8, 0.0, 0.0]]],
                         ids=["generic", "v=k"])
def test_kernel_draws_the_reference_tokens_bit_for_bit(d, B, L, member, KV):
    """The kernel's own draws (NumPy's ziggurat on the run's SFC64 state, ``sfc64.sfc64_normal``, ``_draw_step``) are the
    reference's ``_draw_chunk`` numbers (informative tokens, noise tokens' plane coordinates, complement
    normals) and targets, bit for bit, and leave the generator in the same state: the same seed means the
    same numbers on both routes, over several blocks. The plane basis (e_a, e_b) is the reference's
    ``plane_basis`` bit for bit (same sums in the same order; e_b = 0 at v = k). The projections and, for
    erf, lambda p and -(lambda p)^2 (the arguments of the erf and exp that ``_erf_coefficients`` takes) that
    ``_draw_step`` computes as each token is completed are the reference's formulas: the same bits (the same
    roundings), p and q within 4 ulps of their terms' size (sums of at most 4 products)."""
    import numerics.sgd.reduced as sr
    from numerics.kernels import sgd_step as ks
    from numerics.kernels.sfc64 import set_sfc64_state, sfc64_state
    from numerics.sgd.plane import frame_tokens, plane_basis

    kernel_draws = _kernel_draws()
    gamma, eps, n, lam, KV = np.sqrt(0.5), 0.1, 300, 1.3, np.array(KV)
    code = {"erf": ks.ERF, "softmax": ks.SOFTMAX}[member]
    E, nk, va, vb = plane_basis(KV[None])
    streams = lambda: sr.child_streams(np.random.default_rng(d), 5)[:4]
    ref, ker = streams(), streams()
    for _ in range(2):  # two blocks: the state carries over
        inf, ab, Z, Y, *_ = sr._draw_chunk([ref], n, d, B, L, gamma, eps)
        noise = sr._draw_noise([ker], n, d, B, eps)[0][0]
        out = [np.empty(shape) for shape in ((n, 4, B), (n, 2, B * (L - 1)), (n, 2, 4), (n, 2, 4), (n, B),
                                             (n, 2, B * L), (n, 2, B * L))]
        state = sfc64_state(ker[0])
        kernel_draws(state, gamma, float(np.sqrt(d / 2.0)), L, noise, KV, lam, code, *out)
        set_sfc64_state(ker[0], state)
        for got, want in zip(out[:3] + out[4:5], (inf[0], ab[0], Z[0], Y[0])):
            np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(out[3], np.broadcast_to(E, out[3].shape))
        x = np.stack([frame_tokens(E, inf[0, j:j + 1], ab[0, j:j + 1], L)[0] for j in range(n)])
        PQ, CE = out[5:]
        pq = np.einsum("ac,jci->jai", KV, x)  # sums of 4 products: within 4 ulps of their terms' size
        scale = np.einsum("ac,jci->jai", np.abs(KV), np.abs(x))
        assert np.all(np.abs(PQ - pq) <= 4 * EPS * scale)
        if member == "erf":
            lp = lam * PQ[:, 0]
            np.testing.assert_array_equal(CE[:, 1], lp)  # the erf's argument (its erf: ``erf_block``)
            np.testing.assert_array_equal(CE[:, 0], -(lp * lp))  # the exp's argument (its exp: ``exp_block``)
    assert str(ker[0].bit_generator.state) == str(ref[0].bit_generator.state)


@pytest.mark.parametrize("d", [4, 5, 6, 7, 10, 80])
def test_compiled_noise_draws_are_the_references(d):
    """``_draw_noise`` from the runs' SFC64 states (the kernel route) gives the NumPy route's arrays from the
    runs' Generators bit for bit (the same numbers in the same order; d = 4..7 take the zero, shape-1/2, shape-1
    and shape-3/2 branches of the Bartlett variables), over two blocks (the states carry over)."""
    import numerics.sgd.reduced as sr

    seeds = np.random.SeedSequence(d).spawn(3)
    states = np.ascontiguousarray(sr.stream_states(seeds, 5)[:, :4])  # a SeedSequence is not advanced: first
    gens = [sr.child_streams(s, 5)[:4] for s in seeds]
    for n in (7, 300):
        for got, want in zip(sr._draw_noise(states, n, d, 5, 0.1), sr._draw_noise(gens, n, d, 5, 0.1)):
            np.testing.assert_array_equal(got, want)


def test_stream_states_advance_a_generator_as_child_streams_does():
    """A Generator given per run has spawned its run's streams afterwards (its next children differ), as
    ``child_streams``; the states are those of ``child_streams``'s generators."""
    import numerics.sgd.reduced as sr
    from numerics.kernels.sfc64 import sfc64_state

    gen, twin = np.random.default_rng(5), np.random.default_rng(5)
    states = sr.stream_states([gen], 5)[0]
    np.testing.assert_array_equal(states, [sfc64_state(g) for g in sr.child_streams(twin, 5)])
    assert gen.bit_generator.seed_seq.n_children_spawned == twin.bit_generator.seed_seq.n_children_spawned == 5
