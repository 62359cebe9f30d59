"""The risk in overlaps: derived from the model == docs/math/risk.md#closed-form-population-risk transcription == theory.risk (numerics)."""

import numpy as np
import pytest
import sympy as sp

from theory.risk import risk_from_arrays, risk_grad_from_arrays
from theory.symbolic.functions import roundoff_scale
from theory.symbolic.risk_expr import (risk_expression, risk_expression_from_model, risk_grad_symbolic,
                                       risk_gradient_expressions, risk_symbolic, risk_symbols)

EPS = np.finfo(float).eps


def random_points(rng, n=400):
    """Random parameters and feasible overlaps (k, v uniform on S^3, k* = e1, v* = e2)."""
    k = rng.standard_normal((n, 4))
    v = rng.standard_normal((n, 4))
    k /= np.linalg.norm(k, axis=1, keepdims=True)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    overlaps = (k[:, 0], v[:, 1], v[:, 0], k[:, 1], np.sum(k * v, axis=1))
    params = (rng.integers(1, 2000, n).astype(float), rng.integers(1, 60, n).astype(float),
              np.exp(rng.uniform(np.log(0.1), np.log(3), n)), rng.uniform(0, 1, n),
              np.exp(rng.uniform(np.log(1e-3), np.log(5), n)))
    return params + overlaps


def _tolerance(args, expr, point):
    # Roundoff of a sum of products: a few eps per factor times sum_i |term_i|; exp(-a^2) and
    # exp(-A^2/c1^2 ...) amplify the relative error of their arguments by a^2 <= (lam s kappa)^2.
    d, _, _, _, lam, kappa = point[:6]
    a2 = lam**2 * d / 2 * kappa**2
    return 128 * EPS * (1 + a2) * roundoff_scale(args, expr)(*point)


def test_model_derivation_equals_the_closed_form():
    assert sp.simplify(sp.expand(risk_expression() - risk_expression_from_model())) == 0


def test_risk_symbolic_matches_closed_form(rng):
    point = random_points(rng)
    err = np.abs(risk_symbolic(*point) - risk_from_arrays(*point))
    assert np.all(err <= _tolerance(risk_symbols().all, risk_expression(), point))


@pytest.mark.parametrize("index, name", list(enumerate(["kappa", "nu", "theta", "eta", "rho"])))
def test_gradient_symbolic_matches_hand_written(index, name, rng):
    point = random_points(rng)
    got = risk_grad_symbolic(*point)[index]
    want = risk_grad_from_arrays(*point)[index]
    tol = _tolerance(risk_symbols().all, risk_gradient_expressions()[index], point)
    assert np.all(np.abs(got - want) <= tol), name


def test_symbolic_gradient_is_derivative_of_risk(rng):
    # Independent of the symbolic route: central differences of the lambdified risk, with
    # Richardson error estimate as tolerance (plus roundoff eps * scale / h).
    point = list(random_points(rng, n=50))
    grads = risk_grad_symbolic(*point)
    scale = roundoff_scale(risk_symbols().all, risk_expression())(*point)
    h = 1e-4
    for i in range(5):
        def f(step):
            p = list(point)
            p[5 + i] = p[5 + i] + step
            return risk_symbolic(*p)
        d1 = (f(h) - f(-h)) / (2 * h)
        d2 = (f(2 * h) - f(-2 * h)) / (4 * h)
        tol = 4 * np.abs(d1 - d2) / 3 + 64 * EPS * scale / h
        assert np.all(np.abs((4 * d1 - d2) / 3 - grads[i]) <= tol)
