"""Problem and Overlaps: validation, immutability, keyword-only construction (docs/math/task.md#the-task)."""

import dataclasses
import math
import re

import numpy as np
import pytest

from theory import OVERLAP_NAMES, Overlaps, Problem, gram_matrix

EPS = np.finfo(float).eps


def _raises_naming(field, value, build):
    """build() raises ValueError whose message names the field and shows the value."""
    with pytest.raises(ValueError) as info:
        build()
    message = str(info.value)
    assert field in message, message
    assert re.search(re.escape(f"{field}=") + ".*" + re.escape(str(value)), message) or \
        repr(value) in message, message


@pytest.mark.parametrize("field, value", [
    ("d", 0), ("d", -3), ("d", 2.5), ("d", math.nan), ("d", math.inf), ("d", "ten"),
    ("L", 0), ("L", 1.5),
    ("gamma", 0.0), ("gamma", -1.0), ("gamma", math.inf),
    ("eps", -0.1), ("eps", math.nan),
    ("lam", 0.0), ("lam", -2.0),
])
def test_problem_rejects_bad_scalars(field, value):
    kwargs = dict(d=10, L=3, gamma=0.5, eps=0.1, lam=0.2)
    kwargs[field] = value
    _raises_naming(field, value, lambda: Problem(**kwargs))


@pytest.mark.parametrize("field, value", [
    ("d", np.array([4, 0, 8])), ("L", np.array([[1, 2], [3, 0]])),
    ("gamma", np.array([0.5, -0.5])), ("eps", np.array([0.0, -1e-9])), ("lam", np.array([1.0, 0.0])),
])
def test_problem_validates_arrays_elementwise(field, value):
    kwargs = dict(d=10, L=3, gamma=0.5, eps=0.1, lam=0.2)
    kwargs[field] = value
    with pytest.raises(ValueError, match=field):
        Problem(**kwargs)


def test_problem_accepts_arrays_defaults_and_replace():
    p = Problem(d=np.array([2, 400]), lam=np.array([0.1, 1.0]))
    assert (p.L, p.gamma, p.eps) == (10, math.sqrt(0.5), 0.0)   # the paper's L and gamma
    assert np.array_equal(p.s, np.sqrt(np.array([1.0, 200.0])))
    q = dataclasses.replace(Problem(d=400, lam=0.1), d=80)
    assert q.d == 80 and q.lam == 0.1
    with pytest.raises(ValueError, match="d=0"):
        dataclasses.replace(q, d=0)


def test_problem_is_frozen_and_keyword_only():
    p = Problem(d=10, lam=0.5)
    with pytest.raises(dataclasses.FrozenInstanceError):
        p.d = 11
    with pytest.raises(TypeError):
        Problem(10, 10, 0.5, 0.0, 0.1)  # noqa: the positional form must not exist


@pytest.mark.parametrize("field", OVERLAP_NAMES)
@pytest.mark.parametrize("value", [1.5, -1.01, math.nan])
def test_overlaps_reject_out_of_range(field, value):
    kwargs = dict(kappa=0.0, nu=0.0, theta=0.0, eta=0.0, rho=0.0)
    kwargs[field] = value
    _raises_naming(field, value, lambda: Overlaps(**kwargs))


@pytest.mark.parametrize("kwargs", [
    dict(kappa=1.0, nu=0.0, eta=0.5),                      # |k|^2 >= kappa^2 + eta^2 > 1
    dict(kappa=0.8, nu=0.8, theta=0.8, eta=0.0),           # |v|^2 >= nu^2 + theta^2 > 1
    dict(kappa=1.0, nu=1.0, rho=0.5),                      # k = k*, v = v* force rho = 0
    dict(kappa=0.0, nu=0.0, theta=1.0, eta=1.0, rho=1.0),  # k = v*, v = k* force rho = 0
])
def test_overlaps_reject_infeasible_gram(kwargs):
    with pytest.raises(ValueError, match="not feasible"):
        Overlaps(**kwargs)


def test_overlaps_validate_arrays_elementwise():
    Overlaps(kappa=np.array([0.1, 1.0]), nu=np.array([0.2, 1.0]))
    with pytest.raises(ValueError, match="not feasible"):
        Overlaps(kappa=np.array([0.1, 1.0]), nu=np.array([0.2, 1.0]), eta=np.array([0.0, 0.3]))
    with pytest.raises(ValueError, match="nu"):
        Overlaps(kappa=np.array([0.1, 0.2]), nu=np.array([0.2, 1.2]))


def test_overlaps_of_float_unit_vectors_are_accepted(rng):
    """Overlaps computed in float64 from unit vectors sit on the boundary of the feasible set up
    to roundoff (rank-deficient Gram in d < 4, |kappa| = 1, ...): all must be accepted."""
    for d in (2, 3, 4):
        for _ in range(300):
            k, v = rng.standard_normal((2, d))
            k /= np.linalg.norm(k)
            v /= np.linalg.norm(v)
            Overlaps(kappa=k[0], nu=v[1], theta=v[0], eta=k[1], rho=float(k @ v))


def test_overlaps_frozen_keyword_only_and_helpers():
    o = Overlaps(kappa=0.3, nu=0.4, theta=0.1, eta=-0.2, rho=0.2)
    with pytest.raises(dataclasses.FrozenInstanceError):
        o.kappa = 0.0
    with pytest.raises(TypeError):
        Overlaps(0.3, 0.4)  # noqa: the positional form must not exist
    assert o.as_tuple() == (0.3, 0.4, 0.1, -0.2, 0.2)
    assert list(o.as_dict()) == list(OVERLAP_NAMES)
    assert o.distance_to_manifold == math.sqrt(0.1**2 + 0.2**2 + 0.2**2)
    assert Overlaps.oracle() == Overlaps(kappa=1.0, nu=1.0, theta=0.0, eta=0.0, rho=0.0)
    assert Overlaps(kappa=0.5, nu=-0.5).distance_to_manifold == 0.0


def test_gram_matrix_is_that_of_the_vectors(rng):
    """gram_matrix(...) equals the Gram matrix of explicit vectors (k, v, k*, v*), to the
    roundoff of 4-term dot products (4 eps)."""
    k, v = rng.standard_normal((2, 4))
    k /= np.linalg.norm(k)
    v /= np.linalg.norm(v)
    vectors = np.stack([k, v, np.eye(4)[0], np.eye(4)[1]])
    G = gram_matrix(k[0], v[1], v[0], k[1], k @ v)
    assert G.shape == (4, 4)
    assert np.max(np.abs(G - vectors @ vectors.T)) <= 4 * EPS
    assert gram_matrix(np.zeros((3, 2)), 0, 0, 0, 0).shape == (3, 2, 4, 4)


@pytest.mark.parametrize("d", [2, 3])
def test_nearest_feasible_in_r_d_maps_drifted_overlaps_to_rank_d_and_keeps_realisable_ones(d, rng):
    """Overlaps of unit vectors in R^d, drifted by 1e-9 (an integrator's error), have a Gram rank
    above d; nearest_feasible(..., d=d) returns overlaps of rank <= d within a few drifts of them
    (the projection moves each overlap by O(the dropped eigenvalue), module docstring), and returns
    realisable, PSD ones (and M) bit for bit."""
    from theory.feasible import nearest_feasible
    from theory.parameters import gram_rank

    k, v = (x / np.linalg.norm(x, axis=-1, keepdims=True) for x in rng.standard_normal((2, 200, d)))
    exact = np.stack([k[:, 0], v[:, 1], v[:, 0], k[:, 1], np.sum(k * v, axis=-1)])
    drifted = exact + 1e-9 * rng.standard_normal(exact.shape)
    eig = np.linalg.eigvalsh(gram_matrix(*drifted))
    assert np.mean((eig[:, -d - 1] > 64 * np.finfo(float).eps) | (eig[:, 0] < 0)) > 0.9   # not vacuous
    mapped = np.stack(nearest_feasible(*drifted, d=d))
    assert np.all(gram_rank(Overlaps(**dict(zip(OVERLAP_NAMES, mapped)))) <= d)
    assert np.max(np.abs(mapped - exact)) <= 1e-7     # a few drifts, far from O(1)
    kept = np.stack(nearest_feasible(*exact, d=d))
    eig = np.linalg.eigvalsh(gram_matrix(*exact))
    realisable = (eig[:, -d - 1] <= 64 * np.finfo(float).eps) & (eig[:, 0] >= 0)
    assert np.sum(realisable) > 10
    np.testing.assert_array_equal(kept[:, realisable], exact[:, realisable])
    on_m = nearest_feasible(1.0, 0.3, 0.0, 0.0, 0.0, d=3)
    assert on_m == (1.0, 0.3, 0.0, 0.0, 0.0)


_VERDICT_VALUES = [0, 1, 2, -1, 0.0, 1.0, 2.5, -0.5, 5e-324, -5e-324, 1e-300, 2.0**53, 2**53 + 1, 2**60, 10**400,
                   math.nan, math.inf, -math.inf, True, False, np.float64(3.0), np.float64(-0.0), np.float32(2.0),
                   np.int64(4)]


def _accepted(build):
    try:
        build()
    except ValueError:
        return False
    return True


@pytest.mark.parametrize("field", ["d", "L", "gamma", "eps", "lam"])
def test_plain_scalars_get_the_verdict_of_the_general_checks(field):
    """Python ints and floats and numpy float64 fields are checked directly (``theory.parameters._plain``), 0-d
    arrays by the general checks: both accept and reject the same values."""
    kwargs = dict(d=10, L=3, gamma=0.5, eps=0.1, lam=0.2)
    for value in _VERDICT_VALUES:
        plain, general = dict(kwargs, **{field: value}), dict(kwargs, **{field: np.array(value)})
        assert _accepted(lambda: Problem(**plain)) == _accepted(lambda: Problem(**general)), (field, value)


def test_plain_overlaps_get_the_verdict_of_the_general_checks(rng):
    """Scalar overlaps (checked directly, ``Overlaps.__post_init__``) and 0-d arrays (the general checks) are accepted
    and rejected alike, on and near the boundary of the feasible set and out of range."""
    for d in (2, 3, 4, 6):
        for _ in range(200):
            k, v = rng.standard_normal((2, d))
            k /= np.linalg.norm(k)
            v /= np.linalg.norm(v)
            values = np.array([k[0], v[1], v[0], k[1], k @ v]) * (1.0 + rng.choice([0.0, 1e-15, 1e-3, -1e-3]))
            values[rng.integers(5)] += rng.choice([0.0, 1e-14, 0.5, -2.0])
            plain = dict(zip(OVERLAP_NAMES, map(float, values)))
            general = dict(zip(OVERLAP_NAMES, map(np.array, values)))
            assert _accepted(lambda: Overlaps(**plain)) == _accepted(lambda: Overlaps(**general)), plain
    for value in _VERDICT_VALUES:
        plain = dict(kappa=0.1, nu=value)
        general = dict(kappa=0.1, nu=np.array(value))
        assert _accepted(lambda: Overlaps(**plain)) == _accepted(lambda: Overlaps(**general)), value
