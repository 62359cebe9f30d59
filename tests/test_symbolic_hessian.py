"""Riemannian Hessian at the oracle: symbolic derivation == theory.stability == finite differences in R^d."""

import numpy as np
import pytest
import sympy as sp
from scipy.optimize import brentq

from numerics.dynamics.hessian_fd import oracle_spectrum_fd, tangent_frame
from theory.parameters import Problem
from theory.stability import critical_lambda, oracle_hessian
from theory.symbolic.functions import roundoff_scale
from theory.symbolic.hessian import critical_lambda_limit, oracle_hessian_block_symbolic, oracle_hessian_expressions
from theory.symbolic.risk_expr import risk_expression, risk_symbols
from theory.parameters import Task

EPS = np.finfo(float).eps


def test_hessian_decouples_into_block_and_u_directions():
    h = oracle_hessian_expressions()
    assert h.decoupled


def test_stability_module_matches_symbolic_block(rng):
    n = 200
    d = rng.integers(4, 5000, n).astype(float)
    L = rng.integers(1, 60, n).astype(float)
    gamma = np.exp(rng.uniform(np.log(0.1), np.log(3), n))
    lam = np.exp(rng.uniform(np.log(1e-3), np.log(5), n))
    sym = oracle_hessian_block_symbolic(d, L, gamma, 0.0, lam)
    hand = oracle_hessian(Problem(d=d, L=L, gamma=gamma, lam=lam))
    h = oracle_hessian_expressions()
    S = risk_symbols()
    got = (hand.h_xx, hand.h_xy, hand.h_yy, hand.r_phi, hand.r_psi)
    exprs = (h.block[0, 0], h.block[0, 1], h.block[1, 1], h.u_eigenvalues[0], h.u_eigenvalues[1])
    a2 = lam**2 * d / 2  # exp(-a^2): argument errors amplified by a^2
    for g, s, e in zip(got, sym, exprs):
        tol = 128 * EPS * (1 + a2) * roundoff_scale(S.params, e)(d, L, gamma, 0.0, lam)
        assert np.all(np.abs(g - s) <= tol)


def _fd_spectrum(d, L, gamma, lam, seed):
    """numerics.dynamics.hessian_fd's extrapolated spectrum, roundoff scale from the symbolic risk's terms."""
    S = risk_symbols()
    scale = roundoff_scale(S.all, risk_expression())(float(d), float(L), gamma, 0.0, lam, 1.0, 1.0, 0.0, 0.0, 0.0)
    fd = oracle_spectrum_fd(d, L, gamma, lam, tangent_frame(d, np.random.default_rng(seed)), scale=scale)
    return fd.eigenvalues, fd.error_bound


@pytest.mark.parametrize("lam", [0.3, 1.0, 1.6])
def test_closed_form_spectrum_matches_finite_differences_in_dimension_d(lam):
    d, L, gamma = 8, 3, 0.8
    hess = oracle_hessian(Problem(d=d, L=L, gamma=gamma, lam=lam))
    closed = np.sort(np.concatenate([list(hess.block_eigenvalues), [hess.r_phi] * (d - 2), [hess.r_psi] * (d - 2)]))
    fd, err = _fd_spectrum(d, L, gamma, lam, seed=1)
    assert np.all(np.abs(fd - closed) <= err)
    assert err < 1e-4 * np.max(np.abs(closed))  # the check has teeth


def test_critical_lambda_matches_finite_difference_hessian():
    d, L, gamma = 8, 3, 0.8
    crit = critical_lambda(Task(d=d, L=L, gamma=gamma))
    assert crit.found
    lam_c = crit.lam_c
    fd_min = lambda lam: _fd_spectrum(d, L, gamma, lam, seed=2)[0][0]
    lam_fd = brentq(fd_min, 0.9 * lam_c, 1.1 * lam_c, xtol=1e-12)
    # |lam_fd - lam_c| <= (eigenvalue error bound) / |d mu/d lam| at lam_c, mu = smallest eigenvalue.
    mu = lambda lam: oracle_hessian(Problem(d=d, L=L, gamma=gamma, lam=lam)).block_eigenvalues[0]
    slope = (mu(lam_c * (1 + 1e-6)) - mu(lam_c * (1 - 1e-6))) / (2e-6 * lam_c)
    err = _fd_spectrum(d, L, gamma, lam_c, seed=2)[1]
    assert abs(lam_fd - lam_c) <= err / abs(slope) + 2 * crit.xtol + 1e-12
    # Below lam_c the oracle is a strict local minimum, above it a saddle (FD confirms both sides).
    assert fd_min(0.8 * lam_c) > 0 > fd_min(1.2 * lam_c)


def test_critical_lambda_limit_is_sqrt3_over_2():
    lim = critical_lambda_limit()
    S = risk_symbols()
    assert lim.lam_c == (sp.sqrt(3) / 2,)
    assert lim.affine_in_d
    assert not lim.leading.has(S.gamma)
    assert sp.simplify(lim.first_correction[0] - 4 * sp.sqrt(3) * S.gamma**2 * (S.L - 1) / 3) == 0


def test_critical_lambda_converges_at_rate_one_over_d():
    # lam_c(d) - sqrt(3)/2 ~ c1/d: the fitted log-log slope must be -1, within the slope's
    # variation over the range (difference of the slopes fitted on the two halves), since the
    # O(1/d^2) correction is what makes the slope vary.
    L, gamma = 10, np.sqrt(0.5)
    ds = np.array([1e3, 3e3, 1e4, 3e4, 1e5, 3e5, 1e6]).astype(int)
    gap = np.array([critical_lambda(Task(d=int(d), L=L, gamma=gamma), lam_min=0.5, lam_max=2.0, n_grid=50).lam_c
                    for d in ds]) - np.sqrt(3) / 2
    x, y = np.log(ds), np.log(gap)
    slope = np.polyfit(x, y, 1)[0]
    tol = abs(np.polyfit(x[:4], y[:4], 1)[0] - np.polyfit(x[3:], y[3:], 1)[0])
    assert abs(slope + 1) <= tol
    # And the coefficient: d * gap -> c1 = 4 sqrt(3) gamma^2 (L-1)/3 with an O(1/d) relative
    # correction, so the relative error at d_max is at most that at d_min scaled by d_min/d_max.
    c1 = 4 * np.sqrt(3) * gamma**2 * (L - 1) / 3
    rel = np.abs(ds * gap / c1 - 1)
    assert rel[-1] <= 2 * rel[0] * ds[0] / ds[-1]


def test_critical_lambda_rejects_bad_input():
    with pytest.raises(ValueError, match="lam_min"):
        critical_lambda(Task(d=100, L=10, gamma=0.7), lam_min=2.0, lam_max=1.0)
    with pytest.raises(ValueError, match="d="):
        critical_lambda(Task(d=0, L=10, gamma=0.7))
    with pytest.raises(ValueError, match="n_grid"):
        critical_lambda(Task(d=100, L=10, gamma=0.7), n_grid=1)


def test_critical_lambda_not_found_reports_it():
    # d = 10, L = 100: det H_block stays > 0 on [1e-3, 1e2] (no crossing), reported as not found.
    crit = critical_lambda(Task(d=10, L=100, gamma=np.sqrt(0.5)))
    assert not crit.found and crit.lam_c is None
