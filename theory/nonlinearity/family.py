"""The family of attention nonlinearities on the task of the paper (docs/math/nonlinearities.md#the-family).

Every member is a predictor that sees a sequence X only through a_l = <X_l, k> and b_l = <X_l, v>:

- element-wise: T_sigma(X) = sum_l sigma(lambda a_l) b_l, sigma in {erf (the paper's, Section 2),
  linear, tanh, relu (leaky with parameter ``leak``), sigmoid};
- softmax over the tokens: T(X) = sum_l w_l b_l, w_l = exp(lambda a_l) / sum_m exp(lambda a_m).

A member is one small object: ``predict`` and ``predict_grads`` (T and its derivatives in p = a and
q = b, used by Monte Carlo and online SGD) and what the quadrature routes need: for element-wise
members sigma, sigma' and the breakpoints of sigma (its kink or its transition region, in units of
its argument); softmax needs nothing more (its one-token Laplace transforms are generic). Members
are chosen by name through ``nonlinearity(name, **params)``; adding one is adding a class to
``_MEMBERS``.
"""

from __future__ import annotations

import dataclasses

import numpy as np
from scipy.special import erf, erfc, expit

__all__ = ["Nonlinearity", "Elementwise", "Erf", "Linear", "Tanh", "ReLU", "Sigmoid", "Softmax",
           "nonlinearity", "NONLINEARITY_NAMES"]

_TWO_OVER_SQRT_PI = 2.0 / np.sqrt(np.pi)


class Nonlinearity:
    """Base of the members: ``name``, ``kind`` ("elementwise" or "softmax"), ``params`` (a dict)."""

    name: str = ""
    kind: str = ""

    @property
    def params(self) -> dict:
        return dataclasses.asdict(self) if dataclasses.is_dataclass(self) else {}

    def __repr__(self):
        args = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        return f"nonlinearity({self.name!r}{', ' if args else ''}{args})"

    def predict(self, lam, p, q):
        """T from the projections p = <X_l, k>, q = <X_l, v> (tokens on the last axis)."""
        raise NotImplementedError

    def predict_grads(self, lam, p, q):
        """(T, dT/dp_l, dT/dq_l): T has the shape of p without its last axis, the derivatives p's."""
        raise NotImplementedError


class Elementwise(Nonlinearity):
    """T = sum_l sigma(lambda p_l) q_l. Subclasses give sigma, sigma' (on the argument u = lambda p),
    ``breakpoints`` (u-values between which quadrature panels of width <= 1 in u resolve sigma:
    beyond them sigma is linear or saturated to float64 precision) and ``odd``."""

    kind = "elementwise"
    odd: bool = False
    breakpoints: tuple = ()

    def sigma(self, u):
        raise NotImplementedError

    def sigma_prime(self, u):
        raise NotImplementedError

    def one_minus_sigma(self, u):
        """1 - sigma(u); members override it where sigma saturates at 1 (no cancellation)."""
        return 1.0 - self.sigma(u)

    def predict(self, lam, p, q):
        return np.sum(self.sigma(lam * np.asarray(p)) * q, axis=-1)

    def predict_grads(self, lam, p, q):
        u = lam * np.asarray(p)
        s = self.sigma(u)
        return np.sum(s * q, axis=-1), lam * self.sigma_prime(u) * q, s


def _window(half_width):
    """Integer u-points on [-half_width, half_width]: panels of width 1 in u over sigma's transition."""
    n = int(np.ceil(half_width))
    return tuple(float(x) for x in range(-n, n + 1))


@dataclasses.dataclass(frozen=True, repr=False)
class Erf(Elementwise):
    """sigma = erf, the paper's gate (Section 2). 1 - erf(u) = erfc(u) < 1e-20 for u > 6.5."""

    name = "erf"
    odd = True
    breakpoints = _window(6.5)

    def sigma(self, u):
        return erf(u)

    def one_minus_sigma(self, u):
        return erfc(u)

    def sigma_prime(self, u):
        return _TWO_OVER_SQRT_PI * np.exp(-np.square(u))


@dataclasses.dataclass(frozen=True, repr=False)
class Linear(Elementwise):
    """sigma(u) = u: T = lambda sum_l a_l b_l (a quadratic form in the tokens)."""

    name = "linear"
    odd = True

    def sigma(self, u):
        return np.asarray(u, dtype=float)

    def sigma_prime(self, u):
        return np.ones_like(np.asarray(u, dtype=float))


@dataclasses.dataclass(frozen=True, repr=False)
class Tanh(Elementwise):
    """sigma = tanh. 1 - tanh(u) < 2 exp(-2u) < 1e-20 for u > 23."""

    name = "tanh"
    odd = True
    breakpoints = _window(23.0)

    def sigma(self, u):
        return np.tanh(u)

    def one_minus_sigma(self, u):
        return 2.0 * expit(-2.0 * np.asarray(u, dtype=float))

    def sigma_prime(self, u):
        return 1.0 / np.square(np.cosh(np.clip(u, -350.0, 350.0)))


@dataclasses.dataclass(frozen=True, repr=False)
class Sigmoid(Elementwise):
    """sigma = logistic sigmoid 1 / (1 + exp(-u)), not odd (sigma(u) - 1/2 is). Saturated to
    exp(-|u|) < 1e-20 for |u| > 46."""

    name = "sigmoid"
    breakpoints = _window(46.0)

    def sigma(self, u):
        return expit(u)

    def one_minus_sigma(self, u):
        return expit(-np.asarray(u, dtype=float))

    def sigma_prime(self, u):
        e = expit(u)
        return e * (1.0 - e)


@dataclasses.dataclass(frozen=True, repr=False)
class ReLU(Elementwise):
    """sigma(u) = max(u, 0) + leak min(u, 0), leak in [0, 1] (leak = 1 is linear); odd iff leak = 1.
    The only breakpoint is the kink at u = 0; sigma' is the step (1 for u > 0, leak for u < 0)."""

    name = "relu"
    leak: float = 0.0
    breakpoints = (0.0,)

    def __post_init__(self):
        leak = self.leak
        if isinstance(leak, bool) or not isinstance(leak, (int, float, np.floating, np.integer)) \
                or not 0.0 <= float(leak) <= 1.0:
            raise ValueError(f"leak={leak!r} is not allowed: relu's leak must be a number in [0, 1]")
        object.__setattr__(self, "leak", float(leak))

    @property
    def odd(self):
        return self.leak == 1.0

    def sigma(self, u):
        u = np.asarray(u, dtype=float)
        return np.where(u > 0, u, self.leak * u)

    def sigma_prime(self, u):
        return np.where(np.asarray(u) > 0, 1.0, self.leak)


@dataclasses.dataclass(frozen=True, repr=False)
class Softmax(Nonlinearity):
    """Softmax over the tokens: T = sum_l w_l b_l, w = softmax(lambda a). dT/db_l = w_l and
    dT/da_l = lambda w_l (b_l - T). Quadrature: theory.nonlinearity.softmax_quad (Laplace route)."""

    name = "softmax"
    kind = "softmax"
    odd = False

    @staticmethod
    def weights(lam, p):
        z = lam * np.asarray(p, dtype=float)
        z = z - np.max(z, axis=-1, keepdims=True)   # exact shift: no overflow at large lambda a
        e = np.exp(z)
        return e / np.sum(e, axis=-1, keepdims=True)

    def predict(self, lam, p, q):
        return np.sum(self.weights(lam, p) * q, axis=-1)

    def predict_grads(self, lam, p, q):
        w = self.weights(lam, p)
        T = np.sum(w * q, axis=-1)
        return T, lam * w * (q - T[..., None]), w


_MEMBERS = {cls.name: cls for cls in (Erf, Linear, Tanh, ReLU, Sigmoid, Softmax)}
NONLINEARITY_NAMES = tuple(_MEMBERS)


def _describe():
    out = []
    for name, cls in _MEMBERS.items():
        fields = [f.name for f in dataclasses.fields(cls)]
        out.append(f"{name}({', '.join(fields)})" if fields else name)
    return ", ".join(out)


def nonlinearity(name, **params) -> Nonlinearity:
    """The member called ``name`` with its parameters, e.g. ``nonlinearity("relu", leak=0.1)``.

    A ``Nonlinearity`` instance is returned as is (without params). Unknown names and parameters
    raise ValueError listing the members and their parameters.
    """
    if isinstance(name, Nonlinearity) and not params:
        return name
    cls = _MEMBERS.get(name) if isinstance(name, str) else None
    if cls is None:
        raise ValueError(f"nonlinearity name={name!r} is not allowed: the members are {_describe()}")
    allowed = {f.name for f in dataclasses.fields(cls)}
    unknown = sorted(set(params) - allowed)
    if unknown:
        raise ValueError(f"parameter(s) {unknown} of nonlinearity {name!r} are not allowed: "
                         f"the members and their parameters are {_describe()}")
    return cls(**params)
