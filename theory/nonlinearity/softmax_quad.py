"""Risk and gradient of the softmax member by the Laplace route (docs/math/nonlinearities.md#softmax).

T = sum_l w_l b_l, w_l = exp(lambda a_l) / S, S = sum_m exp(lambda a_m). Every quantity is a sum of
expectations E[prod_l F_l(a_l, b_l, y) exp(lambda n_l a_l) / S^k], k = sum_l n_l >= 1, F_l a
monomial in b_l (and y on the informative token). With 1/S^k = int_0^inf t^(k-1) e^(-tS) dt / (k-1)!
and t = e^(-tau), the expectation factorises over the independent tokens (Fubini: all integrands
are bounded by |prod F_l| times (k-1)!^-1 t^(k-1) e^(-t S)):

    E[...] = (1/(k-1)!) int_R dtau prod_l M_l(tau),   M(tau) = E[F(a, b, y) g_n(lambda a - tau)],
    g_n(x) = exp(n x - e^x),

one-token Laplace transforms, each a 1-D Gaussian integral (``theory.nonlinearity.gauss``); the
L - 1 noise tokens are i.i.d., so the product is a few distinct transforms times a power of
M_noise[n=0, F=1]. Exact at every finite d, L >= 1, lambda > 0 and feasible overlaps.

Numerics: tau runs over [tau_lo, tau_hi] outside which the integrand is below 1e-20 of its bound
(``_tau_range``), in panels of width max(2, lambda min(sd_a) / 4); each M is integrated over z with
panels of width <= 1 in z and 2 in x = lambda a - tau over x in [-46, 6] (g_n's transition;
g_n(x) <= e^(n x) < 1e-20 below, <= e^(-400) above). Value: Gauss-Legendre with (16, 16) nodes per
(tau, z) panel; error estimate: |Q16 - Q12| plus a roundoff floor of 64 ulps of the integral of
the |.| bounds, and the 1e-20 relative truncations.
"""

from __future__ import annotations

import math

import numpy as np

from theory.parameters import Overlaps

from .gauss import Z_MAX, informative_law, noise_law, panel_nodes, z_breaks

__all__ = ["risk_softmax", "grad_softmax", "oracle_excess_softmax", "laplace_expectation", "ORDERS"]

ORDERS = (12, 16)
SEARCH_ORDER = 8      # oracle_excess_softmax without its error estimate: (8/12)^2 = 0.44 of order 12's nodes
_EPS = np.finfo(float).eps
_X_STEP = 2.0
_X_WINDOW = np.arange(-46.0, 7.0, _X_STEP)
_N_MAX = 3
_TAU_WIDTH = 2.0
_CHUNK = 32           # tau rows per block, in cache; each row is computed on its own (tested: values bit for bit)


def _tau_range(lam, laws):
    lo = max(lam * (law.mu_a - Z_MAX * law.sd_a) - 8.0 for law in laws)
    hi = max(lam * (law.mu_a + Z_MAX * law.sd_a) + 46.0 for law in laws)
    return lo, hi


def _tau_rule(lam, laws, n):
    lo, hi = _tau_range(lam, laws)
    width = max(_TAU_WIDTH, lam * min(law.sd_a for law in laws) / 4.0)
    m = max(1, int(math.ceil((hi - lo) / width)))
    return panel_nodes(np.linspace(lo, hi, m + 1), n)


def _transforms(lam, law, tau, n, with_bound, n_max=_N_MAX):
    """B[n_w](tau)[j] = int phi(z) g_{n_w}(lambda a(z) - tau) z^j dz (n_w = 0..3, j = 0..3), shape
    (T, 4, 4), and the same with |z|^j (the bounds; None unless ``with_bound``)."""
    out = np.empty((tau.size, n_max + 1, 4))
    out_abs = np.empty_like(out) if with_bound else None
    window = lam * law.sd_a > _X_STEP   # else unit z-panels are already <= _X_STEP wide in x
    for i0 in range(0, tau.size, _CHUNK):
        t = tau[i0:i0 + _CHUNK, None]
        extra = ((_X_WINDOW + t) / lam - law.mu_a) / law.sd_a if window else np.empty((t.shape[0], 0))
        z, wz = panel_nodes(z_breaks(extra), n)
        # x > 40: exp(-e^x) = 0 exactly in float64, so clipping changes nothing and keeps e^(3x) finite
        ex = np.exp(np.minimum(lam * (law.mu_a + law.sd_a * z) - t, 40.0))
        g = np.empty((t.shape[0], n_max + 1, z.shape[1]))
        g[:, 0] = np.exp(-0.5 * z * z - ex) * wz    # sqrt(2 pi) phi(z) g_0(x): one exponential
        for k in range(1, n_max + 1):
            np.multiply(g[:, k - 1], ex, out=g[:, k])
        zp = np.empty((*z.shape, 4))
        zp[..., 0], zp[..., 1] = 1.0, z
        np.multiply(z, z, out=zp[..., 2])
        np.multiply(zp[..., 2], z, out=zp[..., 3])
        out[i0:i0 + _CHUNK] = g @ zp
        if with_bound:
            out_abs[i0:i0 + _CHUNK] = g @ np.abs(zp)
    return out / math.sqrt(2.0 * math.pi), None if out_abs is None else out_abs / math.sqrt(2.0 * math.pi)


class _Token:
    """One-token transforms M[n, p, q](tau) and their |.| bounds, computed on demand."""

    def __init__(self, lam, law, tau, n, with_bound, n_max):
        self.law = law
        self.B, self.B_abs = _transforms(lam, law, tau, n, with_bound, n_max)
        self._cache = {}

    def __call__(self, n, p=0, q=0):
        key = (n, p, q)
        if key not in self._cache:
            c = self.law.poly(p, q)
            bound = np.zeros(self.B.shape[0]) if self.B_abs is None else self.B_abs[:, n] @ np.abs(c)
            self._cache[key] = (self.B[:, n] @ c, bound)
        return self._cache[key]


def _assignments(n_free, targets):
    """Assignments of free factors to fixed targets or to new distinct noise slots 0, 1, ..."""
    def rec(i, used):
        if i == n_free:
            yield ()
            return
        for t in list(targets) + list(range(used + 1)):
            for rest in rec(i + 1, max(used, t + 1) if isinstance(t, int) else used):
                yield (t,) + rest
    return rec(0, 0)


def laplace_expectation(fixed, free, L, tokens, noise_only=False):
    """E[prod_fixed * prod over free factors of sum over all tokens], as (integrand, bound) over tau.
    ``noise_only``: the free sums run over the L - 1 noise tokens only.

    fixed: {"I": (n, p, q), "N": (n, p)} factors w^n b^p y^q on the informative token and on one
    given noise token; free: [(n, p), ...] factors w_m^n b_m^p each summed over m = 1..L.
    tokens: {"I": _Token, "N": _Token}. Returns arrays over the tau nodes (to be integrated).
    """
    avail = L - 1 - (1 if "N" in fixed else 0)
    total = np.zeros_like(tokens["I"](0)[0])
    bound = np.zeros_like(total)
    targets = ([] if noise_only else ["I"]) + (["N"] if "N" in fixed else [])
    for assign in _assignments(len(free), targets):
        slots = {key: list(val) + [0] * (3 - len(val)) for key, val in fixed.items()}
        n_new = len({t for t in assign if isinstance(t, int)})
        for (n, p), t in zip(free, assign):
            slot = slots.setdefault(t, [0, 0, 0])
            slot[0] += n
            slot[1] += p
        mult = math.perm(avail, n_new) if avail >= n_new else 0
        k = sum(v[0] for v in slots.values())
        if mult == 0 or any(v[1] + v[2] > 3 for v in slots.values()):
            if mult:
                raise ValueError("a factor of degree > 3 in one token is not supported")
            continue
        val, bnd = tokens["I"](*slots.get("I", [0, 0, 0]))
        val, bnd = val.copy(), bnd.copy()
        for key, (n, p, q) in slots.items():
            if key != "I":
                v, b = tokens["N"](n, p, q)
                val *= v
                bnd *= b
        rest = avail - n_new
        if rest:
            v0, b0 = tokens["N"](0)
            val *= v0 ** rest
            bnd *= b0 ** rest
        total += mult * val / math.factorial(k - 1)
        bound += mult * bnd / math.factorial(k - 1)
    return total, bound


def _evaluate(problem, overlaps, exprs, orders=ORDERS, n_max=(_N_MAX, _N_MAX)):
    """Integrate each expression ``expr(E) -> [(coef, integrand, bound)]`` at ``orders`` (the last gives the
    value; one order: nan error, no |.| bounds); ``n_max``: largest power of w on the (informative, noise) token."""
    d, L, gamma, lam = float(problem.d), int(problem.L), float(problem.gamma), float(problem.lam)
    kappa, nu, theta, eta, rho = (float(x) for x in overlaps.as_tuple())
    s = math.sqrt(d / 2.0)
    li, ln = informative_law(s, gamma, kappa, nu, theta, eta, rho), noise_law(rho)
    laws = [li] + ([ln] if L >= 2 else [])
    results = {name: [] for name in exprs}
    for n in orders:
        tau, w = _tau_rule(lam, laws, n)
        last = n == orders[-1] and len(orders) > 1   # the bounds enter the error estimate only
        tokens = {"I": _Token(lam, li, tau, n, last, n_max[0])}
        tokens["N"] = _Token(lam, ln, tau, n, last, n_max[1]) if L >= 2 else None
        E = lambda fixed, free=(), noise_only=False: laplace_expectation(fixed, list(free), L, tokens,
                                                                        noise_only)
        for name, expr in exprs.items():
            terms = expr(E, s, L, gamma, lam)
            value = sum(c * float(v @ w) for c, (v, _) in terms)
            bnd = sum(abs(c) * float(b @ w) for c, (_, b) in terms)
            results[name].append((value, bnd))
    out = {}
    for name, res in results.items():
        (v_lo, _), (v_hi, bnd) = res[0], res[-1]
        err = abs(v_hi - v_lo) + (64.0 * _EPS + 3e-20) * bnd if len(res) > 1 else np.nan
        out[name] = (v_hi, err)
    return out


def _risk_terms(E, s, L, gamma, lam):
    # R - eps^2 - gamma^2 = -2 E[y T] + E[T^2]
    return [(-2.0, E({"I": (0, 0, 1)}, [(1, 1)])), (1.0, E({}, [(1, 1), (1, 1)]))]


def risk_softmax(problem, overlaps, with_error=True):
    """(R, abserr) for the softmax member by the Laplace route (module docstring). Scalars only.
    Without ``with_error``: the order-16 rule alone, the same value to the bit, abserr nan."""
    value, err = _evaluate(problem, overlaps, {"R": _risk_terms}, ORDERS if with_error else ORDERS[-1:], (2, 2))["R"]
    eps2g2 = float(problem.eps) ** 2 + float(problem.gamma) ** 2
    return eps2g2 + value, err + 2.0 * _EPS * eps2g2


def _oracle_excess_terms(E, s, L, gamma, lam):
    # (y - T)^2 = ((1 - w_1) y - sum_{l>=2} w_l b_l)^2 with v = v* (b_1 = y), 1 - w_1 = sum_{l>=2} w_l
    if L < 2:
        return []
    return [(1.0, E({"I": (0, 0, 2)}, [(1, 0), (1, 0)], True)),
            (-2.0, E({"I": (0, 0, 1)}, [(1, 0), (1, 1)], True)),
            (1.0, E({}, [(1, 1), (1, 1)], True))]


def oracle_excess_softmax(problem, with_error=True):
    """(R - eps^2, abserr) at the oracle (k, v) = (k*, v*) as a sum of non-negative terms (module
    docstring; docs/math/nonlinearities.md#the-oracle): no cancellation, relative accuracy.
    Without ``with_error``: the order-``SEARCH_ORDER`` rule alone (abserr nan; for searches), within a relative
    1e-6 of the (12, 16) rules at L = 10, gamma = sqrt(1/2), d <= 256, lambda in [1e-3, 1e2] (tests)."""
    if problem.L < 2:
        return 0.0, 0.0
    orders = ORDERS if with_error else (SEARCH_ORDER,)
    return _evaluate(problem, Overlaps.oracle(), {"E": _oracle_excess_terms}, orders, n_max=(0, 2))["E"]


def _grad_terms(E, s, L, gamma, lam):
    """The five partials (Price's theorem; docs/math/nonlinearities.md#softmax) as term lists."""
    g2 = gamma * gamma
    w1T = E({"I": (1, 0, 0)}, [(1, 1)])                                  # E[w_1 T]
    terms = {
        "nu": [(-2.0 * g2, E({"I": (1, 0, 0)}))],
        "eta": [(-2.0 * g2 * lam, E({"I": (1, 1, 0)})), (2.0 * g2 * lam, w1T)],
        "theta": [(-2.0 * s, E({"I": (1, 0, 1)})), (2.0 * s, w1T)],
        "kappa": [(c * -2.0 * s * lam, e) for c, e in (
            (1.0, E({"I": (1, 1, 1)})), (-1.0, E({"I": (1, 0, 1)}, [(1, 1)])),
            (-1.0, E({"I": (1, 1, 0)}, [(1, 1)])), (1.0, E({"I": (1, 0, 0)}, [(1, 1), (1, 1)])))],
    }
    # R_rho = gamma^2 E[D_1] + (L-1) E[D_2], D_l = 2 lam [w_l^2 b_l - 2 w_l^2 T + T w_l - y w_l + y w_l^2]
    rho = [(c * 2.0 * lam * g2, e) for c, e in (
        (1.0, E({"I": (2, 1, 0)})), (-2.0, E({"I": (2, 0, 0)}, [(1, 1)])), (1.0, w1T),
        (-1.0, E({"I": (1, 0, 1)})), (1.0, E({"I": (2, 0, 1)})))]
    if L >= 2:
        rho += [(c * 2.0 * lam * (L - 1), e) for c, e in (
            (1.0, E({"N": (2, 1)})), (-2.0, E({"N": (2, 0)}, [(1, 1)])), (1.0, E({"N": (1, 0)}, [(1, 1)])),
            (-1.0, E({"I": (0, 0, 1), "N": (1, 0)})), (1.0, E({"I": (0, 0, 1), "N": (2, 0)})))]
    return terms | {"rho": rho}


def grad_softmax(problem, overlaps, with_error=True):
    """{name: (R_name, abserr)} for the five overlaps, softmax member, by the Laplace route
    (abserr nan, at about 4/5 of the cost, without ``with_error``)."""
    exprs = {name: (lambda E, s, L, g, lam, name=name: _grad_terms(E, s, L, g, lam)[name])
             for name in ("kappa", "nu", "theta", "eta", "rho")}
    return _evaluate(problem, overlaps, exprs, ORDERS if with_error else ORDERS[-1:])
