"""Population risk and its gradient in the five overlaps for every member of the family
(docs/math/nonlinearities.md).

Routes (siblings): ``population_risk_sigma_quad`` (quadrature for every member: 1-D Gaussian
integrals for element-wise members, the Laplace route for softmax), ``population_risk_sigma``
(the closed form of paper Theorem 1 for erf, the quadrature value otherwise) and
``numerics.nonlinearity.population_risk_sigma_mc`` (Monte Carlo). Exact at every finite d, L.
"""

from __future__ import annotations

import numpy as np

from theory.parameters import OVERLAP_NAMES, Overlaps, Problem
from theory.quad_result import QuadResult
from theory.risk import population_risk, population_risk_grad

from .elementwise_quad import grad_elementwise, risk_elementwise
from .family import Erf, nonlinearity
from .softmax_quad import grad_softmax, risk_softmax

__all__ = ["population_risk_sigma", "population_risk_sigma_quad", "population_risk_sigma_grad",
           "risk_grad_sigma"]


def _scalar_args(problem: Problem, overlaps: Overlaps, route: str):
    fields = dict(d=problem.d, L=problem.L, gamma=problem.gamma, eps=problem.eps, lam=problem.lam,
                  **overlaps.as_dict())
    for name, value in fields.items():
        if np.ndim(value) != 0:
            raise ValueError(f"{name}={value!r} is not allowed: {route} takes scalar fields only")


def population_risk_sigma_quad(problem: Problem, overlaps: Overlaps, sigma="erf",
                               with_error: bool = True) -> QuadResult:
    """R = E[(Y - T_sigma(X))^2] by quadrature with an error estimate (scalar fields).

    ``sigma``: a member name or ``Nonlinearity`` (``theory.nonlinearity.nonlinearity``).
    Element-wise: ``theory.nonlinearity.elementwise_quad``; softmax: ``softmax_quad``.
    ``with_error=False``: the finest rule alone, the same value to the bit, abserr nan.
    """
    member = nonlinearity(sigma)
    _scalar_args(problem, overlaps, "population_risk_sigma_quad")
    route = risk_softmax if member.kind == "softmax" else (
        lambda p, o, e: risk_elementwise(member, p, o, e))
    value, err = route(problem, overlaps, with_error)
    return QuadResult(value=float(value), abserr=float(err))


def population_risk_sigma_grad(problem: Problem, overlaps: Overlaps, sigma="erf",
                               with_error: bool = True) -> dict:
    """{name: QuadResult} of dR/d(kappa, nu, theta, eta, rho) by quadrature (Price's theorem;
    docs/math/nonlinearities.md#gradient). Scalar fields. ``with_error=False`` skips the error
    estimate of the softmax route (abserr nan; for dynamics, where it is evaluated many times)."""
    member = nonlinearity(sigma)
    _scalar_args(problem, overlaps, "population_risk_sigma_grad")
    out = grad_softmax(problem, overlaps, with_error) if member.kind == "softmax" else \
        grad_elementwise(member, problem, overlaps)
    return {name: QuadResult(value=float(out[name][0]), abserr=float(out[name][1]))
            for name in OVERLAP_NAMES}


def population_risk_sigma(problem: Problem, overlaps: Overlaps, sigma="erf") -> float:
    """R for any member: the closed form (paper Theorem 1, ``theory.risk.population_risk``) for
    erf, which broadcasts; the quadrature value for the others (scalar fields; the finest rule alone,
    without the error estimate's coarser rule)."""
    member = nonlinearity(sigma)
    if isinstance(member, Erf):
        return population_risk(problem, overlaps)
    return population_risk_sigma_quad(problem, overlaps, member, with_error=False).value


def risk_grad_sigma(problem: Problem, overlaps: Overlaps, sigma="erf") -> dict:
    """{name: value} of the five partials: closed form for erf, quadrature (without its error
    estimate) for the others."""
    member = nonlinearity(sigma)
    if isinstance(member, Erf):
        return population_risk_grad(problem, overlaps)
    grads = population_risk_sigma_grad(problem, overlaps, member, with_error=False)
    return {k: v.value for k, v in grads.items()}
