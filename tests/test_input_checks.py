"""Bad arguments raise ValueError naming the parameter, early and with a short message.

Bools and strings are not numbers, integers past the float64 range are rejected, the overlaps must
be realisable in R^d wherever they meet a Problem, and the dynamics refuse NaN or out-of-range
starts (theory.checks, theory.parameters.check_realisable).
"""

import numpy as np
import pytest

from numerics import (manifold_flow, online_sgd_reduced, overlap_flow, overlap_pgd,
                      population_risk_mc, sample_initial_overlaps)
from theory import Overlaps, Problem, population_risk, population_risk_grad, population_risk_quad
from theory.parameters import gram_rank

GENERIC = Overlaps(kappa=0.3, nu=0.2, theta=0.1, eta=-0.2, rho=0.15)   # rank-4 Gram matrix


def _raises_naming(name, call):
    with pytest.raises(ValueError) as info:
        call()
    message = str(info.value)
    assert message.startswith(f"{name}=") or f" {name}=" in message or f"{name} " in message, message
    assert len(message) < 400, message
    return message


@pytest.mark.parametrize("field", ["d", "L", "gamma", "eps", "lam"])
@pytest.mark.parametrize("value", [True, False, np.True_, "1e3", b"2", 1 + 0j, [1, True], None])
def test_problem_rejects_bools_strings_and_non_numbers(field, value):
    kwargs = dict(d=10, L=3, gamma=0.5, eps=0.1, lam=0.2)
    kwargs[field] = value
    _raises_naming(field, lambda: Problem(**kwargs))


@pytest.mark.parametrize("field", ["kappa", "nu", "theta", "eta", "rho"])
@pytest.mark.parametrize("value", [True, "0.1"])
def test_overlaps_reject_bools_and_strings(field, value):
    kwargs = dict(kappa=0.1, nu=0.1)
    kwargs[field] = value
    _raises_naming(field, lambda: Overlaps(**kwargs))


@pytest.mark.parametrize("field, value", [("d", 10**400), ("L", -(10**309)), ("lam", 10**400)])
def test_integers_past_float_range_are_rejected(field, value):
    kwargs = dict(d=10, L=3, lam=0.2)
    kwargs[field] = value
    message = _raises_naming(field, lambda: Problem(**kwargs))
    assert "float64 range" in message


def test_large_integers_within_float_range_are_numbers():
    assert Problem(d=10**300, lam=1.0).d == 10**300


def test_infeasible_array_overlaps_give_a_short_message():
    """256 runs, one infeasible: the message shows that entry, not the 256-element arrays."""
    kappa = np.full(256, 0.5)
    kappa[17] = 0.9
    message = _raises_naming("overlaps", lambda: Overlaps(kappa=kappa, nu=np.zeros(256),
                                                          eta=np.full(256, 0.5)))
    assert "entry (17,)" in message


# ---------------------------------------------------------------- overlaps realisable in R^d

@pytest.mark.parametrize("route", [
    lambda p, o: population_risk(p, o),
    lambda p, o: population_risk_grad(p, o),
    lambda p, o: population_risk_quad(p, o),
    lambda p, o: population_risk_mc(p, o, n=100, rng=np.random.default_rng(0)),
    lambda p, o: overlap_pgd(p, o, alpha=1e-3, n_steps=1),
    lambda p, o: overlap_flow(p, o, t_end=1.0),
], ids=["closed", "grad", "quad", "mc", "pgd", "flow"])
@pytest.mark.parametrize("d", [1, 2, 3])
def test_overlaps_of_rank_above_d_are_rejected_by_every_route(route, d):
    assert int(gram_rank(GENERIC)) == 4
    message = _raises_naming("d", lambda: route(Problem(d=d, lam=0.5), GENERIC))
    assert "rank 4" in message


def test_overlaps_of_rank_at_most_d_are_accepted():
    """k = v = v* (rank 2) lives in R^2; a point of M with |kappa|, |nu| < 1 needs R^4."""
    in_plane = Overlaps(kappa=0.0, nu=1.0, eta=1.0, rho=1.0)
    assert int(gram_rank(in_plane)) == 2
    assert np.isfinite(population_risk(Problem(d=2, lam=0.5), in_plane))
    on_m = Overlaps(kappa=0.3, nu=0.2)
    _raises_naming("d", lambda: manifold_flow(Problem(d=3, lam=0.5), 0.3, 0.2, t_end=1.0))
    assert np.isfinite(population_risk(Problem(d=4, lam=0.5), on_m))


def test_array_overlaps_report_the_unrealisable_entry():
    kappa = np.array([1.0, 0.3, 1.0])     # runs 0 and 2: k = k*, v = v* (rank 2)
    nu = np.array([1.0, 0.2, 1.0])
    message = _raises_naming("d", lambda: population_risk(Problem(d=3, lam=0.5),
                                                          Overlaps(kappa=kappa, nu=nu)))
    assert "entry (1,)" in message


# ---------------------------------------------------------------- dynamics: starts and arguments

@pytest.mark.parametrize("start, name", [
    ((np.nan, 0.1, 0.0, 0.0, 0.0), "kappa"),
    ((3.0, 0.1, 0.0, 0.0, 0.0), "kappa"),
    ((0.1, -1.5, 0.0, 0.0, 0.0), "nu"),
    ((0.9, 0.1, 0.0, 0.9, 0.0), "overlaps"),            # kappa^2 + eta^2 > 1: infeasible
    ((0.1, 0.1, 0.0, 0.0), "initial"),                  # four overlaps
    ((np.zeros(3), np.zeros(2), 0.0, 0.0, 0.0), "initial"),   # runs of different lengths
    ((True, 0.1, 0.0, 0.0, 0.0), "kappa"),
])
@pytest.mark.parametrize("route", ["pgd", "flow"])
def test_dynamics_reject_bad_starts(start, name, route):
    if route == "pgd":
        call = lambda: overlap_pgd(Problem(d=100, lam=0.5), start, alpha=1e-3, n_steps=3)
    else:
        call = lambda: overlap_flow(Problem(d=100, lam=0.5), start, t_end=1.0)
    _raises_naming(name, call)


def test_overlap_flow_accepts_a_tuple_like_overlap_pgd():
    as_tuple = overlap_flow(Problem(d=100, lam=0.5), (0.3, 0.2, 0.1, -0.2, 0.15), t_end=0.5)
    as_overlaps = overlap_flow(Problem(d=100, lam=0.5), GENERIC, t_end=0.5)
    np.testing.assert_array_equal(as_tuple.y, as_overlaps.y)


@pytest.mark.parametrize("kwargs, name", [
    (dict(n_steps=True), "n_steps"), (dict(log_every=True), "log_every"), (dict(alpha="1e-3"), "alpha"),
    (dict(d=np.array([100, 100])), "d"), (dict(alpha=np.full(5, 1e-3)), "alpha"),
    (dict(gamma=np.ones((3, 1))), "gamma"), (dict(d=True), "d"),
])
def test_overlap_pgd_rejects_bad_arguments(kwargs, name):
    start = sample_initial_overlaps(100, 3, np.random.default_rng(0))
    args = dict(d=100, lam=0.5, alpha=1e-3, n_steps=3) | kwargs
    fields = {k: args.pop(k) for k in ("d", "lam", "gamma") if k in args}
    _raises_naming(name, lambda: overlap_pgd(Problem(**fields), start, **args))


@pytest.mark.parametrize("kwargs, name", [
    (dict(batch_size=True), "batch_size"), (dict(n_steps=False), "n_steps"),
    (dict(log_every=2.0), "log_every"), (dict(alpha="0.1"), "alpha"),
])
def test_sgd_rejects_bools_and_strings(kwargs, name):
    args = dict(alpha=1e-3, n_steps=2, batch_size=4, rng=np.random.default_rng(0)) | kwargs
    _raises_naming(name, lambda: online_sgd_reduced(Problem(d=100, lam=0.5), GENERIC, **args))


@pytest.mark.parametrize("kwargs, name", [
    (dict(t_end=True), "t_end"), (dict(t_end="1"), "t_end"), (dict(lam="0.5"), "lam"),
    (dict(lam=True), "lam"),
])
def test_flows_reject_bools_and_strings(kwargs, name):
    args = dict(d=100, lam=0.5, t_end=1.0) | kwargs
    fields = {k: args.pop(k) for k in ("d", "lam")}
    _raises_naming(name, lambda: overlap_flow(Problem(**fields), GENERIC, **args))
    _raises_naming(name, lambda: manifold_flow(Problem(**fields), 0.3, 0.2, **args))
