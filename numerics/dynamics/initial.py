"""Random initialisations of the training dynamics: uniform on the sphere, or uniform on M (docs/math/initial-law.md#uniform-on-the-sphere).

Two routes to the same law, with the same arguments:

- ``sample_initial_vectors``: explicit d-dimensional vectors (k, v, k*, v*), k*, v* fresh per run
  (a Haar-uniform orthonormal pair), k, v uniform on the unit sphere of R^d; or uniform on M:
  k uniform on the sphere orthogonal to v*, v uniform on the sphere orthogonal to k* and k.
- ``sample_initial_overlaps``: the five overlaps drawn directly from their exact joint law in
  dimension d at O(1) cost per run (no d-dimensional vectors).

Derivation of the overlap law (off M). By rotation invariance take k* = e1, v* = e2 and write
k = g/|g|, v = h/|h| with g, h independent N(0, I_d). Split g = (g1, g2, g_perp) with
g_perp in R^(d-2), |g_perp|^2 ~ chi2(d-2). Conditionally on g_perp, rotate R^(d-2) so that
g_perp is along its first axis: h_perp = (z, h_rest) with z ~ N(0, 1), |h_rest|^2 ~ chi2(d-3),
all independent. Then
    kappa = g1/|g|, eta = g2/|g|, theta = h1/|h|, nu = h2/|h|,
    rho = (g1 h1 + g2 h2 + |g_perp| z) / (|g| |h|),
    |g|^2 = g1^2 + g2^2 + |g_perp|^2, |h|^2 = h1^2 + h2^2 + z^2 + |h_rest|^2.
Exact for d >= 3. At d = 2 the vectors lie in span{k*, v*} (g_perp = h_perp = 0), which the
same formulas cover with the perpendicular parts set to zero; d = 1 is undefined (no pair k* ⟂ v*).

On M: k = g/|g| with g Gaussian in v*^⊥ (dimension d-1): kappa = g1 / sqrt(g1^2 + chi2(d-2)),
eta = 0. v is uniform on the unit sphere of {k*, k}^⊥ (dimension d-2), which contains v*:
nu = h1 / sqrt(h1^2 + chi2(d-3)), theta = rho = 0. Exact for d >= 3; at d = 2, k = +-k* and
v = +-v* (uniform signs), again the same formulas with the chi-square parts zero.
"""

from __future__ import annotations

import numpy as np

from theory.checks import check_integer
from theory.parameters import Overlaps

from ..montecarlo.task import standard_normals

__all__ = ["sample_initial_vectors", "sample_initial_overlaps"]


def _check_args(d, n_runs):
    check_integer("d", d, 2)   # k* and v* must be orthonormal
    check_integer("n_runs", n_runs, 1)


def _chi2(rng: np.random.Generator, df: int, n: int) -> np.ndarray:
    """chi2(df) samples; df = 0 gives zeros (the degenerate law)."""
    if df == 0:
        return np.zeros(n)
    return rng.chisquare(df, size=n)


def _unit(x: np.ndarray) -> np.ndarray:
    return x / np.linalg.norm(x, axis=-1, keepdims=True)


def _reject(x: np.ndarray, *units: np.ndarray) -> np.ndarray:
    """Remove from x its components along orthonormal ``units`` (twice, for roundoff)."""
    for _ in range(2):
        for u in units:
            x = x - np.sum(x * u, axis=-1, keepdims=True) * u
    return x


def sample_initial_vectors(d: int, n_runs: int, rng: np.random.Generator, on_manifold: bool = False):
    """Return (k, v, k_star, v_star), each of shape (n_runs, d), independent across runs (docs/math/initial-law.md#uniform-on-the-sphere).

    k*, v*: a uniformly random orthonormal pair per run. Off M (default): k, v independent and
    uniform on the unit sphere. ``on_manifold=True``: k uniform on the sphere orthogonal to v*,
    then v uniform on the sphere orthogonal to k* and k (so theta = eta = rho = 0 up to roundoff).
    Sibling: ``sample_initial_overlaps`` (the same law of the overlaps, at O(1) cost per run).
    The normals are ``rng.standard_normal``'s (``numerics.montecarlo.task.standard_normals``: drawn
    by a compiled loop on an SFC64 generator, about four times faster). Requires d >= 2.
    """
    _check_args(d, n_runs)
    k_star = _unit(standard_normals(rng, (n_runs, d)))
    v_star = _unit(_reject(standard_normals(rng, (n_runs, d)), k_star))
    if not on_manifold:
        k = _unit(standard_normals(rng, (n_runs, d)))
        v = _unit(standard_normals(rng, (n_runs, d)))
        return k, v, k_star, v_star
    k = _unit(_reject(standard_normals(rng, (n_runs, d)), v_star))
    if d == 2:  # k = +-k*: span{k*, k} is one-dimensional
        v = _unit(_reject(standard_normals(rng, (n_runs, d)), k_star))
        return k, v, k_star, v_star
    k_perp = _unit(k - np.sum(k * k_star, axis=-1, keepdims=True) * k_star)
    v = _unit(_reject(standard_normals(rng, (n_runs, d)), k_star, k_perp))
    return k, v, k_star, v_star


def sample_initial_overlaps(d: int, n_runs: int, rng: np.random.Generator,
                            on_manifold: bool = False) -> Overlaps:
    """The five overlaps of ``sample_initial_vectors`` drawn from their exact joint law (module
    docstring), as ``Overlaps`` with array fields of shape (n_runs,). Cost O(n_runs), independent of d.

    Exact for every d >= 2 (d = 2: the degenerate law with the chi-square parts zero);
    d < 2 raises ValueError.
    """
    _check_args(d, n_runs)
    n = n_runs
    if on_manifold:
        g1 = rng.standard_normal(n)
        kappa = g1 / np.sqrt(g1 * g1 + _chi2(rng, d - 2, n))
        h1 = rng.standard_normal(n)
        nu = h1 / np.sqrt(h1 * h1 + _chi2(rng, d - 3, n)) if d >= 3 else np.sign(h1)
        zero = np.zeros(n)
        return Overlaps(kappa=kappa, nu=nu, theta=zero, eta=zero.copy(), rho=zero.copy())
    g1, g2, h1, h2 = rng.standard_normal((4, n))
    g_perp2 = _chi2(rng, d - 2, n)
    if d >= 3:
        z = rng.standard_normal(n)
        h_rest2 = _chi2(rng, d - 3, n)
    else:
        z, h_rest2 = np.zeros(n), np.zeros(n)
    g_norm = np.sqrt(g1 * g1 + g2 * g2 + g_perp2)
    h_norm = np.sqrt(h1 * h1 + h2 * h2 + z * z + h_rest2)
    rho = (g1 * h1 + g2 * h2 + np.sqrt(g_perp2) * z) / (g_norm * h_norm)
    return Overlaps(kappa=g1 / g_norm, nu=h2 / h_norm, theta=h1 / h_norm, eta=g2 / g_norm,
                    rho=np.clip(rho, -1.0, 1.0))
