"""Where the aligned branch of the drift of one run ends at step c/d, lambda = lambda_bar / s, d -> infinity
(docs/math/highdim.md#the-end-of-the-branch-at-c-of-order-sqrt-d).

At c = C B sqrt(d) the branch's end is a pitchfork at the saddle (kappa, nu) = (0, 0) of M. There every gate is
linear, u_l = a p_l with a = 2 lambda_bar / (sqrt(pi) s), the residual is the target (E r^2 -> R = gamma^2 + eps^2),
and the population flow's Jacobian has the same 2 x 2 block [[-m, b], [b, 0]] on M in (kappa, nu) and off M in
(theta, eta), with

    m = 8 lambda_bar^2 gamma^2 / pi,    b = 4 lambda_bar gamma^2 / sqrt(pi).

The fast mode is the (theta, eta) mode of rate mu = -b phi, phi = (t + sqrt(t^2 + 4)) / 2, t = m / b, whose unit
eigenvector has w_theta^2 = phi^2 / (phi^2 + 1). The drift of one run's Jacobian on M at the saddle is, to leading
order, [[-(8 lambda_bar^2 / pi) V, b], [b, (c / (d B)) (8 lambda_bar^2 / pi) R (gamma^2 w_theta^4 - Lambda_0)]] with
V = (c / B) w_theta^4 (4 lambda_bar^2 / pi) gamma^2 R / |mu| and Lambda_0 = gamma^2 + 2 gamma^4 + 2 (L - 1); its
determinant vanishes at

    C^2 = pi^(3/2) gamma^4 phi / (4 lambda_bar^3 R^2 w_theta^4 Lambda),    Lambda = Lambda_0 - gamma^2 w_theta^4,

below which the saddle is a saddle on M (the branch exists) and above which it attracts. The finite-d pitchfork
step c_pf(d) / (B sqrt(d)) converges to C like d^(-1/2) (``numerics.highdim.saddle_pitchfork_step``). Symbolic
sibling: ``theory.symbolic.branch_end_symbolic``.
"""

from __future__ import annotations

import dataclasses
import math

from ..checks import check_integer, check_nonnegative_real, check_positive_real
from ..parameters import PAPER_GAMMA, PAPER_L

__all__ = ["BranchEnd", "branch_end_constant"]


@dataclasses.dataclass(frozen=True)
class BranchEnd:
    """``constant`` = C (module docstring): the branch ends at c = C B sqrt(d) as d -> infinity; ``fast_rate`` = mu
    (the fast mode's rate at the saddle, d-free); ``theta_weight`` = w_theta^2; ``m``, ``b``: the Jacobian block;
    ``Lambda``: the noise factor of nu's rate."""

    constant: float
    fast_rate: float
    theta_weight: float
    m: float
    b: float
    Lambda: float


def branch_end_constant(*, lam_bar, L=PAPER_L, gamma=PAPER_GAMMA, eps=0.0) -> BranchEnd:
    """C of the module docstring for lambda = ``lam_bar`` / s (lam_bar > 0), L >= 1 tokens, gamma > 0, eps >= 0
    (ValueError naming a bad argument). Independent of the batch size: c_pf / B is."""
    lam_bar, gamma = check_positive_real("lam_bar", lam_bar), check_positive_real("gamma", gamma)
    eps = check_nonnegative_real("eps", eps)
    L = check_integer("L", L, minimum=1)
    g2 = gamma * gamma
    risk = g2 + eps * eps
    m = 8.0 * lam_bar**2 * g2 / math.pi
    b = 4.0 * lam_bar * g2 / math.sqrt(math.pi)
    t = m / b
    phi = 0.5 * (t + math.sqrt(t * t + 4.0))
    w2 = phi * phi / (phi * phi + 1.0)
    Lambda = g2 + 2.0 * g2 * g2 + 2.0 * (L - 1) - g2 * w2 * w2
    C2 = math.pi**1.5 * g2 * g2 * phi / (4.0 * lam_bar**3 * risk * risk * w2 * w2 * Lambda)
    return BranchEnd(math.sqrt(C2), -b * phi, w2, m, b, Lambda)
