"""Bayes risk of single-location regression by quadrature (docs/math/baselines.md#bayes-risk), independent of sampling.

Derivation (re-derived here; every step is checked numerically by ``tests/test_bayes.py``).
Write u = <X_l, k*>, w = <X_l, v*>, and f_1 = N(s k*, gamma^2 I_d), f_0 = N(0, I_d) for the laws
of an informative and of a noise token (s = sqrt(d/2)). The per-token log-likelihood ratio is

    ell(X_l) = log f_1(X_l) / f_0(X_l) = -d log gamma - |X_l - s k*|^2 / (2 gamma^2) + |X_l|^2 / 2,

the posterior of the uniform location is p_l = P(J = l | X) = e^{ell_l} / sum_m e^{ell_m}, the
Bayes predictor is E[Y | X] = sum_l p_l w_l and the Bayes risk is eps^2 + B with
B = E[Var(<X_J, v*> | X)] = E[sum_l p_l w_l^2 - (sum_l p_l w_l)^2].

1. Sign symmetry. |X_l|^2 = u^2 + w^2 + (orthogonal part), so p depends on w only through the
   w_l^2; given J the tokens are independent and each w_l is symmetric. Hence the cross terms
   E[p_l p_m w_l w_m], l != m, vanish and B = E[sum_l p_l (1 - p_l) w_l^2].
2. Laplace transform. With a_l = e^{ell_l} and A = sum_l a_l, p_l (1 - p_l) = a_l (A - a_l) / A^2
   and 1 / A^2 = int_0^inf t e^{-t A} dt. Put J = 1 (B does not depend on J), factor the
   expectation over the independent tokens and set t = e^tau:

       B = (L-1) int_R dtau { gamma^2 Phi_1w Phi_0 F_0^{L-2} + Phi_0w [Phi_1 F_0^{L-2} + (L-2) Phi_0 F_1 F_0^{L-3}] },

   F_c(tau) = E_c[exp(-e^{ell + tau})], Phi_c(tau) = E_c[phi(ell + tau)], phi(x) = exp(x - e^x),
   with c = 1 (informative) or 0 (noise), and Phi_cw the same as Phi_c under the law size-biased by
   w^2: E_c[w^2 g(ell)] = sigma_c^2 E_cw[g(ell)], sigma_1 = gamma, sigma_0 = 1.
3. Law of ell. With beta = (gamma^2 - 1) / (2 gamma^2) and m = s / (gamma^2 - 1),
   ell = beta |X_l + m k*|^2 + c0, c0 = -d log gamma - s^2 / (2 (gamma^2 - 1)), and under class c,
   |X_l + m k*|^2 = sigma_c^2 W with W ~ noncentral chi^2(df = d, nc_c), nc_0 = s^2 / (gamma^2 - 1)^2,
   nc_1 = gamma^2 nc_0. Size-biasing by w^2 (one of the d unit-variance coordinates of W) gives
   df = d + 2. For gamma = 1, ell = s u - s^2/2 ~ N(-s^2/2, s^2) (noise) or N(s^2/2, s^2)
   (informative), independent of w, so the size-biased laws are the plain ones.

Numerics: each law of ell is discretised by composite Gauss-Legendre in t = sqrt(W) (smooth at
W = 0, where the chi^2 density has its endpoint singularity) on panels of width ``panel`` in ell
(phi has width ~1 in ell), truncated to the [delta, 1 - delta] quantiles; the tau integral is a
trapezoid rule with step ``h_tau`` (spectrally accurate: the integrand is smooth and decays at
both ends). ``abserr`` = |value - value at (2 panel, 2 h_tau)| + the neglected mass.
Exact at every finite d >= 2, L, gamma, eps. Sibling: ``numerics.montecarlo.bayes_risk.bayes_risk_mc``.
"""

from __future__ import annotations

import math

import numpy as np
import scipy  # scipy.stats loads on first use (scipy's lazy submodules)

from .bayes_bound import bayes_excess_bound
from .parameters import Task
from .risk_quad import QuadResult

__all__ = ["bayes_risk_quad", "log_likelihood_ratio_laws", "scalar_problem_fields"]

_DELTA = 1e-17          # neglected probability mass in each tail of each law of ell
_GAUSS_HALF_WIDTH = 9.5  # Gaussian law: +-9.5 sd leaves mass 2e-21 < _DELTA per tail
# Band of x = ell + tau evaluated node by node: above X_HI, phi(x) < e^-50 and F < e^-54;
# below X_LO, phi(x) = e^x and F = 1 up to a relative e^x < 1e-17.
_X_LO, _X_HI = -39.2, 4.0
_NODES = 16             # Gauss-Legendre nodes per panel
_MAX_NC = 1e9           # scipy's noncentral chi^2 quantiles become slow / unreliable beyond
_NORM_TOL = 1e-10       # each discretised law must integrate to 1 to this accuracy
# Largest number of panels per law. The cost is ~ (tau grid) x (nodes in the band of x) ~ the
# spread of ell times a constant: 5e4 panels (spread 5e4 in ell at panel = 1) take ~10 s of one
# core and < 0.3 GB (4 laws x 8e5 nodes, tau grid 2e5 points); see tests/test_bayes_limits.py.
_MAX_PANELS = 50_000


def scalar_problem_fields(problem: Task):
    """(d, L, gamma, eps) of a scalar ``problem`` with d >= 2 (k* and v* orthonormal), else ValueError."""
    for name in ("d", "L", "gamma", "eps"):
        if np.ndim(getattr(problem, name)) != 0:
            raise ValueError(f"problem.{name}={getattr(problem, name)!r} is not allowed: the Bayes "
                             "risk takes scalar problem fields only")
    d, L = int(problem.d), int(problem.L)
    if d < 2:
        raise ValueError(f"d={d!r} is not allowed: the Bayes risk needs d >= 2 (k* and v* orthogonal)")
    return d, L, float(problem.gamma), float(problem.eps)


def _gauss_legendre_panels(edges: np.ndarray):
    """Nodes and weights of composite Gauss-Legendre on the panels [edges[i], edges[i+1]]."""
    x, w = np.polynomial.legendre.leggauss(_NODES)
    half = 0.5 * np.diff(edges)[:, None]
    mid = 0.5 * (edges[:-1] + edges[1:])[:, None]
    return (mid + half * x).ravel(), (half * w).ravel()


def _ncx2_law(df, nc, scale, c0, panel):
    """Nodes (in ell) and weights of ell = scale W + c0, W ~ ncx2(df, nc)."""
    ncx2 = scipy.stats.ncx2
    lo, hi = ncx2.ppf(_DELTA, df, nc), ncx2.isf(_DELTA, df, nc)
    width = panel / abs(scale)  # panel width in W
    if lo < width:
        lo = 0.0                # keep the endpoint W = 0 inside the first panel
    n_panels = max(1, math.ceil((hi - lo) / width))
    _check_panels(n_panels)
    t_edges = np.sqrt(np.linspace(lo, hi, n_panels + 1))
    t, wt = _gauss_legendre_panels(t_edges)
    W = t * t
    weights = wt * 2.0 * t * ncx2.pdf(W, df, nc)
    return scale * W + c0, weights


class BeyondQuadrature(ValueError):
    """The law of ell spreads over more than _MAX_PANELS panels: the route would take too long."""


def _check_panels(n_panels):
    if n_panels > _MAX_PANELS:
        raise BeyondQuadrature(f"{n_panels} panels")


def _gauss_law(mean, sd, panel):
    n_panels = max(1, math.ceil(2 * _GAUSS_HALF_WIDTH * sd / panel))
    _check_panels(n_panels)
    edges = mean + sd * np.linspace(-_GAUSS_HALF_WIDTH, _GAUSS_HALF_WIDTH, n_panels + 1)
    x, w = _gauss_legendre_panels(edges)
    return x, w * np.exp(-0.5 * ((x - mean) / sd) ** 2) / (sd * math.sqrt(2 * math.pi))


def log_likelihood_ratio_laws(d: int, gamma: float, panel: float = 1.0) -> dict:
    """Discretised laws of ell (item 3 of the module docstring) as {name: (nodes, weights)}.

    Names: "noise", "informative" (plain laws) and "noise_w", "informative_w" (size-biased by w^2).
    E_c[g(ell)] is approximated by sum(weights * g(nodes)). Raises ValueError when a law does not
    integrate to 1 within 1e-10 (quadrature lost accuracy) or gamma is too close to (but not) 1.
    """
    s2 = d / 2.0
    if gamma == 1.0:
        s = math.sqrt(s2)
        noise, info = _gauss_law(-s2 / 2, s, panel), _gauss_law(s2 / 2, s, panel)
        laws = {"noise": noise, "informative": info, "noise_w": noise, "informative_w": info}
    else:
        g2 = gamma * gamma
        beta = (g2 - 1.0) / (2.0 * g2)
        nc0 = s2 / (g2 - 1.0) ** 2
        if nc0 > _MAX_NC:
            raise ValueError(f"gamma={gamma!r} is not allowed with d={d}: gamma^2 is so close to 1 "
                             f"that the noncentrality {nc0:.3g} exceeds {_MAX_NC:g}; use gamma = 1 "
                             "exactly or move gamma away from 1")
        c0 = -d * math.log(gamma) - s2 / (2.0 * (g2 - 1.0))
        laws = {}
        for name, df, nc, var in (("noise", d, nc0, 1.0), ("informative", d, g2 * nc0, g2),
                                  ("noise_w", d + 2, nc0, 1.0), ("informative_w", d + 2, g2 * nc0, g2)):
            laws[name] = _ncx2_law(df, nc, beta * var, c0, panel)
    for name, (_, weights) in laws.items():
        mass = float(np.sum(weights))
        if not abs(mass - 1.0) <= _NORM_TOL:
            raise ValueError(f"quadrature of the law of ell ({name}, d={d}, gamma={gamma}) lost "
                             f"accuracy: total mass {mass!r} differs from 1 by more than {_NORM_TOL:g}")
    return laws


def _transforms(nodes, weights, tau, with_f: bool):
    """Phi(tau) = E[phi(ell + tau)] and, if ``with_f``, F(tau) = E[exp(-e^{ell + tau})].

    Only nodes with _X_LO <= ell + tau < _X_HI are evaluated one by one: above, phi and F are
    negligible (dropped); below, phi(x) = e^x and F = 1 up to a relative 1e-17, summed by a running
    log-sum-exp over the sorted nodes.
    """
    keep = weights > 0
    order = np.argsort(nodes[keep])
    nodes, weights = nodes[keep][order], weights[keep][order]
    log_cum = np.logaddexp.accumulate(np.log(weights) + nodes)
    cum_w = np.cumsum(weights)
    i_lo = np.searchsorted(nodes, _X_LO - tau)   # nodes[:i_lo] lie below the band
    i_hi = np.searchsorted(nodes, _X_HI - tau)   # nodes[i_hi:] lie above it
    below = i_lo > 0
    phi = np.zeros(tau.size)
    phi[below] = np.exp(log_cum[i_lo[below] - 1] + tau[below])
    F = np.where(below, cum_w[np.maximum(i_lo - 1, 0)], 0.0) if with_f else None
    block = max(1, int((_X_HI - _X_LO) / (tau[1] - tau[0])) if tau.size > 1 else 1)
    for start in range(0, tau.size, block):
        t = tau[start:start + block]
        lo, hi = int(i_lo[start + t.size - 1]), int(i_hi[start])  # tau increases: band moves down
        if hi <= lo:
            continue
        j = np.arange(lo, hi)
        inside = j[None, :] >= i_lo[start:start + t.size, None]
        x = t[:, None] + nodes[None, lo:hi]
        # x[-1, -1] is the largest x (tau and the nodes increase, rounding is monotone): clip only when it exceeds 700
        ex = np.exp(x if x[-1, -1] <= 700.0 else np.minimum(x, 700.0))
        w = np.where(inside, weights[None, lo:hi], 0.0)
        if with_f:
            e = np.negative(ex)
            F[start:start + t.size] += np.sum(np.multiply(np.exp(e, out=e), w, out=e), axis=1)
        np.subtract(x, ex, out=x)
        phi[start:start + t.size] += np.sum(np.multiply(np.exp(x, out=x), w, out=x), axis=1)
    return phi, F


def _excess(d, L, gamma, panel, h_tau):
    """B = Bayes risk - eps^2 by the Laplace formula of item 2, and the tau-grid."""
    laws = log_likelihood_ratio_laws(d, gamma, panel)
    lo = min(float(np.min(n)) for n, _ in laws.values())
    hi = max(float(np.max(n)) for n, _ in laws.values())
    # Beyond these ends every term of the integrand is below e^(2 _X_LO) or e^-50 times a bound.
    tau = np.arange(-hi + _X_LO, -lo + _X_HI + h_tau, h_tau)
    phi0, F0 = _transforms(*laws["noise"], tau, True)
    phi1, F1 = _transforms(*laws["informative"], tau, True)
    phi0w, _ = _transforms(*laws["noise_w"], tau, False)
    phi1w, _ = _transforms(*laws["informative_w"], tau, False)
    F0_L2 = F0 ** (L - 2)
    integrand = gamma**2 * phi1w * phi0 * F0_L2 + phi0w * phi1 * F0_L2
    if L >= 3:
        integrand = integrand + (L - 2) * phi0w * phi0 * F1 * F0 ** (L - 3)
    return (L - 1) * h_tau * float(np.sum(integrand))


def bayes_risk_quad(problem: Task, panel: float = 1.0, h_tau: float = 0.25) -> QuadResult:
    """Bayes risk eps^2 + E[Var(<X_J, v*> | X)] by quadrature (docs/math/baselines.md#bayes-risk; module docstring).

    Uses d, L, gamma, eps of a scalar ``problem`` (lam is ignored: the Bayes predictor has none);
    needs d >= 2. Exact at finite d up to the reported ``abserr`` (comparison with a rule twice as
    coarse in both ell and tau, plus the neglected tail mass). L = 1 gives eps^2 exactly.
    Where the Bhattacharyya bound on B (``theory.bayes_bound``; at L = 10: every gamma once d >= 400,
    and d = 100 unless 0.55 < gamma < 2.4) is below that tail error, the value is eps^2 + bound/2
    with abserr bound/2, at no cost. Otherwise the cost grows with the spread of ell (about
    linearly in d, and like |1 - 1/gamma^2| away from gamma = 1): ~0.1 s at d = 10, gamma = 0.7;
    spreads beyond 5e4 panels (~10 s, 0.3 GB) raise ValueError stating the bound instead.
    Sibling: ``numerics.montecarlo.bayes_risk.bayes_risk_mc`` (Monte Carlo).
    """
    d, L, gamma, eps = scalar_problem_fields(problem)
    for name, value in (("panel", panel), ("h_tau", h_tau)):
        if not (np.isscalar(value) and np.isfinite(value) and 0 < value <= 2):
            raise ValueError(f"{name}={value!r} is not allowed: {name} must be in (0, 2]")
    if L == 1:
        return QuadResult(value=eps * eps, abserr=0.0)
    # Each law misses mass 2 delta; every term of the integrand is a product of at most three
    # transforms bounded by 1, and int phi(ell + tau) dtau = 1, so the loss is < 2 delta (L-1)(gamma^2 + L).
    tail = 2 * _DELTA * (L - 1) * (gamma**2 + L)
    bound = bayes_excess_bound(d, L, gamma)   # 0 <= B <= bound (theory.bayes_bound)
    if bound <= tail:
        # The bound is below the quadrature's own error floor: B = bound/2 +- bound/2 is as exact.
        return QuadResult(value=eps * eps + bound / 2, abserr=bound / 2)
    try:
        fine = _excess(d, L, gamma, panel, h_tau)
        coarse = _excess(d, L, gamma, 2 * panel, 2 * h_tau)
    except BeyondQuadrature as err:
        raise ValueError(
            f"gamma={gamma!r} with d={d} is beyond bayes_risk_quad: the law of the log-likelihood "
            f"ratio needs {err} of width {panel:g} (limit {_MAX_PANELS}); here only "
            f"0 <= Bayes risk - eps^2 <= {bound:.3g} is known (theory.bayes_bound); use "
            "numerics.bayes_risk_mc, or gamma closer to 1") from None
    return QuadResult(value=eps * eps + fine, abserr=abs(fine - coarse) + tail)
