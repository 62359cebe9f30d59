"""Second moments of the per-sample gradient, by low-dimensional quadrature
(docs/math/highdim.md#second-moments-of-the-per-sample-gradient).

One sample (X, Y) of the task, r = T(X) - Y, per-sample Euclidean gradients of (Y - T)^2

    h_k = 2 r sum_l w_l X_l,  w_l = lambda erf'(lambda p_l) q_l,    h_v = 2 r sum_l u_l X_l,  u_l = erf(lambda p_l),

p_l = <X_l, k>, q_l = <X_l, v>. In a frame F = span(k*, v*, f3, f4) containing k, v, k*, v*, each
token is X_l = X_l^F + X_l^perp with X_l^perp ~ N(0, s_l^2 I_{d-4}) independent of everything else
(s_0 = gamma for the informative token l = 0, else 1). So, with a_l = w_l (X_l^F - p_l k) and
b_l = u_l (X_l^F - q_l v) the in-frame parts of the projected gradients P_k h_k, P_v h_v,

    S_kk = E|P_k h_k|^2 = 4 E[r^2 |sum a_l|^2]      + 4 (d - 4) sum_l s_l^2 E[r^2 w_l^2],
    S_vv = E|P_v h_v|^2 = 4 E[r^2 |sum b_l|^2]      + 4 (d - 4) sum_l s_l^2 E[r^2 u_l^2],
    S_kv = E<P_k h_k, P_v h_v> = 4 E[r^2 <sum a_l, sum b_l>] + 4 (d - 4) sum_l s_l^2 E[r^2 w_l u_l],

and the Riemannian population gradients are P_k G_k = 2 E[r sum a_l], P_v G_v = 2 E[r sum b_l].
The tokens are independent and r = sum_l A_l - xi (A_l = u_l q_l, minus <X_0, v*> for l = 0), so
every expectation is a sum of products of one-token moments E[A^j F] (j = 0, 1, 2;
``theory.highdim.token_moments``), combined here. Holds at every finite d >= 4 and every feasible
overlaps. Siblings: ``numerics.highdim.gradient_moments_mc`` (Monte Carlo with explicit d-vectors)
and, for the first moments, ``theory.population_risk_grad`` (closed form).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..parameters import Task
from .token_moments import frame_coordinates, token_moments

__all__ = ["GradientMoments", "gradient_moments", "problem_scalars", "task_scalars"]

_TRACE_BLOCKS = ((slice(0, 4), slice(0, 4)), (slice(4, 8), slice(4, 8)), (slice(0, 4), slice(4, 8)))  # kk, vv, kv


@dataclasses.dataclass(frozen=True)
class GradientMoments:
    """Per-sample gradient moments at one state, in the frame (k*, v*, f3, f4).

    ``grad_k``, ``grad_v``: P_k G_k and P_v G_v (4,); ``s_kk``, ``s_vv``, ``s_kv``: the second
    moments of the module docstring; ``risk``: E r^2 (the population risk, a check);
    ``frame_second``: E[y y^T] (8, 8) for y = the in-frame parts of (P_k h_k, P_v h_v) (the traces
    of its blocks are the in-frame parts of s_kk, s_vv, s_kv);
    ``abserr``: the largest change of any of these when the quadrature's step is halved
    (the trapezoid rule converges faster than any power of the step: docs/math/highdim.md#quadrature)."""

    grad_k: np.ndarray
    grad_v: np.ndarray
    s_kk: float
    s_vv: float
    s_kv: float
    risk: float
    abserr: float
    frame_second: np.ndarray | None = None

    def as_vector(self) -> np.ndarray:
        return np.concatenate([self.grad_k, self.grad_v, [self.s_kk, self.s_vv, self.s_kv, self.risk]])


def _combine(inf, noise, L, eps2, trace):
    """Assemble the sums over tokens (module docstring) from the one-token moments of the
    informative token ``inf`` and of each of the n = L - 1 identical noise tokens ``noise``.
    U_S = sum_{j not in S} A_j - xi has mean and second moment from the token means and variances;
    ``trace`` = d - 4. In the 8 coordinates f = (a, b): one token l contributes
    4 E[A_l^2 f f^T] + 8 E[A_l f f^T] E U_l + 4 E[f f^T] E U_l^2, a pair l != m contributes
    4 sum_ij E[A_l^i f_l] K_ij E[A_m^j f_m]^T with K = [[E U^2, 2 E U, 1], [2 E U, 2, 0], [1, 0, 0]]
    (U = U_{l,m})."""
    n = L - 1
    mu_i, mu_n = inf["A"][1], noise["A"][1]
    var_i, var_n = inf["A"][2] - mu_i ** 2, noise["A"][2] - mu_n ** 2
    total_mu, total_var = mu_i + n * mu_n, var_i + n * var_n + eps2
    mu, var = {"I": mu_i, "N": mu_n}, {"I": var_i, "N": var_n}
    tok = {"I": inf, "N": noise}

    def rest(*excluded):  # mean and second moment of U_S, S the excluded tokens (docstring)
        mean = total_mu - sum([mu[e] for e in excluded])
        return mean, total_var - sum([var[e] for e in excluded]) + mean * mean

    singles = [("I", 1.0)] + ([("N", float(n))] if n else [])
    pairs = [(("I", "N"), n), (("N", "I"), n), (("N", "N"), n * (n - 1))]
    grad, frame, trace_part = np.zeros(8), np.zeros((8, 8)), np.zeros(3)
    for key, mult in singles:
        t = tok[key]
        m1, m2 = rest(key)
        coef = np.array([m2, 2.0 * m1, 1.0])
        grad += 2.0 * mult * (t["f"][1] + t["f"][0] * m1)
        frame += 4.0 * mult * (coef @ t["ff"].reshape(3, 64)).reshape(8, 8)
        trace_part += 4.0 * mult * trace * t["s2"] * (np.array([t["ww"], t["uu"], t["wu"]]) @ coef)  # (3 kinds, 3)
    for (key_l, key_m), mult in pairs:
        if mult == 0:
            continue
        n1, n2 = rest(key_l, key_m)
        K = np.array([[n2, 2.0 * n1, 1.0], [2.0 * n1, 2.0, 0.0], [1.0, 0.0, 0.0]])
        frame += 4.0 * mult * (tok[key_l]["f"].T @ K @ tok[key_m]["f"])
    risk = total_var + total_mu ** 2
    s_kk, s_vv, s_kv = (float(frame[rows, cols].trace()) + trace_part[i]
                        for i, (rows, cols) in enumerate(_TRACE_BLOCKS))
    return grad[:4], grad[4:], s_kk, s_vv, s_kv, float(risk), frame


def task_scalars(task):
    """(d, L, gamma, eps) of a ``theory.Task`` (or ``Problem``, ``numerics.ScheduledProblem``) with
    scalar fields and d >= 4 (the frame (k*, v*, f3, f4) needs four dimensions), or ValueError."""
    if not isinstance(task, Task):
        raise ValueError(f"problem={task!r} is not allowed: need a theory.Problem (or a Task with a lambda)")
    fields = (task.d, task.L, task.gamma, task.eps)
    if any(np.ndim(x) > 0 for x in fields):
        raise ValueError(f"problem={task!r} is not allowed: d, L, gamma, eps must be scalars")
    if task.d < 4:
        raise ValueError(f"problem.d={task.d!r} is not allowed: the high-dimensional routes need d >= 4")
    return int(task.d), int(task.L), float(task.gamma), float(task.eps)


def problem_scalars(problem):
    """(d, L, gamma, eps, lam) of a ``theory.Problem`` as ``task_scalars``, with lam one number."""
    fields = task_scalars(problem)
    lam = getattr(problem, "lam", None)
    if lam is None or callable(lam) or np.ndim(lam) > 0:
        raise ValueError(f"problem.lam={lam!r} is not allowed: need one number lambda (a theory.Problem)")
    return (*fields, float(lam))


def _moments(d, L, gamma, eps, lam, overlaps, step):
    k, v = frame_coordinates(*overlaps)
    s = np.sqrt(d / 2.0)
    informative = token_moments(k, v, lam, mean=s, sd=gamma, informative=True, step=step)
    noise = token_moments(k, v, lam, mean=0.0, sd=1.0, informative=False, step=step)
    return _combine(informative, noise, L, eps * eps, d - 4.0)


def gradient_moments(problem, overlaps, *, step: float = 0.2, check: bool = True) -> GradientMoments:
    """The per-sample gradient moments (module docstring) of the ``theory.Problem`` ``problem``
    (scalar fields, d >= 4) at ``overlaps`` = (kappa, nu, theta, eta, rho), scalars. ``step``: the
    trapezoid step of the quadrature along the gate direction; with ``check`` the result is
    compared with step ``step``/2 for ``abserr`` (otherwise abserr is NaN: the ODE's right-hand
    side skips the comparison)."""
    d, L, gamma, eps, lam = problem_scalars(problem)
    fine = _moments(float(d), L, gamma, eps, lam, overlaps, step)
    if not check:
        return GradientMoments(*fine[:6], abserr=float("nan"), frame_second=fine[6])
    coarse = _moments(float(d), L, gamma, eps, lam, overlaps, 0.5 * step)
    err = max(float(np.max(np.abs(np.atleast_1d(f) - np.atleast_1d(c)))) for f, c in zip(fine, coarse))
    return GradientMoments(*fine[:6], abserr=err, frame_second=fine[6])
