"""The five partial derivatives of the closed-form risk, arranged for a fast inner loop (docs/math/risk.md#closed-form-population-risk).

Same formula as ``theory.risk.risk_grad_from_arrays`` (its sibling, checked against it to a few
ulps in the tests), regrouped so that everything depending only on (d, L, gamma, lambda) is
computed once per step for all runs (``lambda_constants``, vectorised over a block of steps), and
the per-step work is a short sequence of ufunc calls on arrays of runs. Exact for every finite d.
With s = sqrt(d/2), g = lambda gamma, c2 = sqrt(1 + 2 g^2), c1 = sqrt(1 + 4 g^2) c2, A = lambda s kappa,
a = A/c2, u = A/c1 = a c2/c1, d1 = erf'(a), f1 = erf'(u), and z0..z3 = zeta and its first three
t-derivatives at (A, g) (docs/math/risk.md#derivatives-of-zeta):

    z1 = (2/c2) erf(u) d1,
    z2 = (2/(c1 c2)) f1 d1 - (4/c2^2) a erf(u) d1,
    z3 = -(4/c1^3 + 8/(c1 c2^2)) a f1 d1 + (2/c2^3) (4 a^2 - 2) erf(u) d1

(the t-derivatives of ``theory.zeta`` with erf'' = -2x erf', erf''' = (4x^2 - 2) erf').
zeta(A, g) itself uses the second closed form of ``theory.zeta`` for every g,

    zeta(A, g) = erf(a)^2 + (4/pi) int_c^1 exp(-a^2 (1 + x^2)) / (1 + x^2) dx,   c = 1/sqrt(1 + 4 g^2),

with the same 20-node Gauss-Legendre rule (its nodes depend only on g, so they are precomputed
with the other constants). ``theory.zeta`` uses this form for g < 1/2 and Owen's T for g >= 1/2;
the two agree to ~1.5e-15 relative over |t| <= 1e3, 1e-4 <= g <= 1e2 (checked in the tests).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.special import erf

from theory.special import gate_correlation
from theory.zeta import zeta_tt

__all__ = ["CONSTANT_NAMES", "LambdaConstants", "lambda_constants", "partials", "zeta_lean"]

CONSTANT_NAMES = ("lam_s", "inv_c1", "inv_c2", "z1_c", "z2_a", "z2_b", "z3_a", "z3_b",
                  "e1_nu", "e1_et", "e1_er", "e2_tt", "e2_0", "e2_tr", "e2_rr", "n_tr", "n_rr",
                  "r_nu", "t_tz", "t_rz", "t_re", "t_ed", "e_td", "e_rd", "r_z2", "r_d1", "r_tz",
                  "r_te", "r_ed", "noise_rr")

_LOG_TWO_OVER_SQRT_PI = np.log(2.0 / np.sqrt(np.pi))
_GL_NODES, _GL_WEIGHTS = np.polynomial.legendre.leggauss(20)
# numpy >= 2 has the (faster) vecdot ufunc; einsum gives the same contraction on numpy 1.x.
_vecdot = getattr(np, "vecdot", None) or (lambda x, y: np.einsum("...j,...j->...", x, y))


class LambdaConstants(NamedTuple):
    """``scalars``: shape (len(CONSTANT_NAMES), *shape); ``gl_x2`` (1 + x_j^2 at the quadrature
    nodes) and ``gl_w`` ((4/pi) (1-c)/2 w_j / (1 + x_j^2)): shape (*shape, 20)."""

    scalars: np.ndarray
    gl_x2: np.ndarray
    gl_w: np.ndarray

    def at(self, index):
        """The constants of one step: ``index`` into the leading axis of ``shape``."""
        return LambdaConstants(self.scalars[:, index], self.gl_x2[index], self.gl_w[index])


def lambda_constants(d, L, gamma, lam) -> LambdaConstants:
    """The per-(step, run) constants of ``partials``, scalars stacked on a new first axis
    (CONSTANT_NAMES). Arguments broadcast (e.g. lam of shape (n_steps, n_runs), the others (n_runs,)).

    Each constant collects the factors of one term of the formula in ``partials``, with
    p = lambda gamma^2 s / c2, q = lambda^2 gamma^4 / c2^2, w = lambda gamma^2 s, m = lambda^2 gamma^4,
    r = lambda gamma^2 / c2, nc = (L-1) C_lambda, da = lambda s / c2 (= d a / d kappa) and
    noise_rr = 2 (L-1) lambda^2 zeta''(0, lambda) + 2 (L-1)(L-2) C_lambda^2.
    """
    d, L, gamma, lam = np.broadcast_arrays(*(np.asarray(x, dtype=float) for x in (d, L, gamma, lam)))
    s = np.sqrt(d / 2.0)
    g2 = gamma * gamma
    g = lam * gamma
    c2 = np.sqrt(1.0 + 2.0 * g * g)
    c1 = np.sqrt(1.0 + 4.0 * g * g) * c2
    C = gate_correlation(lam)
    lam_s = lam * s
    da = lam_s / c2
    p, q, w, m, r = lam * g2 * s / c2, (lam * g2 / c2) ** 2, lam * g2 * s, (lam * g2) ** 2, lam * g2 / c2
    nc = (L - 1) * C
    noise_rr = 2.0 * (L - 1) * lam * lam * zeta_tt(0.0, lam) + 2.0 * (L - 1) * (L - 2) * C * C
    scalars = np.stack([
        lam_s, 1.0 / c1, 1.0 / c2,
        2.0 / c2, 2.0 / (c1 * c2), -4.0 / c2**2, -4.0 / c1**3 - 8.0 / (c1 * c2**2), 2.0 / c2**3,
        -2.0 * g2 * da, -2.0 * p * da, -2.0 * q * da,                      # -2 dE1/dkappa
        lam_s * s * s, lam_s * g2, 2.0 * lam_s * w, lam_s * m,             # dE2/dkappa
        2.0 * nc * da * s, 2.0 * nc * da * r,                              # dN/dkappa
        -2.0 * g2,                                                         # R_nu
        2.0 * s * s, 2.0 * w, 2.0 * nc * s, -2.0 * p,                      # R_theta
        -2.0 * p, -2.0 * q,                                                # R_eta
        2.0 * m, 4.0 * nc * r, 2.0 * w, 2.0 * nc * s, -2.0 * q, noise_rr,  # R_rho
    ])
    root = np.sqrt(1.0 + 4.0 * g * g)
    half = (2.0 * g * g / (root * (root + 1.0)))[..., None]  # (1 - c)/2 without cancellation
    x = 1.0 - half * (1.0 - _GL_NODES)
    gl_x2 = 1.0 + x * x
    return LambdaConstants(scalars, gl_x2, (4.0 / np.pi) * half * _GL_WEIGHTS / gl_x2)


def zeta_lean(a2, ea, gl_x2, gl_w):
    """zeta(A, g) from a2 = (A/c2)^2 and ea = erf(A/c2) (module docstring); ``gl_*`` from
    ``lambda_constants`` (broadcasting with a2 along all but the last axis, of length 20). The exponentials
    are taken in place: one (n, 20) temporary instead of two (the same operations, the same bits; at 4000
    rows the call costs a quarter of the CPU time, large temporaries being fresh pages each call)."""
    terms = np.multiply(a2[..., None], -gl_x2)
    np.exp(terms, out=terms)
    return ea * ea + _vecdot(terms, gl_w)


def partials(consts, kappa, nu, theta, eta, rho):
    """(R_kappa, R_nu, R_theta, R_eta, R_rho) at the given overlaps; ``consts`` is the slice of
    ``lambda_constants`` for one step (``LambdaConstants.at``), arrays of shape (n_runs,).

    With d2 = erf''(a) = -2a d1 and d3 = erf'''(a) = (4a^2 - 2) d1, the formula of ``theory.risk``:
        R_kappa = -2 da (g2 nu d1 + p eta theta d2 + q eta rho d3)
                  + lambda s ((s^2 theta^2 + g2) z1 + 2 w theta rho z2 + m rho^2 z3)
                  + 2 nc da (s theta rho d1 + r rho^2 d2),
        R_nu = -2 g2 erf(a),
        R_theta = 2 s^2 theta z0 + 2 w rho z1 + 2 nc s rho erf(a) - 2 p eta d1,
        R_eta = -2 p theta d1 - 2 q rho d2,
        R_rho = 2 m rho z2 + 4 nc r rho d1 + noise_rr rho + 2 w theta z1 + 2 nc s theta erf(a)
                - 2 q eta d2.
    """
    (lam_s, inv_c1, inv_c2, z1_c, z2_a, z2_b, z3_a, z3_b, e1_nu, e1_et, e1_er, e2_tt, e2_0, e2_tr,
     e2_rr, n_tr, n_rr, r_nu_c, t_tz, t_rz, t_re, t_ed, e_td, e_rd, r_z2, r_d1, r_tz, r_te, r_ed,
     noise_rr) = consts.scalars
    A = lam_s * kappa
    a = A * inv_c2
    u = A * inv_c1
    a2 = a * a
    ea = erf(a)
    eud1 = erf(u)
    d1 = np.exp(_LOG_TWO_OVER_SQRT_PI - a2)
    f1d1 = np.exp(2.0 * _LOG_TWO_OVER_SQRT_PI - a2 - u * u)
    eud1 *= d1
    d2 = -2.0 * a * d1
    q4 = 4.0 * a2 - 2.0
    z1 = z1_c * eud1
    z2 = z2_a * f1d1 + z2_b * (a * eud1)
    z3 = z3_a * (a * f1d1) + z3_b * (q4 * eud1)
    z0 = zeta_lean(a2, ea, consts.gl_x2, consts.gl_w)
    theta_rho = theta * rho
    rho_rho = rho * rho
    r_kappa = (e1_nu * (nu * d1) + e1_et * (eta * theta * d2) + e1_er * (eta * rho * q4 * d1)
               + (e2_tt * (theta * theta) + e2_0) * z1 + e2_tr * (theta_rho * z2)
               + e2_rr * (rho_rho * z3) + n_tr * (theta_rho * d1) + n_rr * (rho_rho * d2))
    r_nu = r_nu_c * ea
    r_theta = t_tz * (theta * z0) + rho * (t_rz * z1 + t_re * ea) + t_ed * (eta * d1)
    r_eta = e_td * (theta * d1) + e_rd * (rho * d2)
    r_rho = (rho * (r_z2 * z2 + r_d1 * d1 + noise_rr) + theta * (r_tz * z1 + r_te * ea)
             + r_ed * (eta * d2))
    return r_kappa, r_nu, r_theta, r_eta, r_rho
