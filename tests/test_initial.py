"""The two routes to the initial law (docs/math/initial-law.md#uniform-on-the-sphere): explicit vectors vs the direct overlap sampler.

Statistical design: two-sample Kolmogorov-Smirnov tests per overlap (and for one joint statistic),
Bonferroni over the whole batch of a test function at a declared family false-failure rate;
one-sample KS tests against exact Beta laws; and a power check that the same batch rejects the
law of the wrong dimension (2d), a discrepancy far smaller than any plausible implementation bug
(a missing or misplaced chi-square term changes the law at order 1).
"""

import numpy as np
import pytest
from scipy import stats

from numerics.montecarlo.geometry import overlaps_from_vectors
from numerics.dynamics.initial import sample_initial_overlaps, sample_initial_vectors
from rng_streams import sfc64

FAMILY_RATE = 1e-3  # declared false-failure rate of each test function
DIMS = (5, 50, 400)
N = 4000


def _joint(o):
    # The part of rho not explained by the projections on span{k*, v*}: couples all five overlaps.
    return o.rho - o.kappa * o.theta - o.eta * o.nu


def _statistics(o, on_manifold):
    if on_manifold:
        return {"kappa": o.kappa, "nu": o.nu}
    out = dict(o.as_dict())
    out["joint"] = _joint(o)
    return out


def _ks_pvalues(d, on_manifold, rng, d_overlaps=None):
    a = sample_initial_overlaps(d if d_overlaps is None else d_overlaps, N, rng, on_manifold)
    b = overlaps_from_vectors(*sample_initial_vectors(d, N, rng, on_manifold))
    sa, sb = _statistics(a, on_manifold), _statistics(b, on_manifold)
    return {k: stats.ks_2samp(sa[k], sb[k]).pvalue for k in sa}


@pytest.mark.parametrize("on_manifold", [False, True])
def test_overlap_law_matches_vector_sampling(on_manifold, rng):
    rng = sfc64(rng)   # d-dimensional vectors: the compiled normals (tests/rng_streams.py)
    pvalues = {(d, k): p for d in DIMS for k, p in _ks_pvalues(d, on_manifold, rng).items()}
    level = FAMILY_RATE / len(pvalues)
    assert min(pvalues.values()) > level, pvalues


@pytest.mark.parametrize("on_manifold", [False, True])
def test_ks_batch_has_power_against_wrong_dimension(on_manifold, rng):
    # Same batch and level as above, but the overlaps drawn in dimension 2d: every d must be rejected.
    n_tests = len(DIMS) * (2 if on_manifold else 6)
    level = FAMILY_RATE / n_tests
    rng = sfc64(rng)
    for d in DIMS:
        pvalues = _ks_pvalues(d, on_manifold, rng, d_overlaps=2 * d)
        assert min(pvalues.values()) < level, (d, pvalues)


def test_exact_beta_marginals(rng):
    """kappa^2 ~ Beta(1/2, (d-1)/2), kappa^2 + eta^2 ~ Beta(1, (d-2)/2), rho^2 ~ Beta(1/2, (d-1)/2)
    off M; on M kappa^2 ~ Beta(1/2, (d-2)/2), nu^2 ~ Beta(1/2, (d-3)/2) (uniform on spheres of
    dimension d, d-1, d-2)."""
    pvalues = []
    for d in DIMS:
        o = sample_initial_overlaps(d, 20_000, rng)
        pvalues.append(stats.kstest(o.kappa**2, stats.beta(0.5, (d - 1) / 2).cdf).pvalue)
        pvalues.append(stats.kstest(o.kappa**2 + o.eta**2, stats.beta(1.0, (d - 2) / 2).cdf).pvalue)
        pvalues.append(stats.kstest(o.rho**2, stats.beta(0.5, (d - 1) / 2).cdf).pvalue)
        m = sample_initial_overlaps(d, 20_000, rng, on_manifold=True)
        pvalues.append(stats.kstest(m.kappa**2, stats.beta(0.5, (d - 2) / 2).cdf).pvalue)
        pvalues.append(stats.kstest(m.nu**2, stats.beta(0.5, (d - 3) / 2).cdf).pvalue)
    assert min(pvalues) > FAMILY_RATE / len(pvalues), pvalues


def test_signs_are_symmetric(rng):
    """Each overlap is symmetric in law; the sign of kappa is a fair coin: |z| < z_crit over 7 counts."""
    o = sample_initial_overlaps(50, N, rng)
    m = sample_initial_overlaps(3, N, rng, on_manifold=True)  # at d = 3, nu = +-1
    counts = [np.sum(x > 0) for x in (*o.as_tuple(), m.kappa, m.nu)]
    z = (np.array(counts) - N / 2) / np.sqrt(N / 4)
    assert np.all(np.abs(z) < stats.norm.isf(FAMILY_RATE / (2 * len(z)))), z


def test_manifold_samples_lie_on_manifold(rng):
    eps = np.finfo(float).eps
    for d in (2, 3, 50):
        o = sample_initial_overlaps(d, 100, rng, on_manifold=True)
        assert np.all(o.theta == 0) and np.all(o.eta == 0) and np.all(o.rho == 0)
        vecs = sample_initial_vectors(d, 100, rng, on_manifold=True)
        # a few roundings per Gram-Schmidt step on unit vectors
        assert np.max(overlaps_from_vectors(*vecs).distance_to_manifold) < 16 * eps
        for x in vecs:
            np.testing.assert_allclose(np.linalg.norm(x, axis=1), 1.0, rtol=4 * eps)
        np.testing.assert_array_less(np.abs(np.sum(vecs[2] * vecs[3], axis=1)), 16 * eps)


def test_dimension_two_is_degenerate(rng):
    """d = 2: k, v lie in span{k*, v*}; on M, k = +-k* and v = +-v*."""
    o = sample_initial_overlaps(2, 200, rng)
    np.testing.assert_allclose(o.kappa**2 + o.eta**2, 1.0, rtol=1e-15)
    np.testing.assert_allclose(o.rho, o.kappa * o.theta + o.eta * o.nu, atol=1e-15)
    m = sample_initial_overlaps(2, 200, rng, on_manifold=True)
    assert np.all(np.abs(m.kappa) == 1) and np.all(np.abs(m.nu) == 1)
    v = overlaps_from_vectors(*sample_initial_vectors(2, 200, rng, on_manifold=True))
    np.testing.assert_allclose(np.abs(v.kappa), 1.0, atol=1e-15)
    np.testing.assert_allclose(np.abs(v.nu), 1.0, atol=1e-15)


@pytest.mark.parametrize("bad", [dict(d=1), dict(d=0), dict(d=2.5), dict(n_runs=0)])
def test_bad_input(bad, rng):
    args = dict(d=5, n_runs=3) | bad
    name = next(iter(bad))
    for sampler in (sample_initial_overlaps, sample_initial_vectors):
        with pytest.raises(ValueError, match=name):
            sampler(args["d"], args["n_runs"], rng)


def test_reproducible_from_seed():
    a = sample_initial_overlaps(400, 5, np.random.default_rng(7))
    b = sample_initial_overlaps(400, 5, np.random.default_rng(7))
    assert all(np.array_equal(x, y) for x, y in zip(a.as_tuple(), b.as_tuple()))
