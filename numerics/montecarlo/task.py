"""Samples of the single-location regression task and the attention predictor (docs/math/task.md#the-task).

Task: J ~ Uniform{1..L} (here a 0-based index in {0..L-1}); given J, the tokens are independent,
X_J ~ N(s k*, gamma^2 I_d) with s = sqrt(d/2), X_l ~ N(0, I_d) for l != J, and
Y = <X_J, v*> + xi, xi ~ N(0, eps^2).
Predictor: T(X) = sum_l erf(lambda <X_l, k>) <X_l, v>.
"""

from __future__ import annotations

import numpy as np
from scipy.special import erf

from theory.parameters import Task

__all__ = ["sample_task", "sample_sequences", "sequence_draws", "sequence_locations", "standard_normals",
           "attention_predictor", "unit_vector"]

_EPS = np.finfo(float).eps


def _roundoff(d: int) -> float:
    # A d-term dot product of float64 unit vectors is exact to within d eps (worst case);
    # a factor 4 leaves room for the rounding of the caller's own normalisation.
    return 4.0 * max(d, 1) * _EPS


def unit_vector(name: str, x, d: int) -> np.ndarray:
    """``x`` as a float vector of shape (d,), or ValueError naming ``name`` unless it is finite and
    of norm 1 up to roundoff (4 d eps)."""
    x = np.asarray(x, dtype=float)
    if x.shape != (d,):
        raise ValueError(f"{name} has shape {x.shape}: it must be a vector of shape ({d},)")
    if not np.all(np.isfinite(x)):
        raise ValueError(f"{name}={x!r} must be finite")
    norm = float(np.linalg.norm(x))
    if abs(norm - 1.0) > _roundoff(d):
        raise ValueError(f"{name} has norm {norm!r}: it must be a unit vector (norm 1 up to roundoff)")
    return x


def _scalar_problem(problem: Task):
    for name in ("d", "L", "gamma", "eps"):
        value = getattr(problem, name)
        if np.ndim(value) != 0:
            raise ValueError(f"problem.{name}={value!r} is not allowed: the sampler takes scalar "
                             "problem fields only")
    return int(problem.d), int(problem.L), float(problem.gamma), float(problem.eps)


def _locations(J, L: int, n: int, rng: np.random.Generator) -> np.ndarray:
    if J is None:
        return rng.integers(0, L, size=n)
    if isinstance(J, (bool, np.bool_)) or not isinstance(J, (int, np.integer)) or not 0 <= J < L:
        raise ValueError(f"J={J!r} is not allowed: J must be None (uniform) or an int in "
                         f"{{0, ..., L-1}} = {{0, ..., {L - 1}}} (0-based location)")
    return np.full(n, int(J))


def sample_sequences(s, gamma, eps, L, k_star, v_star, n, rng, J=None):
    """Draw n sequences in coordinates of any orthonormal basis containing k*, v*.

    Tokens have r = len(k_star) coordinates: X_J = s k* + gamma Z_J, X_l = Z_l, Z i.i.d. N(0, I_r).
    With r = d this is the task of docs/math/task.md#the-task; with r < d and k, v, k*, v* in the span of the basis
    it is the exact law of the projections of the tokens on that span (the orthogonal part is
    independent of them and enters neither T nor Y). Returns (X (n, L, r), Y (n,), J (n,)).
    s, gamma, eps, L are taken as given (validated by ``Problem``); the vectors, n, rng and J
    are checked.
    """
    J, X, xi = sequence_draws(eps, L, k_star, v_star, n, rng, J)
    rows = np.arange(n)
    X[rows, J] = s * np.asarray(k_star, dtype=float) + gamma * X[rows, J]
    Y = X[rows, J] @ np.asarray(v_star, dtype=float)
    if xi is not None:
        Y += eps * xi
    return X, Y, J


def sequence_draws(eps, L, k_star, v_star, n, rng, J=None):
    """The random numbers of ``sample_sequences``, drawn from ``rng`` in its order, after its
    checks: locations J (n,), standard normals Z (n, L, r) and the noise draws xi (n,) (None
    when eps = 0). ``sample_sequences`` builds the tokens from them; the compiled Monte-Carlo
    kernel (``numerics.kernels.span_risk_kernel``) consumes the same numbers."""
    J = sequence_locations(L, k_star, v_star, n, rng, J)
    Z = standard_normals(rng, (n, L, np.size(k_star)))
    return J, Z, (standard_normals(rng, n) if eps > 0 else None)


def sequence_locations(L, k_star, v_star, n, rng, J=None):
    """The checks of ``sequence_draws`` and its first draws, the locations J (n,); the normals follow."""
    k_star = np.asarray(k_star, dtype=float)
    r = k_star.size
    k_star = unit_vector("k_star", k_star, r)
    v_star = unit_vector("v_star", v_star, r)
    if abs(float(k_star @ v_star)) > _roundoff(r):
        raise ValueError(f"<k_star, v_star>={float(k_star @ v_star)!r} is not allowed: k_star and "
                         "v_star must be orthogonal (up to roundoff)")
    if isinstance(n, (bool, np.bool_)) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ValueError(f"n={n!r} is not allowed: n must be a positive int")
    if not isinstance(rng, np.random.Generator):
        raise ValueError(f"rng={rng!r} is not allowed: rng must be a numpy.random.Generator")
    return _locations(J, L, n, rng)


def standard_normals(rng: np.random.Generator, shape) -> np.ndarray:
    """``rng.standard_normal(shape)``: the same numbers, and ``rng`` left in the same state. On the SFC64 bit
    generator they are drawn by a compiled loop from its state (``numerics.kernels.sfc64_normals``), about four
    times faster than NumPy draws them from its default PCG64; on any other, by NumPy."""
    if not isinstance(rng.bit_generator, np.random.SFC64):
        return rng.standard_normal(shape)
    from ..kernels.montecarlo_step import sfc64_normals
    from ..kernels.sfc64 import on_sfc64_state

    out = np.empty(shape)
    on_sfc64_state(rng, lambda state: sfc64_normals(state, out.reshape(-1)))
    return out


def sample_task(problem: Task, k_star, v_star, n: int, rng: np.random.Generator, J=None):
    """Draw n i.i.d. samples of the task of docs/math/task.md#the-task in R^d.

    Returns (X, Y, J): X of shape (n, L, d), Y of shape (n,), J of shape (n,) the 0-based
    location of the informative token, uniform on {0..L-1} when ``J`` is None, else fixed to
    the int ``J``. k_star, v_star must be orthonormal vectors of R^d (up to roundoff).
    """
    d, L, gamma, eps = _scalar_problem(problem)
    for name, x in (("k_star", k_star), ("v_star", v_star)):
        if np.shape(x) != (d,):
            raise ValueError(f"{name} has shape {np.shape(x)}: it must be a vector of shape ({d},)")
    return sample_sequences(np.sqrt(d / 2.0), gamma, eps, L, k_star, v_star, n, rng, J)


def attention_predictor(X, k, v, lam):
    """T(X) = sum_l erf(lambda <X_l, k>) <X_l, v> (docs/math/task.md#the-predictor), batched over leading axes.

    X has shape (..., L, d); k, v are unit vectors of R^d; lam > 0. Returns shape (...).
    Exact symmetry: (-k, -v) gives the same T, bit for bit (erf is odd, the products are exact).
    """
    X = np.asarray(X, dtype=float)
    if X.ndim < 2:
        raise ValueError(f"X has shape {X.shape}: it must have shape (..., L, d)")
    d = X.shape[-1]
    k, v = unit_vector("k", k, d), unit_vector("v", v, d)
    lam_arr = np.asarray(lam, dtype=float)
    if lam_arr.ndim != 0 or not np.isfinite(lam_arr) or lam_arr <= 0:
        raise ValueError(f"lam={lam!r} is not allowed: lam must be a finite scalar > 0")
    return np.sum(erf(float(lam_arr) * (X @ k)) * (X @ v), axis=-1)
