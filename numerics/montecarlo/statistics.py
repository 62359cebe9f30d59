"""Critical values of the Monte-Carlo checks, written once for the tests, the claims and the figures.

A Monte-Carlo estimate with standard error se is compared with an exact value x by the z-score
z = (mean - x) / se, approximately standard normal by the central limit theorem. m such
comparisons, each two-sided, pass together with probability >= 1 - rate when each uses the
Bonferroni critical value z_crit = Phi^-1(1 - rate / (2 m)) (union bound over the 2 m tails).
A true relative error delta is detected with probability >= power when
(z_crit + Phi^-1(power)) se <= delta |x| (the shifted z-score then exceeds z_crit).
``chi2_isf``: the upper quantile of chi^2 with dof degrees of freedom (goodness-of-fit and profile intervals).
``sd_with_stderr``: a sample standard deviation with its delta-method standard error.
"""

from __future__ import annotations

import numpy as np

__all__ = ["bonferroni_z", "chi2_isf", "power_z", "sd_with_stderr"]


def bonferroni_z(rate: float, m: int = 1) -> float:
    """Two-sided critical value of m simultaneous z-tests at family-wise false-failure rate
    ``rate``: Phi^-1(1 - rate / (2 m)), computed as the upper tail -Phi^-1(rate / (2 m)) (no
    cancellation; the same number as ``scipy.stats.norm.isf``, which is this ``ndtri``)."""
    if not 0 < rate < 1:
        raise ValueError(f"rate={rate!r} is not allowed: the false-failure rate must be in (0, 1)")
    if not (isinstance(m, int) and m >= 1):
        raise ValueError(f"m={m!r} is not allowed: the number of tests must be an integer >= 1")
    from scipy.special import ndtri   # Phi^-1, here: importing every claim (``slr``'s planning) needs no scipy

    return float(-ndtri(rate / (2 * m)))


def power_z(power: float) -> float:
    """Phi^-1(power): the extra margin (in standard errors) that detects an error with
    probability ``power`` beyond a critical value (module docstring)."""
    if not 0 < power < 1:
        raise ValueError(f"power={power!r} is not allowed: need 0 < power < 1")
    from scipy.special import ndtri   # Phi^-1 (scipy.stats, ~1 s of imports, is not needed for it)

    return float(ndtri(power))


def chi2_isf(rate: float, dof: int) -> float:
    """The upper ``rate`` quantile of chi^2 with ``dof`` degrees of freedom: P(chi^2_dof > q) = rate. The same
    number as ``scipy.stats.chi2.isf(rate, dof)``, which is this ``chdtri`` (scipy.stats, ~0.25-0.5 s of imports,
    is not needed for it)."""
    if not 0 < rate < 1:
        raise ValueError(f"rate={rate!r} is not allowed: the false-failure rate must be in (0, 1)")
    if not dof > 0:
        raise ValueError(f"dof={dof!r} is not allowed: the degrees of freedom must be > 0")
    from scipy.special import chdtri

    return float(chdtri(dof, rate))


def sd_with_stderr(x, axis=-1):
    """(s, se(s)): the sample standard deviation of ``x`` along ``axis`` (ddof 1) and its standard error
    by the delta method on the sample variance, var(s^2) ~ (m4 - s^4) / n (m4 the fourth central
    moment), se(s) = se(s^2) / (2 s); nan where s = 0."""
    x = np.asarray(x, dtype=float)
    n = x.shape[axis]
    sd = x.std(axis=axis, ddof=1)
    m4 = np.mean((x - x.mean(axis=axis, keepdims=True)) ** 4, axis=axis)
    with np.errstate(invalid="ignore", divide="ignore"):
        return sd, np.sqrt(np.maximum(m4 - sd ** 4, 0.0) / n) / (2.0 * sd)
