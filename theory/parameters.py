"""Problem parameters and overlaps of single-location regression (docs/math/task.md#the-task).

Both are frozen, keyword-only dataclasses that validate themselves on construction.
Fields may be Python scalars or numpy arrays; arrays broadcast in every route
(``population_risk`` and its siblings), so a sweep is one object with array fields.
Use ``dataclasses.replace`` to change one field.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from .checks import as_real_array

__all__ = ["Task", "Problem", "Overlaps", "OVERLAP_NAMES", "gram_matrix", "gram_rank", "check_realisable",
           "check_representable", "PSD_TOL", "PAPER_L", "PAPER_GAMMA", "PAPER_D"]

OVERLAP_NAMES = ("kappa", "nu", "theta", "eta", "rho")

# Feasibility is checked up to roundoff: a Gram matrix built from float64 unit vectors
# has eigenvalues accurate to a few ulps of its norm (<= 4 here).
PSD_TOL = 64 * np.finfo(float).eps


def _check(name: str, value, ok: np.ndarray, allowed: str) -> None:
    if not np.all(ok):
        arr = np.asarray(value)
        shown = repr(value) if arr.size <= 4 else (
            f"<array of shape {arr.shape} holding {arr.flat[int(np.argmin(np.ravel(ok)))]!r}>")
        raise ValueError(f"{name}={shown} is not allowed: {name} must be {allowed}")


def _entry(fields: dict, index) -> str:
    """The fields at one broadcast index (a short message for array-valued overlaps)."""
    shape = np.broadcast_shapes(*(np.shape(v) for v in fields.values()))
    if shape == ():
        return repr({k: float(v) for k, v in fields.items()})
    picked = {k: float(np.broadcast_to(v, shape)[index]) for k, v in fields.items()}
    return f"{picked!r} (entry {tuple(int(i) for i in index)} of arrays of shape {shape})"


# Fields of these types are checked directly in Python (``_plain``); any other type, and any plain value that
# fails there, takes the general checks (the same verdicts; the general checks raise the messages).
_PLAIN_FLOATS = (float, np.float64)
_PLAIN_MAX = float(2**53)   # plain ints beyond this (and past the float64 range) take the general checks


def _plain(value) -> bool:
    """``value`` is a finite Python float or numpy float64, or a Python int of magnitude <= 2^53 (not a bool)."""
    kind = type(value)
    if kind is int:
        return -_PLAIN_MAX <= value <= _PLAIN_MAX
    return kind in _PLAIN_FLOATS and math.isfinite(value)


def _positive_integer(name: str, value) -> None:
    arr = as_real_array(name, value)
    _check(name, value, (arr >= 1) & (arr == np.round(arr)), "a positive integer")


# The paper's experiments (Section 5): L = 10 tokens, gamma = sqrt(1/2), d = 400. Written here
# once; every signature with a default takes it from these names.
PAPER_L = 10
PAPER_GAMMA = math.sqrt(0.5)
PAPER_D = 400


@dataclasses.dataclass(frozen=True, kw_only=True)
class Task:
    """The data distribution of single-location regression (docs/math/task.md#the-task):
    everything of ``Problem`` except the predictor's lambda. Routes that do not involve the
    predictor (the Bayes risk, the linear baseline, sampling the task) take a ``Task``; every
    ``Problem`` is one.

    d: token dimension; L: number of tokens; gamma: standard deviation of the informative
    token around sqrt(d/2) k*; eps: output-noise standard deviation. The paper's experiments use
    L = 10 and gamma = sqrt(1/2), the defaults here.
    """

    d: int
    L: int = PAPER_L
    gamma: float = PAPER_GAMMA
    eps: float = 0.0

    def __post_init__(self):
        d, L, gamma, eps = self.d, self.L, self.gamma, self.eps
        if (_plain(d) and _plain(L) and _plain(gamma) and _plain(eps) and d >= 1 and L >= 1
                and float(d).is_integer() and float(L).is_integer() and gamma > 0 and eps >= 0):
            return
        _positive_integer("d", self.d)
        _positive_integer("L", self.L)
        gamma = as_real_array("gamma", self.gamma)
        _check("gamma", self.gamma, gamma > 0, "> 0")
        eps = as_real_array("eps", self.eps)
        _check("eps", self.eps, eps >= 0, ">= 0")

    @property
    def s(self):
        """The signal amplitude s = sqrt(d/2) of the informative token (docs/math/task.md#the-task)."""
        return np.sqrt(np.asarray(self.d, dtype=float) / 2)

    @property
    def task(self) -> "Task":
        """The task alone (d, L, gamma, eps), without the predictor's lambda."""
        return Task(d=self.d, L=self.L, gamma=self.gamma, eps=self.eps)

    def with_lam(self, lam) -> "Problem":
        """This task with the predictor's lambda: a ``Problem``."""
        return Problem(d=self.d, L=self.L, gamma=self.gamma, eps=self.eps, lam=lam)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Problem(Task):
    """Parameters of the task and of the predictor (docs/math/task.md): the fields of ``Task`` and
    lam, the erf inverse temperature lambda of the predictor (a number, or an array for a sweep;
    a lambda that changes during training is ``numerics.dynamics.ScheduledProblem``).
    """

    lam: float

    def __post_init__(self):
        super().__post_init__()
        if _plain(self.lam) and self.lam > 0:
            return
        lam = as_real_array("lam", self.lam)
        _check("lam", self.lam, lam > 0, "> 0 (lambda, the erf inverse temperature)")


def _gram_rows(kappa, nu, theta, eta, rho, one, zero) -> list:
    """The rows of the Gram matrix of (k, v, k*, v*) (k*, v* orthonormal)."""
    return [
        [one, rho, kappa, eta],
        [rho, one, theta, nu],
        [kappa, theta, one, zero],
        [eta, nu, zero, one],
    ]


def gram_matrix(kappa, nu, theta, eta, rho) -> np.ndarray:
    """Gram matrix of (k, v, k*, v*) with the overlaps of docs/math/task.md#overlaps-and-the-manifold-m, shape (..., 4, 4)
    (five Python floats: built directly, shape (4, 4), without the broadcasting and stacking)."""
    values = (kappa, nu, theta, eta, rho)
    if all(type(x) is float for x in values):
        return np.array(_gram_rows(*values, 1.0, 0.0))
    kappa, nu, theta, eta, rho = np.broadcast_arrays(*(np.asarray(x, dtype=float) for x in values))
    rows = _gram_rows(kappa, nu, theta, eta, rho, np.ones_like(kappa), np.zeros_like(kappa))
    return np.stack([np.stack(r, axis=-1) for r in rows], axis=-2)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Overlaps:
    """The five overlaps of (k, v) with (k*, v*) (docs/math/task.md#overlaps-and-the-manifold-m).

    kappa = <k,k*>, nu = <v,v*>, theta = <v,k*>, eta = <k,v*>, rho = <k,v>.
    Feasible means: each in [-1, 1] and the Gram matrix of (k, v, k*, v*) positive
    semidefinite (k*, v* orthonormal), up to roundoff.
    The manifold M of the paper is theta = eta = rho = 0.
    """

    kappa: float
    nu: float
    theta: float = 0.0
    eta: float = 0.0
    rho: float = 0.0

    def __post_init__(self):
        values = self.as_tuple()
        if all(_plain(x) and abs(x) <= 1 + PSD_TOL for x in values):
            if np.linalg.eigvalsh(gram_matrix(*(float(x) for x in values)))[0] >= -PSD_TOL:
                return
        for name in OVERLAP_NAMES:
            value = getattr(self, name)
            arr = as_real_array(name, value)
            _check(name, value, np.abs(arr) <= 1 + PSD_TOL, "in [-1, 1]")
        eig = np.linalg.eigvalsh(gram_matrix(*self.as_tuple()))
        if np.any(eig[..., 0] < -PSD_TOL):
            worst = np.unravel_index(np.argmin(eig[..., 0]), eig.shape[:-1])
            raise ValueError(
                f"overlaps {_entry(self.as_dict(), worst)} are not feasible: the Gram matrix of "
                f"(k, v, k*, v*) must be positive semidefinite (smallest eigenvalue "
                f"{np.min(eig[..., 0]):.3g}, tolerance {PSD_TOL:.3g})"
            )

    def as_tuple(self):
        return tuple(getattr(self, name) for name in OVERLAP_NAMES)

    def as_dict(self):
        return {name: getattr(self, name) for name in OVERLAP_NAMES}

    @property
    def distance_to_manifold(self):
        """sqrt(theta^2 + eta^2 + rho^2), the distance to M used in the paper's figures."""
        return np.sqrt(np.square(self.theta) + np.square(self.eta) + np.square(self.rho))

    @classmethod
    def oracle(cls) -> "Overlaps":
        """(k, v) = (k*, v*): kappa = nu = 1, the rest 0."""
        return cls(kappa=1.0, nu=1.0)


def gram_rank(overlaps: Overlaps):
    """Rank of the Gram matrix of (k, v, k*, v*) (eigenvalues above roundoff, as for feasibility):
    the least dimension d in which unit vectors with these overlaps exist (2 to 4). Broadcasts."""
    eig = np.linalg.eigvalsh(gram_matrix(*overlaps.as_tuple()))
    return np.sum(eig > PSD_TOL, axis=-1)


def check_realisable(problem: Task, overlaps: Overlaps) -> None:
    """ValueError unless the overlaps are realisable in R^d: rank of the Gram matrix <= d.

    ``Overlaps`` alone checks feasibility in some R^n; where overlaps meet a ``Problem`` (every
    risk route and the dynamics) the dimension d must hold them, e.g. d = 1 holds none (k* and
    v* are orthonormal) and d = 3 none with a rank-4 Gram matrix.
    """
    rank = gram_rank(overlaps)
    d = np.asarray(problem.d, dtype=float)
    bad = np.broadcast_to(rank > d, np.broadcast_shapes(rank.shape, d.shape))
    if np.any(bad):
        index = np.unravel_index(np.argmax(bad), bad.shape)
        d_bad = float(np.broadcast_to(d, bad.shape)[index])
        r_bad = int(np.broadcast_to(rank, bad.shape)[index])
        where = "" if bad.shape == () else f" (entry {tuple(int(i) for i in index)})"
        raise ValueError(f"d={d_bad:g} is not allowed with these overlaps{where}: the Gram matrix "
                         f"of (k, v, k*, v*) has rank {r_bad}, so they need d >= {r_bad}")


def check_representable(value, problem: Task):
    """``value`` (a risk at ``problem``) if finite, else ValueError: with finite inputs, only
    R ~ gamma^2 + d theta^2 / 2 beyond the float64 range (gamma > ~1e154) makes it non-finite."""
    if not np.all(np.isfinite(value)):
        big = lambda x: x if np.ndim(x) == 0 else f"<array, max {np.max(x)!r}>"
        raise ValueError(f"gamma={big(problem.gamma)!r} with d={big(problem.d)!r} is not allowed: "
                         "the risk (~ gamma^2 + d theta^2 / 2) exceeds the float64 range")
    return value
