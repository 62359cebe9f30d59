"""The compiled Monte-Carlo loss (numerics/kernels/montecarlo_step.py) against the NumPy route.

Same draws (``numerics.montecarlo.task.sequence_draws``); each loss (Y - T)^2 is computed by the same
operations except the order of the sums over r coordinates and L tokens and the erf of the C
library: each of Y and T is off by at most ~(r + L) ulps of the sum of the magnitudes of its
terms, S = |Y| + sum_l |<X_l, v>|, so the loss by 2 (r + L) eps S |Y - T| + O(eps^2), and so is
the sample mean (a mean of such terms); the standard error likewise (docs/math/kernels.md#monte-carlo).
"""

import numpy as np
import pytest

from numerics.montecarlo import population_risk_mc
from theory.parameters import Overlaps, Problem

EPS = np.finfo(float).eps
GAMMA = np.sqrt(0.5)
POINTS = [Overlaps(kappa=0.3, nu=0.6, theta=0.1, eta=-0.1, rho=0.3 * 0.1 - 0.1 * 0.6),  # risk_routes
          Overlaps(kappa=0.95, nu=0.6),                                                 # on M
          Overlaps(kappa=1.0, nu=1.0),                                                  # oracle
          Overlaps(kappa=0.0, nu=0.0, theta=0.0, eta=0.0, rho=1.0)]                     # k = v


@pytest.mark.parametrize("point", POINTS)
@pytest.mark.parametrize("d, L, eps, lam, J", [(400, 10, 0.1, 0.1, None), (400, 10, 0.0, 3.0, 2),
                                               (4, 3, 0.5, 1.0, None), (80, 10, 0.1, 2.0, None)])
def test_span_route_equals_reference(point, d, L, eps, lam, J):
    problem = Problem(d=d, L=L, gamma=GAMMA, eps=eps, lam=lam)
    est = [population_risk_mc(problem, point, n=20_000, rng=np.random.default_rng(4), J=J,
                              chunk=7_000, engine=e) for e in ("numpy", "kernel")]
    # S |Y - T| <= (|Y| + |T| + sum |q|)^2 <= 4 (mean loss + ...) : bounded by 8 (d + L^2) here
    # (|Y| <= s + 5 gamma, |q| <= 5 at 5 sd); tol = 2 (r + L) eps * 8 (d + L^2) per loss.
    tol = 2 * (4 + L) * EPS * 8 * (d + L * L)
    assert abs(est[0].mean - est[1].mean) <= tol
    assert abs(est[0].stderr - est[1].stderr) <= tol
    assert est[0].n == est[1].n


def test_full_dimensional_route_equals_reference():
    problem = Problem(d=30, L=5, gamma=GAMMA, eps=0.1, lam=0.7)
    est = [population_risk_mc(problem, POINTS[0], n=3_000, rng=np.random.default_rng(5),
                              full_dim=True, engine=e) for e in ("numpy", "kernel")]
    tol = 2 * (30 + 5) * EPS * 8 * (30 + 25)
    assert abs(est[0].mean - est[1].mean) <= tol


def test_bad_engine():
    problem = Problem(d=30, L=5, gamma=GAMMA, eps=0.1, lam=0.7)
    with pytest.raises(ValueError, match="engine='gpu'"):
        population_risk_mc(problem, POINTS[0], n=10, rng=np.random.default_rng(5), engine="gpu")


@pytest.mark.parametrize("eps, J, full_dim", [(0.1, None, False), (0.0, 1, False), (0.1, None, True)])
def test_kernel_draws_on_sfc64_are_the_arrays_numbers(eps, J, full_dim):
    """On an SFC64 generator the kernel draws the normals itself (``numerics.kernels.sfc64``): the same losses,
    bit for bit, as from the arrays of ``sequence_draws`` on a twin generator, and the generator left where
    they leave it; batches (chunk) chain through the written-back state."""
    from numerics.kernels.montecarlo_step import span_risk_kernel
    from numerics.kernels.sfc64 import on_sfc64_state
    from numerics.montecarlo.geometry import vectors_from_overlaps
    from numerics.montecarlo.task import sequence_draws, sequence_locations

    d, L, n = (30, 5, 3_000) if full_dim else (4, 7, 5_000)
    k, v, k_star, v_star = vectors_from_overlaps(POINTS[0], d, np.random.default_rng(1))
    mine, twin = (np.random.Generator(np.random.SFC64(8)) for _ in range(2))
    args = (eps, np.sqrt(d / 2), GAMMA, 0.7, k, v, k_star, v_star)
    for m in (n, 17):
        drawn, loss = np.empty(m), np.empty(m)
        J_ = sequence_locations(L, k_star, v_star, m, mine, J)
        on_sfc64_state(mine, lambda state: span_risk_kernel(J_, np.empty((0, L, 0)), np.empty(0), *args, drawn, state))
        J_, Z, xi = sequence_draws(eps, L, k_star, v_star, m, twin, J)
        span_risk_kernel(J_, Z, np.empty(0) if xi is None else xi, *args, loss, np.empty(0, dtype=np.uint64))
        np.testing.assert_array_equal(drawn, loss)
        assert str(mine.bit_generator.state) == str(twin.bit_generator.state)
    problem = Problem(d=d, L=L, gamma=GAMMA, eps=eps, lam=0.7)
    est = [population_risk_mc(problem, POINTS[0], n=4_000, rng=np.random.Generator(np.random.SFC64(2)), J=J,
                              chunk=1_500, full_dim=full_dim, engine=e) for e in ("numpy", "kernel")]
    tol = 2 * (d + L) * EPS * 8 * (d + L * L)  # as test_span_route_equals_reference
    assert abs(est[0].mean - est[1].mean) <= tol


@pytest.mark.parametrize("shape", [(1000,), (40, 7, 3), (0,)])
def test_standard_normals_are_numpys(shape):
    """``numerics.montecarlo.task.standard_normals``: ``Generator.standard_normal``'s numbers and end state, on SFC64
    (compiled draws) and on PCG64 (NumPy's), with a buffered 32-bit half (from ``integers``) kept."""
    from numerics.montecarlo.task import standard_normals

    for make in (lambda: np.random.Generator(np.random.SFC64(3)), lambda: np.random.default_rng(3)):
        mine, twin = make(), make()
        mine.integers(0, 5, size=3), twin.integers(0, 5, size=3)
        np.testing.assert_array_equal(standard_normals(mine, shape), twin.standard_normal(shape))
        assert str(mine.bit_generator.state) == str(twin.bit_generator.state)
        np.testing.assert_array_equal(mine.integers(0, 5, size=3), twin.integers(0, 5, size=3))
