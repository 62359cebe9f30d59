"""The randomness of the reduced online-SGD step that is drawn ahead of the steps (``numerics.sgd.reduced._draw_noise``):
the targets' noise and the Bartlett variables of every run and step of a block, in one compiled call, from the runs'
SFC64 stream states (``sfc64``: NumPy's numbers, so the reference route's arrays bit for bit).
"""

from __future__ import annotations

import math

from ._jit import jit
from .sfc64 import gamma_constants, sfc64_chisquare, sfc64_chisquare_above_two, sfc64_normal

__all__ = ["noise_draws"]


@jit
def noise_draws(S, B, m, eps, noise, a11, n21, a22):
    """``numerics.sgd.reduced._draw_noise`` of n = noise.shape[1] steps from the runs' SFC64 stream states S
    (R, 4, 4), rows 1-3 (extra, chi2_a, chi2_b) advanced: per run and step the B + 1 normals of the extra stream
    (noise = eps xi, then n21), a11 = sqrt(chi2(m)) and a22 = sqrt(chi2(m - 1)) from their streams (zero, and
    nothing drawn, when m < 1, m < 2; above 2 degrees of freedom by ``sfc64_chisquare_above_two``, its constants
    formed once per stream); NumPy's numbers in NumPy's order (``sfc64``), so the same arrays bit
    for bit. noise (R, n, B), a11, n21, a22 (R, n) are filled."""
    n = noise.shape[1]
    for r in range(S.shape[0]):
        a, b, c, w = S[r, 1, 0], S[r, 1, 1], S[r, 1, 2], S[r, 1, 3]
        for j in range(n):
            for i in range(B):
                z, a, b, c, w = sfc64_normal(a, b, c, w)
                noise[r, j, i] = eps * z
            z, a, b, c, w = sfc64_normal(a, b, c, w)
            n21[r, j] = z if m >= 1 else 0.0
        S[r, 1, 0], S[r, 1, 1], S[r, 1, 2], S[r, 1, 3] = a, b, c, w
        for k, df in ((2, m), (3, m - 1)):
            a, b, c, w = S[r, k, 0], S[r, k, 1], S[r, k, 2], S[r, k, 3]
            out = a11 if k == 2 else a22
            bb, cc = gamma_constants(float(df) / 2.0)  # used when df > 2 (shape above 1), formed once
            for j in range(n):
                if df > 2:
                    x, a, b, c, w = sfc64_chisquare_above_two(bb, cc, a, b, c, w)
                    out[r, j] = math.sqrt(x)
                elif df >= 1:
                    x, a, b, c, w = sfc64_chisquare(float(df), a, b, c, w)
                    out[r, j] = math.sqrt(x)
                else:
                    out[r, j] = 0.0
            S[r, k, 0], S[r, k, 1], S[r, k, 2], S[r, k, 3] = a, b, c, w
