"""NumPy's standard normals from an SFC64 state held in the compiled loop's registers.

``numpy.random.Generator(numpy.random.SFC64(...)).standard_normal()`` is NumPy's ziggurat
(``random_standard_normal`` in NumPy's ``distributions.c``, 256 layers, tables ``ki``, ``wi``, ``fi``)
on SFC64's 64-bit outputs: ``tmp = a + b + w; a = b ^ (b >> 11); b = c + (c << 3);
c = rotl(c, 24) + tmp; w = w + 1`` (state (a, b, c, w), output tmp, arithmetic mod 2^64). Numba's
``Generator.standard_normal`` runs the same ziggurat but fetches each 64-bit word through NumPy's
bit-generator function pointer: an opaque call per number, around which every live float register is
saved. Here the four state words are plain integers threaded through the loop (``sfc64_normal``), so
a kernel draws the same numbers in the same order as NumPy, bit for bit, and leaves the generator in
the state NumPy would (``sfc64_state`` before the loop, ``set_sfc64_state`` after it; tested against
``Generator.standard_normal`` in tests/test_kernels_sfc64.py). The ziggurat's rare branches
(0.7% of draws: the wedges and the tail beyond r = 3.654) are a separate, not inlined function.
``sfc64_chisquare`` is ``Generator.chisquare``'s draw (``random_chisquare``: 2 ``random_standard_gamma(df / 2)``,
Marsaglia and Tsang's method above shape 1, the exponential ziggurat and Johnk-type rejection at or below it)
on the same state, again bit for bit (tests/test_kernels_sfc64.py); ``sfc64_chisquare_above_two`` is the same draw
for df > 2 with Marsaglia and Tsang's constants (``gamma_constants``, a square root and a division) formed once
by the caller for a loop of draws of one df, not at every draw.
"""

from __future__ import annotations

import numpy as np

from ._jit import jit

__all__ = ["sfc64_state", "set_sfc64_state", "on_sfc64_state", "sfc64_next", "sfc64_normal", "sfc64_chisquare",
           "gamma_constants", "sfc64_chisquare_above_two"]

_U1, _U3, _U8, _U11, _U24, _U40 = (np.uint64(k) for k in (1, 3, 8, 11, 24, 40))
_LOW8, _MANTISSA = np.uint64(0xFF), np.uint64(0x000FFFFFFFFFFFFF)
_TO_UNIT = 1.0 / 9007199254740992.0  # 2^-53: next_double = (next64 >> 11) 2^-53


def _tables():
    """NumPy's ziggurat tables (``ziggurat_constants.h``) as numba's port of NumPy's distributions holds them:
    the normal's (ki, wi, fi, r, 1/r) and the exponential's (ke, we, fe, r)."""
    from numba.np.random.distributions import (fe_double, fi_double, ke_double, ki_double, we_double, wi_double,
                                               ziggurat_exp_r, ziggurat_nor_inv_r, ziggurat_nor_r)

    return (ki_double, wi_double, fi_double, float(ziggurat_nor_r), float(ziggurat_nor_inv_r),
            ke_double, we_double, fe_double, float(ziggurat_exp_r))


_KI, _WI, _FI, _R, _INV_R, _KE, _WE, _FE, _EXP_R = _tables()
# The normal's layer tables indexed by the word's low 9 bits, the layer (8 bits) and the sign (bit 8): wi with
# its sign (x (-w) = -(x w) exactly, so the same numbers as NumPy's multiply-then-negate), ki twice.
_SIGNED_WI, _KI_TWICE = np.concatenate([_WI, -_WI]), np.concatenate([_KI, _KI])
_LOW9, _U9 = np.uint64(0x1FF), np.uint64(9)


def sfc64_state(gen) -> np.ndarray:
    """The state words (a, b, c, w) of ``gen``'s SFC64 bit generator, a (4,) uint64 copy for a kernel."""
    bg = getattr(gen, "bit_generator", None)
    if not isinstance(bg, np.random.SFC64):
        raise ValueError(f"gen={gen!r} is not allowed: the kernel draws from a numpy Generator on the SFC64 bit "
                         "generator (numerics.sgd.trajectory.child_streams)")
    return np.array(bg.state["state"]["state"], dtype=np.uint64)


def set_sfc64_state(gen, state) -> None:
    """Leave ``gen`` in the state (a, b, c, w) a kernel advanced (its buffered 32-bit half unchanged)."""
    full = gen.bit_generator.state
    full["state"]["state"] = np.array(state, dtype=np.uint64)
    gen.bit_generator.state = full


def on_sfc64_state(gen, kernel):
    """``kernel(state)`` on ``gen``'s SFC64 state (``sfc64_state``), ``gen`` then left where the kernel left the
    state (``set_sfc64_state``); returns the kernel's result."""
    state = sfc64_state(gen)
    out = kernel(state)
    set_sfc64_state(gen, state)
    return out


@jit(inline=True)
def sfc64_next(a, b, c, w):
    """SFC64's next 64-bit output and state: (tmp, a, b, c, w) (module docstring)."""
    tmp = a + b + w
    return tmp, b ^ (b >> _U11), c + (c << _U3), ((c << _U24) | (c >> _U40)) + tmp, w + _U1


@jit
def _rare(idx, rabs, x, a, b, c, w):
    """The ziggurat's rejection branches for layer ``idx``: the accepted normal, or nan to draw again."""
    if idx == 0:  # the tail beyond r, Marsaglia's method (1 - U: no log(0))
        while True:
            r, a, b, c, w = sfc64_next(a, b, c, w)
            xx = -_INV_R * np.log1p(-(np.float64(r >> _U11) * _TO_UNIT))
            r, a, b, c, w = sfc64_next(a, b, c, w)
            yy = -np.log1p(-(np.float64(r >> _U11) * _TO_UNIT))
            if yy + yy > xx * xx:
                return (-(_R + xx) if (rabs >> _U8) & _U1 else _R + xx), a, b, c, w
    r, a, b, c, w = sfc64_next(a, b, c, w)
    if (_FI[idx - 1] - _FI[idx]) * (np.float64(r >> _U11) * _TO_UNIT) + _FI[idx] < np.exp(-0.5 * x * x):
        return x, a, b, c, w
    return np.nan, a, b, c, w


@jit(inline=True)
def sfc64_normal(a, b, c, w):
    """NumPy's next standard normal from the SFC64 state (a, b, c, w): (x, a, b, c, w). NumPy's layer is the
    word's low 8 bits, its sign bit 8 and its 52-bit magnitude the bits above; layer and sign index one signed
    table (``_SIGNED_WI``), which spares the branch-free negation (the same numbers, tested)."""
    while True:
        r, a, b, c, w = sfc64_next(a, b, c, w)
        signed = np.intp(r & _LOW9)
        rabs = (r >> _U9) & _MANTISSA
        x = np.float64(rabs) * _SIGNED_WI[signed]
        if rabs < _KI_TWICE[signed]:
            return x, a, b, c, w
        x, a, b, c, w = _rare(np.intp(r & _LOW8), rabs, x, a, b, c, w)
        if x == x:
            return x, a, b, c, w


@jit(inline=True)
def _sfc64_double(a, b, c, w):
    """NumPy's next_double of SFC64: (next64 >> 11) 2^-53, and the state."""
    r, a, b, c, w = sfc64_next(a, b, c, w)
    return np.float64(r >> _U11) * _TO_UNIT, a, b, c, w


@jit
def _sfc64_exponential(a, b, c, w):
    """NumPy's ``random_standard_exponential`` (256-layer ziggurat on next64 >> 3) from the state: (x, state)."""
    while True:
        r, a, b, c, w = sfc64_next(a, b, c, w)
        r = r >> _U3
        idx = np.intp(r & _LOW8)
        r = r >> _U8
        x = np.float64(r) * _WE[idx]
        if r < _KE[idx]:
            return x, a, b, c, w
        if idx == 0:
            u, a, b, c, w = _sfc64_double(a, b, c, w)
            return _EXP_R - np.log1p(-u), a, b, c, w
        u, a, b, c, w = _sfc64_double(a, b, c, w)
        if (_FE[idx - 1] - _FE[idx]) * u + _FE[idx] < np.exp(-x):
            return x, a, b, c, w


@jit
def _sfc64_gamma(shape, a, b, c, w):
    """NumPy's ``random_standard_gamma(shape)`` from the state, in its order of draws: (x, state)."""
    if shape == 1.0:
        return _sfc64_exponential(a, b, c, w)
    if shape == 0.0:
        return 0.0, a, b, c, w
    if shape < 1.0:
        while True:
            U, a, b, c, w = _sfc64_double(a, b, c, w)
            V, a, b, c, w = _sfc64_exponential(a, b, c, w)
            if U <= 1.0 - shape:
                X = U ** (1.0 / shape)
                if X <= V:
                    return X, a, b, c, w
            else:
                Y = -np.log((1 - U) / shape)
                X = (1.0 - shape + shape * Y) ** (1.0 / shape)
                if X <= V + Y:
                    return X, a, b, c, w
    bb, cc = gamma_constants(shape)
    return _marsaglia_tsang(bb, cc, a, b, c, w)


@jit(inline=True)
def gamma_constants(shape):
    """Marsaglia and Tsang's constants of a shape above 1, as ``random_standard_gamma`` forms them:
    (b, c) = (shape - 1/3, 1/sqrt(9 b)) (``sfc64_chisquare_above_two``)."""
    bb = shape - 1.0 / 3.0
    return bb, 1.0 / np.sqrt(9 * bb)


@jit(inline=True)
def _marsaglia_tsang(bb, cc, a, b, c, w):
    """``random_standard_gamma``'s draw above shape 1 given ``gamma_constants`` (bb, cc): (x, state)."""
    while True:
        while True:
            X, a, b, c, w = sfc64_normal(a, b, c, w)
            V = 1.0 + cc * X
            if V > 0.0:
                break
        V = V * V * V
        U, a, b, c, w = _sfc64_double(a, b, c, w)
        if U < 1.0 - 0.0331 * (X * X) * (X * X):
            return bb * V, a, b, c, w
        if np.log(U) < 0.5 * X * X + bb * (1.0 - V + np.log(V)):
            return bb * V, a, b, c, w


@jit(inline=True)
def sfc64_chisquare(df, a, b, c, w):
    """NumPy's ``Generator.chisquare(df)`` draw (2 standard_gamma(df / 2)) from the state: (x, a, b, c, w)."""
    x, a, b, c, w = _sfc64_gamma(df / 2.0, a, b, c, w)
    return 2.0 * x, a, b, c, w


@jit(inline=True)
def sfc64_chisquare_above_two(bb, cc, a, b, c, w):
    """``sfc64_chisquare(df)`` for df > 2 given ``gamma_constants(df / 2)`` (bb, cc), which a loop of draws of one df
    forms once (the same numbers): (x, a, b, c, w)."""
    x, a, b, c, w = _marsaglia_tsang(bb, cc, a, b, c, w)
    return 2.0 * x, a, b, c, w
