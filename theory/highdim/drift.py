"""The effective drift of online SGD at step alpha = c/d (docs/math/highdim.md#the-effective-ode).

Projected online SGD with minibatch B (``numerics.online_sgd_reduced``): g = (1/B) sum_b h^(b),
k~ = k - alpha P_k g_k, k+ = k~ / |k~|, |k~|^2 = 1 + alpha^2 N_k, N_k = |P_k g_k|^2 (v likewise).
Expanding the new overlaps to second order in alpha and averaging over the minibatch, the mean
increment per step is alpha F(x) + alpha^2 D(x) + O(alpha^3 E|g|^3), where F is the population
flow (docs/math/dynamics.md#overlap-ode) and, with e* in {k*, v*},

    D_kappa = -E[N_k] kappa / 2,   D_eta = -E[N_k] eta / 2,   D_theta = -E[N_v] theta / 2,
    D_nu = -E[N_v] nu / 2,         D_rho = E[M] - rho (E[N_k] + E[N_v]) / 2,   M = <P_k g_k, P_v g_v>,

E[N_k] = |P_k G_k|^2 + (S_kk - |P_k G_k|^2) / B (the minibatch mean of B independent per-sample
gradients), E[M] likewise with S_kv (``theory.highdim.gradient_moments``). In flow time
tau = alpha n the effective ODE is dx/dtau = F(x) + alpha D(x). S_kk, S_vv grow like d (their
trace part 4 (d - 4) sum_l s_l^2 E[r^2 w_l^2]), so at alpha = c/d the correction alpha D is of
order c: it survives d -> infinity. Symbolic sibling: ``theory.symbolic.highdim``.
"""

from __future__ import annotations

import numpy as np

from .moments import GradientMoments, gradient_moments
from .token_moments import frame_coordinates

__all__ = ["population_drift", "noise_scalars", "second_order_drift", "effective_drift"]


def population_drift(moments: GradientMoments, overlaps) -> np.ndarray:
    """F: the gradient flow's velocity of (kappa, nu, theta, eta, rho), from the Riemannian
    population gradients in the frame (k* and v* are its first two axes)."""
    k, v = frame_coordinates(*overlaps)
    gk, gv = moments.grad_k, moments.grad_v
    return -np.array([gk[0], gv[1], gv[0], gk[1], gk[:4] @ v + k @ gv[:4]])


def noise_scalars(moments: GradientMoments, batch_size) -> np.ndarray:
    """(E[N_k], E[N_v], E[M]) of the module docstring, for minibatch size ``batch_size``."""
    gk, gv = moments.grad_k, moments.grad_v
    return np.array([gk @ gk + (moments.s_kk - gk @ gk) / batch_size, gv @ gv + (moments.s_vv - gv @ gv) / batch_size,
                     gk @ gv + (moments.s_kv - gk @ gv) / batch_size])


def drift_from_scalars(scalars, overlaps) -> np.ndarray:
    """D of the module docstring from (E[N_k], E[N_v], E[M]) (``noise_scalars``); ``scalars`` and the
    overlaps may carry a leading axis of states, (n, 3) and (5, n) (then D is (5, n))."""
    kappa, nu, theta, eta, rho = overlaps
    n_k, n_v, m = np.moveaxis(np.asarray(scalars), -1, 0)
    return np.array([-0.5 * n_k * kappa, -0.5 * n_v * nu, -0.5 * n_v * theta, -0.5 * n_k * eta,
                     m - 0.5 * rho * (n_k + n_v)])


def second_order_drift(moments: GradientMoments, overlaps, batch_size) -> np.ndarray:
    """D of the module docstring, for minibatch size ``batch_size``."""
    return drift_from_scalars(noise_scalars(moments, batch_size), overlaps)


def effective_drift(problem, overlaps, *, alpha, batch_size, step=0.2) -> np.ndarray:
    """F(x) + alpha D(x) (module docstring) of the ``theory.Problem`` ``problem`` (scalar fields,
    d >= 4) at the overlaps x = (kappa, nu, theta, eta, rho); alpha = 0 gives the population flow.
    Holds for B >= 1."""
    overlaps = tuple(float(x) for x in overlaps)
    m = gradient_moments(problem, overlaps, step=step, check=False)
    out = population_drift(m, overlaps)
    if alpha != 0:
        out = out + alpha * second_order_drift(m, overlaps, batch_size)
    return out
