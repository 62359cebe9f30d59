"""Vectors with prescribed overlaps and back (docs/math/task.md#overlaps-and-the-manifold-m): numerics.montecarlo.geometry."""

import numpy as np
import pytest
from scipy.special import ndtri

from numerics.montecarlo.geometry import overlaps_from_vectors, random_orthonormal, vectors_from_overlaps
from theory import OVERLAP_NAMES, Overlaps

EPS = np.finfo(float).eps
# Round trip "to roundoff": a backward-stable construction reproduces the Gram matrix of
# (k, v, k*, v*) to a few ulps per entry (4-term dot products, a square root, a normalisation,
# and a product with an orthonormal frame whose own error is O(d eps) per row but enters the
# overlaps only through its Gram matrix, again a few ulps); 64 eps allows a factor ~8.
ROUNDTRIP_TOL = 64 * EPS


def _overlaps_of_random_vectors(rng, r):
    """Overlaps of random unit k, v in R^r with k* = e1, v* = e2 (feasible, Gram rank <= r)."""
    k = rng.standard_normal(r)
    v = rng.standard_normal(r)
    k /= np.linalg.norm(k)
    v /= np.linalg.norm(v)
    return Overlaps(kappa=k[0], nu=v[1], theta=v[0], eta=k[1], rho=float(k @ v))


def _max_diff(a, b):
    return max(abs(float(x) - float(y)) for x, y in zip(a.as_tuple(), b.as_tuple()))


@pytest.mark.parametrize("d", [4, 7, 1000])
def test_round_trip_at_random_feasible_overlaps(d, rng):
    """Generic overlaps (Gram matrix of full rank 4), in a random frame of R^d."""
    for _ in range(200):
        overlaps = _overlaps_of_random_vectors(rng, 4)
        k, v, k_star, v_star = vectors_from_overlaps(overlaps, d, rng)
        assert k.shape == (d,)
        for x in (k, v, k_star, v_star):
            assert abs(np.linalg.norm(x) - 1) <= ROUNDTRIP_TOL
        assert abs(k_star @ v_star) <= ROUNDTRIP_TOL
        assert _max_diff(overlaps_from_vectors(k, v, k_star, v_star), overlaps) <= ROUNDTRIP_TOL


@pytest.mark.parametrize("overlaps, rank", [
    (Overlaps.oracle(), 2), (Overlaps(kappa=-1.0, nu=-1.0), 2),
    (Overlaps(kappa=1.0, nu=0.0), 3),
    (Overlaps(kappa=0.0, nu=0.0), 4), (Overlaps(kappa=0.3, nu=-0.8), 4),
    (Overlaps(kappa=0.0, nu=0.0, theta=1.0, eta=1.0), 2),                    # k = v*, v = k*
])
def test_round_trip_on_the_manifold_and_at_exact_corners(overlaps, rank, rng):
    """Exact (rank-deficient) corners in every dimension d >= rank, down to d = rank."""
    for d in range(rank, 10):
        got = overlaps_from_vectors(*vectors_from_overlaps(overlaps, d, rng))
        assert _max_diff(got, overlaps) <= ROUNDTRIP_TOL
    if rank > 1:
        with pytest.raises(ValueError, match=f"d={rank - 1}"):
            vectors_from_overlaps(overlaps, rank - 1)


@pytest.mark.parametrize("r, d", [(2, 2), (3, 3), (3, 4)])
def test_round_trip_rank_deficient(r, d, rng):
    """Overlaps of vectors in R^r (Gram rank <= r) are realisable in R^d for d >= r."""
    for _ in range(100):
        overlaps = _overlaps_of_random_vectors(rng, r)
        got = overlaps_from_vectors(*vectors_from_overlaps(overlaps, d, rng))
        assert _max_diff(got, overlaps) <= ROUNDTRIP_TOL


@pytest.mark.parametrize("d", [1, 2, 3])
def test_too_small_dimension_is_rejected(d):
    overlaps = Overlaps(kappa=0.3, nu=0.4, theta=0.2, eta=0.1, rho=0.2)   # Gram rank 4
    with pytest.raises(ValueError, match=f"d={d}"):
        vectors_from_overlaps(overlaps, d)


def test_frame_is_random_but_reproducible(rng):
    overlaps = Overlaps(kappa=0.3, nu=0.4, theta=0.2, eta=0.1, rho=0.2)
    seed = rng.integers(2**63)
    a = vectors_from_overlaps(overlaps, 50, np.random.default_rng(seed))
    b = vectors_from_overlaps(overlaps, 50, np.random.default_rng(seed))
    c = vectors_from_overlaps(overlaps, 50, np.random.default_rng(seed + 1))
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert not np.allclose(a[0], c[0])
    canonical = vectors_from_overlaps(overlaps, 50)   # without rng: the first 4 axes
    assert all(np.all(x[4:] == 0) for x in canonical)


def test_random_orthonormal(rng):
    """Rows orthonormal to roundoff (Householder QR: O(d eps)); Haar: the squared first
    coordinate of a uniform unit vector of R^d has mean 1/d and variance
    2 (d - 1) / (d^2 (d + 2)) (Beta(1/2, (d-1)/2)); z-test at rate 1e-3."""
    d, m = 20, 3
    q = random_orthonormal(d, m, rng)
    assert q.shape == (m, d)
    assert np.max(np.abs(q @ q.T - np.eye(m))) <= 4 * d * EPS
    n = 20_000
    first = np.array([random_orthonormal(d, 1, rng)[0, 0] for _ in range(n)]) ** 2
    sd = np.sqrt(2 * (d - 1) / (d**2 * (d + 2)) / n)
    assert abs(first.mean() - 1 / d) <= ndtri(1 - 1e-3 / 2) * sd
    with pytest.raises(ValueError, match="m=5"):
        random_orthonormal(4, 5, rng)


def test_overlaps_from_batched_vectors(rng):
    k, v, k_star, v_star = (rng.standard_normal((3, 2, 6)) for _ in range(4))
    k /= np.linalg.norm(k, axis=-1, keepdims=True)
    v /= np.linalg.norm(v, axis=-1, keepdims=True)
    k_star = np.broadcast_to(np.eye(6)[0], (3, 2, 6))
    v_star = np.broadcast_to(np.eye(6)[1], (3, 2, 6))
    got = overlaps_from_vectors(k, v, k_star, v_star)
    for name in OVERLAP_NAMES:
        assert np.shape(getattr(got, name)) == (3, 2)
    assert np.array_equal(got.kappa, k[..., 0]) and np.array_equal(got.nu, v[..., 1])
