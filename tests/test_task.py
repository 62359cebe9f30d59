"""The task sampler and the attention predictor (docs/math/task.md#the-task)."""

import math

import numpy as np
import pytest

from numerics.montecarlo.geometry import random_orthonormal
from numerics.montecarlo.task import attention_predictor, sample_sequences, sample_task
from theory import Problem, Task
from numerics.montecarlo.statistics import bonferroni_z

EPS = np.finfo(float).eps


def _frame(d, rng):
    k_star, v_star = random_orthonormal(d, 2, rng)
    return k_star, v_star


def test_shapes_and_fixed_location(rng):
    problem = Problem(d=7, L=5, eps=0.1, lam=0.5)
    k_star, v_star = _frame(7, rng)
    X, Y, J = sample_task(problem, k_star, v_star, 11, rng)
    assert X.shape == (11, 5, 7) and Y.shape == (11,) and J.shape == (11,)
    assert X.dtype == Y.dtype == np.float64
    assert np.all((0 <= J) & (J < 5))
    _, _, J = sample_task(problem, k_star, v_star, 11, rng, J=3)
    assert np.all(J == 3)


def test_same_seed_same_samples(rng):
    problem = Problem(d=5, L=3, eps=0.3, lam=0.5)
    k_star, v_star = _frame(5, rng)
    seed = rng.integers(2**63)
    a = sample_task(problem, k_star, v_star, 50, np.random.default_rng(seed))
    b = sample_task(problem, k_star, v_star, 50, np.random.default_rng(seed))
    assert all(np.array_equal(x, y) for x, y in zip(a, b))


def test_law_of_the_samples(rng):
    """Moments of docs/math/task.md#the-task by z-tests, Bonferroni over the 7 statistics at family-wise rate 1e-3.

    <X_J, k*> ~ N(s, gamma^2), <X_l, k*> ~ N(0, 1) (l != J), Y - <X_J, v*> ~ N(0, eps^2),
    E[Y] = 0, Var Y = gamma^2 + eps^2, and J uniform on {0..L-1} (the count of J = 0).
    Variances are tested through the mean of the squared standardised value (variance 2).
    """
    d, L, gamma, eps, n = 12, 4, 0.6, 0.3, 200_000
    problem = Problem(d=d, L=L, gamma=gamma, eps=eps, lam=0.5)
    k_star, v_star = _frame(d, rng)
    X, Y, J = sample_task(problem, k_star, v_star, n, rng)
    z_crit = bonferroni_z(1e-3, 7)
    rows = np.arange(n)
    informative = X[rows, J]
    noise_mask = np.arange(L)[None, :] != J[:, None]
    s = math.sqrt(d / 2)
    u = (informative @ k_star - s) / gamma
    w = (X @ k_star)[noise_mask]
    xi = (Y - informative @ v_star) / eps
    y = Y / math.sqrt(gamma**2 + eps**2)
    stats = [
        np.mean(u) * math.sqrt(n),
        (np.mean(u * u) - 1) * math.sqrt(n / 2),
        np.mean(w) * math.sqrt(w.size),
        (np.mean(w * w) - 1) * math.sqrt(w.size / 2),
        (np.mean(xi * xi) - 1) * math.sqrt(n / 2),
        np.mean(y) * math.sqrt(n),
        (np.mean(J == 0) - 1 / L) / math.sqrt((1 / L) * (1 - 1 / L) / n),
    ]
    assert np.all(np.abs(stats) <= z_crit), stats


def test_predictor_matches_the_definition(rng):
    """T = sum_l erf(lam <X_l,k>) <X_l,v>: batched numpy vs a scalar loop with math.erf.

    Both are within a few ulps per term of the exact sum (d-term dot products with pairwise or
    sequential summation: <= d eps relative to sum |x_i k_i|; erf within 1 ulp): allow
    4 (d + 2) eps times sum_l |<X_l, v>| plus the dot-product errors times sup|erf'| lam.
    """
    d, L, lam = 6, 4, 0.7
    X = rng.standard_normal((3, 2, L, d))
    k, v = random_orthonormal(d, 2, rng)
    T = attention_predictor(X, k, v, lam)
    assert T.shape == (3, 2)
    for idx in np.ndindex(3, 2):
        ref = sum(math.erf(lam * sum(X[idx][l, i] * k[i] for i in range(d)))
                  * sum(X[idx][l, i] * v[i] for i in range(d)) for l in range(L))
        scale = sum(np.abs(X[idx][l]) @ np.abs(v) + lam * 1.13 * (np.abs(X[idx][l]) @ np.abs(k))
                    * abs(X[idx][l] @ v) for l in range(L))
        assert abs(T[idx] - ref) <= 4 * (d + 2) * EPS * scale


def test_predictor_sign_symmetry_is_exact(rng):
    X = rng.standard_normal((200, 5, 8))
    k, v = random_orthonormal(8, 2, rng)
    assert np.array_equal(attention_predictor(X, k, v, 1.3), attention_predictor(X, -k, -v, 1.3))


def test_span_reduction_sampler_validates(rng):
    with pytest.raises(ValueError, match="k_star"):
        sample_sequences(1.0, 1.0, 0.0, 3, np.array([1.0, 1.0, 0, 0]), np.array([0, 1.0, 0, 0]), 5, rng)


@pytest.mark.parametrize("kwargs, field", [
    (dict(k_star=np.array([1.0, 0.1, 0, 0])), "k_star"),               # not unit
    (dict(v_star=np.array([0.6, 0.8, 0, 0])), "k_star"),               # not orthogonal to k*
    (dict(k_star=np.array([1.0, 0, 0])), "k_star"),                     # wrong shape
    (dict(J=4), "J"), (dict(J=-1), "J"), (dict(J=1.0), "J"), (dict(J=True), "J"),
    (dict(n=0), "n"), (dict(n=2.5), "n"),
    (dict(rng=np.random.RandomState(0)), "rng"),
    (dict(problem=Task(d=4, L=4, eps=np.array([0.1, 0.2]))), "eps"),   # the sampler is scalar
])
def test_sample_task_rejects_bad_input(kwargs, field, rng):
    args = dict(problem=Problem(d=4, L=4, lam=0.5), k_star=np.array([1.0, 0, 0, 0]),
                v_star=np.array([0, 1.0, 0, 0]), n=5, rng=rng)
    args.update(kwargs)
    with pytest.raises(ValueError, match=field):
        sample_task(**args)


@pytest.mark.parametrize("args, field", [
    ((np.ones((2, 3, 4)), np.array([1.0, 0, 0, 0]), np.array([0, 1.0, 0, 0]), 0.0), "lam"),
    ((np.ones((2, 3, 4)), np.array([1.0, 0, 0, 0]), np.array([0, 1.0, 0, 0]), np.nan), "lam"),
    ((np.ones((2, 3, 4)), np.array([2.0, 0, 0, 0]), np.array([0, 1.0, 0, 0]), 1.0), "k"),
    ((np.ones((2, 3, 4)), np.array([1.0, 0, 0]), np.array([0, 1.0, 0, 0]), 1.0), "k"),
    ((np.ones(4), np.array([1.0, 0, 0, 0]), np.array([0, 1.0, 0, 0]), 1.0), "X"),
])
def test_predictor_rejects_bad_input(args, field):
    with pytest.raises(ValueError, match=field):
        attention_predictor(*args)
