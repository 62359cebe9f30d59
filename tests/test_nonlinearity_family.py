"""The family of attention nonlinearities: registry, predictors, derivatives (theory.nonlinearity)."""

import numpy as np
import pytest

from numerics import attention_predictor
from theory.nonlinearity import NONLINEARITY_NAMES, Nonlinearity, nonlinearity

EPS = np.finfo(float).eps


def test_registry_builds_every_member_by_name():
    assert set(NONLINEARITY_NAMES) >= {"erf", "linear", "tanh", "relu", "sigmoid", "softmax"}
    for name in NONLINEARITY_NAMES:
        member = nonlinearity(name)
        assert isinstance(member, Nonlinearity) and member.name == name
        assert nonlinearity(member) is member
    assert nonlinearity("relu", leak=0.25).leak == 0.25


@pytest.mark.parametrize("name, params, match", [
    ("gelu", {}, "members are erf, linear, tanh, relu\\(leak\\), sigmoid, softmax"),
    (3, {}, "members are"),
    ("erf", {"leak": 0.1}, "parameter\\(s\\) \\['leak'\\] of nonlinearity 'erf'.*relu\\(leak\\)"),
    ("relu", {"slope": 0.1}, "parameter\\(s\\) \\['slope'\\]"),
    ("relu", {"leak": 1.5}, "leak=1.5 is not allowed.*\\[0, 1\\]"),
    ("relu", {"leak": -0.1}, "leak=-0.1"),
    ("relu", {"leak": "a"}, "leak='a'"),
])
def test_bad_names_and_parameters_raise(name, params, match):
    with pytest.raises(ValueError, match=match):
        nonlinearity(name, **params)


def test_erf_member_is_the_papers_predictor_bit_for_bit(rng):
    X = rng.standard_normal((500, 7, 5))
    k, v = rng.standard_normal(5), rng.standard_normal(5)
    k, v = k / np.linalg.norm(k), v / np.linalg.norm(v)
    assert np.array_equal(nonlinearity("erf").predict(0.8, X @ k, X @ v), attention_predictor(X, k, v, 0.8))


def test_softmax_special_cases(rng):
    p, q = rng.standard_normal((100, 1)), rng.standard_normal((100, 1))
    assert np.array_equal(nonlinearity("softmax").predict(3.0, p, q), q[:, 0])   # L = 1: T = b
    p, q = 1e3 * rng.standard_normal((100, 6)), rng.standard_normal((100, 6))
    T = nonlinearity("softmax").predict(50.0, p, q)                              # no overflow
    assert np.all(np.isfinite(T))
    assert np.array_equal(T, q[np.arange(100), np.argmax(p, axis=1)])            # hard max


@pytest.mark.parametrize("name", NONLINEARITY_NAMES)
def test_predict_grads_equal_central_differences(name, rng):
    """dT/dp_l, dT/dq_l against central differences; T is smooth away from relu's kink (p = 0 has
    probability 0). Tolerance: truncation h^2 |T'''| / 6 with |T'''| <= 100 on these scales plus
    roundoff 8 eps max|T| / h, h = eps^(1/3)."""
    member = nonlinearity(name, **({"leak": 0.2} if name == "relu" else {}))
    lam = 1.3
    p, q = rng.standard_normal((50, 4)), rng.standard_normal((50, 4))
    T, dp, dq = member.predict_grads(lam, p, q)
    assert np.array_equal(T, member.predict(lam, p, q))
    h = EPS ** (1 / 3)
    tol = h * h / 6 * 100 + 8 * EPS * np.max(np.abs(T) + 1) / h
    for l in range(4):
        e = np.zeros(4)
        e[l] = h
        fd_p = (member.predict(lam, p + e, q) - member.predict(lam, p - e, q)) / (2 * h)
        fd_q = (member.predict(lam, p, q + e) - member.predict(lam, p, q - e)) / (2 * h)
        assert np.max(np.abs(fd_p - dp[:, l])) <= tol
        assert np.max(np.abs(fd_q - dq[:, l])) <= tol


def test_oddness_flags():
    odd = {name: nonlinearity(name).odd for name in NONLINEARITY_NAMES}
    assert odd == {"erf": True, "linear": True, "tanh": True, "relu": False, "sigmoid": False,
                   "softmax": False}
    assert nonlinearity("relu", leak=1.0).odd
    u = np.linspace(-5, 5, 101)
    for name in ("erf", "linear", "tanh"):
        member = nonlinearity(name)
        assert np.array_equal(member.sigma(-u), -member.sigma(u))
