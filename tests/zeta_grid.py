"""The 40-digit reference grid of zeta and its t-derivatives, and the error bounds of the closed
form ``theory.zeta``, shared by the zeta tests (tests/test_zeta*.py).

The grid is tests/data/zeta_reference.csv, written by scripts/zeta_accuracy.py: mpmath quadrature
of the defining expectation ``theory.zeta_reference.zeta_mpmath`` at 25 significant digits.
"""

import decimal
from pathlib import Path

import numpy as np

EPS = np.finfo(float).eps
DATA = Path(__file__).parent / "data" / "zeta_reference.csv"
COLUMNS = ("zeta", "zeta_t", "zeta_tt", "zeta_ttt", "zeta_tttt")
# Values below tiny/eps = 1e-292 are lost by float64 to gradual underflow of intermediate terms.
FLOOR = np.finfo(float).tiny / EPS

# A priori relative error bound of the closed form (u = eps/2 the unit roundoff). Where zeta
# uses 1 - 8 T(h, c) (zeta > 0.2 there), the computed h = sqrt(2) t / sqrt(1 + 2g^2) and
# c = 1/sqrt(1 + 4g^2) carry <= 5u and <= 3u, scipy's owens_t has absolute error <= 0.4u
# (measured against mpmath on random (h, a) in [0, 6] x [0, 1]), and the subtraction adds u:
#     |error| / zeta <= [8 (5u |h dT/dh| + 3u |c dT/dc| + 0.4u) + u zeta] / zeta,
# dT/dh = -e^{-h^2/2} erf(ch/sqrt 2) / (2 sqrt(2 pi)), dT/dc = e^{-h^2(1+c^2)/2} / (2 pi (1+c^2)).
# Maximised over that region this is 12.8 eps (at t = 0.5, g -> 0, zeta = 0.27). The
# Gauss-Legendre form (g < 1/2, |t| / sqrt(1 + 2g^2) < 1/2) adds two non-negative terms, each
# a few roundings, so it stays below that. Hence 13 eps.
ZETA_RTOL = 13 * EPS
# Derivatives: mixed error |f - ref| / (|ref| + |t ref'|) (ref' the next derivative). The
# computed arguments t/c1 and t/c2 carry relative errors <= 6u and <= 3u, i.e. they are exact
# at a t perturbed by <= 6u, costing <= 6u |t ref'| = 3 eps |t ref'| (when the partial
# sensitivities to the two arguments cancel in ref' the |ref| term covers them); erf, exp
# and the <= 10 products/sums of the formulas cost <= 10u |ref| = 5 eps |ref|. Hence 8 eps.
DERIVATIVE_TOL = 8 * EPS


def load_reference():
    """t, g and per column a (hi, lo) float pair with hi + lo = the 25-digit reference."""
    lines = [line.split(",") for line in DATA.read_text().splitlines()
             if line and not line.startswith(("#", "t,"))]
    t = np.array([float(r[0]) for r in lines])
    g = np.array([float(r[1]) for r in lines])
    ref = {}
    with decimal.localcontext() as ctx:
        ctx.prec = 40
        for k, name in enumerate(COLUMNS):
            strings = [r[2 + k] for r in lines]
            hi = np.array([float(s) for s in strings])
            lo = np.array([float(decimal.Decimal(s) - decimal.Decimal(h))
                           for s, h in zip(strings, hi.tolist())])
            ref[name] = (hi, lo)
    return t, g, ref


REFERENCE = load_reference()


def reference_error(approx, name):
    """|approx - reference| for column ``name`` of the grid, from its (hi, lo) float pair."""
    hi, lo = REFERENCE[2][name]
    return np.abs((approx - hi) - lo)  # approx - hi is exact (Sterbenz) where it matters


def mixed_error(approx, ref, ref_next, t):
    """|approx - ref| / max(|ref| + |t ref_next|, FLOOR): the error relative to the value and
    to its change under a relative perturbation of t (ref_next the next t-derivative)."""
    return np.abs(approx - ref) / np.maximum(np.abs(ref) + np.abs(t * ref_next), FLOOR)


def nearest_rows(points):
    """Indices of the grid rows nearest (in log t, log g) to each (t, g) of ``points``."""
    t, g, _ = REFERENCE
    return [int(np.argmin(np.abs(np.log10(t + 1e-9) - np.log10(tp + 1e-9))
                          + np.abs(np.log10(g) - np.log10(gp)))) for tp, gp in points]
