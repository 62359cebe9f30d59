"""The gradient coefficients of the reduced-SGD step for the kernel's two members (``numerics.kernels.sgd_step``).

Per step, from the projections (p, q) of its B L tokens (``sgd_step._draw_step``) and the targets y: the erf member's
(the paper's gate erf(lambda p)) and the softmax member's (``theory.nonlinearity``) coefficients (c, e) of the
gradient, c = r d T / d p and e = r d T / d q with r = (2/B)(T - y) per sequence (``numerics.sgd.reduced``'s module
docstring, step 3); exp and erf of the B L tokens at once (``erf_poly.exp_block``, ``erf_block``: vectorised).
"""

from __future__ import annotations

import numpy as np

from ._jit import jit
from .erf_poly import erf_block, exp_block

__all__ = ["softmax_coefficients", "erf_coefficients"]

_TWO_OVER_SQRT_PI = float(2.0 / np.sqrt(np.pi))


@jit(inline=True)
def softmax_coefficients(PQ, y, lam, two_over_b, L, CE, K):
    """Softmax member (``theory.nonlinearity``): w = softmax(lambda p) over each sequence's L tokens
    (shifted by its maximum), T = sum w q, c = r lambda w (q - T), e = r w, r = (2/B)(T - y); the
    exponentials of the B L shifted arguments (all <= 0) in one vectorised loop (``exp_block``; K: its work space)."""
    B = PQ.shape[1] // L
    for b in range(B):
        lo, hi = b * L, (b + 1) * L
        zmax = lam * PQ[0, lo]
        for l in range(lo + 1, hi):
            zmax = max(zmax, lam * PQ[0, l])
        for l in range(lo, hi):
            CE[1, l] = lam * PQ[0, l] - zmax
    exp_block(CE[1], K)
    for b in range(B):
        lo, hi = b * L, (b + 1) * L
        total = 0.0
        for l in range(lo, hi):
            total += CE[1, l]
        T = 0.0
        for l in range(lo, hi):
            CE[1, l] = CE[1, l] / total
            T += CE[1, l] * PQ[1, l]
        rb = (T - y[b]) * two_over_b
        for l in range(lo, hi):
            CE[0, l] = rb * (lam * CE[1, l] * (PQ[1, l] - T))
            CE[1, l] = rb * CE[1, l]


@jit(inline=True)
def erf_coefficients(PQ, y, lam, two_over_b, L, CE, K, G):
    """erf member (the paper's gate): with g = erf(lambda p) and r = (2/B)(sum g q - y) per sequence,
    c = r lambda erf'(lambda p) q, e = r g (erf' = (2/sqrt(pi)) exp(-x^2)); on entry CE[1] = lambda p and
    CE[0] = -(lambda p)^2 (``sgd_step._draw_step``), whose exp, then erf from it, are taken here for all tokens at once
    (``exp_block``, ``erf_block``: vectorised; K, G: their work space)."""
    exp_block(CE[0], K)
    erf_block(CE[1], CE[0], K, G)
    scale = lam * _TWO_OVER_SQRT_PI
    for b in range(PQ.shape[1] // L):
        acc = 0.0
        for l in range(b * L, (b + 1) * L):
            acc += CE[1, l] * PQ[1, l]
        rb = (acc - y[b]) * two_over_b
        rs = rb * scale
        for l in range(b * L, (b + 1) * L):
            CE[1, l] = rb * CE[1, l]
            CE[0, l] = rs * (CE[0, l] * PQ[1, l])
