"""The SFC64 states of SeedSequence children, for many runs in one compiled call.

``numpy.random.Generator(numpy.random.SFC64(seq.spawn(n)[j]))`` costs ~10 us per child in Python objects (the
SeedSequence, the bit generator, the Generator) although the state it starts from is a short integer computation:
the child's entropy array is ``seq``'s run entropy (its ``entropy`` as 32-bit words, low word first, zero-padded to
``pool_size`` words since a child has a spawn key) followed by the words of its spawn key ``seq.spawn_key + (j,)``;
``SeedSequence`` hashes it into a pool of ``pool_size`` words (``mix_entropy``: O'Neill's seed_seq hash, 32-bit
arithmetic), ``generate_state(3, uint64)`` hashes the pool into six 32-bit words (two per 64-bit word, low first),
and ``SFC64`` starts from (a, b, c, w) = (those three words, 1) advanced 12 times. ``sfc64_child_states`` does all
of this in one compiled loop over the runs; the states equal those of NumPy's objects bit for bit
(tests/test_kernels_sfc64.py) and the parent is left as it was (its ``n_children_spawned`` is not advanced).
"""

from __future__ import annotations

import numpy as np

from ._jit import jit
from .sfc64 import sfc64_next

__all__ = ["sfc64_child_states"]

_MASK = np.uint64(0xFFFFFFFF)  # uint64 constants: numba would mix uint64 with int64 literals in float64
_INIT_A, _MULT_A, _INIT_B, _MULT_B = (np.uint64(k) for k in (0x43B0D7E5, 0x931E8875, 0x8B51F9DD, 0x58F38DED))
_MIX_L, _MIX_R, _XSHIFT, _U32 = (np.uint64(k) for k in (0xCA01F9DD, 0x4973F715, 16, 32))


def _words(value) -> list:
    """NumPy's ``_coerce_to_uint32_array`` of a non-negative int or a sequence of them: 32-bit words, low first."""
    if isinstance(value, (int, np.integer)):
        value = int(value)
        if value < 0:
            raise ValueError(f"value={value!r} is not allowed: SeedSequence entropy is non-negative")
        words = []
        while True:
            words.append(value & 0xFFFFFFFF)
            value >>= 32
            if value == 0:
                return words
    return [w for v in value for w in _words(v)]


@jit
def _hashmix(value, h):
    """O'Neill's hashmix on 32-bit words (in uint64 arithmetic, masked): (mixed value, next hash constant)."""
    value = (value ^ h) & _MASK
    h = (h * _MULT_A) & _MASK
    value = (value * h) & _MASK
    return value ^ (value >> _XSHIFT), h


@jit
def _mix(x, y):
    r = (_MIX_L * x - _MIX_R * y) & _MASK
    return r ^ (r >> _XSHIFT)


@jit
def _child_states(entropy, offsets, children, pool_size, out):
    """out[r, j] = the SFC64 state (a, b, c, w) of child children[r] + j of run r, whose entropy words (without
    the child's own spawn-key word) are entropy[offsets[r]:offsets[r + 1]]."""
    pool = np.empty(pool_size, dtype=np.uint64)
    seed = np.empty(6, dtype=np.uint64)
    for r in range(out.shape[0]):
        lo, hi = offsets[r], offsets[r + 1]
        for j in range(out.shape[1]):
            n = hi - lo + 1
            arr = np.empty(n, dtype=np.uint64)
            arr[:n - 1] = entropy[lo:hi]
            arr[n - 1] = np.uint64(children[r] + j)
            h = np.uint64(_INIT_A)
            for i in range(pool_size):
                pool[i], h = _hashmix(arr[i] if i < n else np.uint64(0), h)
            for src in range(pool_size):
                for dst in range(pool_size):
                    if src != dst:
                        v, h = _hashmix(pool[src], h)
                        pool[dst] = _mix(pool[dst], v)
            for src in range(pool_size, n):
                for dst in range(pool_size):
                    v, h = _hashmix(arr[src], h)
                    pool[dst] = _mix(pool[dst], v)
            h = np.uint64(_INIT_B)
            for i in range(6):
                v = (pool[i % pool_size] ^ h) & _MASK
                h = (h * _MULT_B) & _MASK
                v = (v * h) & _MASK
                seed[i] = v ^ (v >> _XSHIFT)
            a, b, c, w = (seed[0] | (seed[1] << _U32), seed[2] | (seed[3] << _U32), seed[4] | (seed[5] << _U32),
                          np.uint64(1))
            for _ in range(12):
                _, a, b, c, w = sfc64_next(a, b, c, w)
            out[r, j, 0], out[r, j, 1], out[r, j, 2], out[r, j, 3] = a, b, c, w


def sfc64_child_states(seqs, n: int) -> np.ndarray:
    """(len(seqs), n, 4) uint64: row r, j is the SFC64 state of ``SFC64(seqs[r].spawn(...)[j])``, the j-th of the
    next n children of the SeedSequence seqs[r] (those ``seqs[r].spawn(n)`` would return; module docstring)."""
    pool_size = {s.pool_size for s in seqs}
    if len(pool_size) > 1:
        raise ValueError(f"seqs={seqs!r} is not allowed: one pool_size for all")
    run_words, flat, offsets, children = {}, [], [0], []
    for s in seqs:
        key = (s.entropy if isinstance(s.entropy, int) else tuple(np.ravel(s.entropy).tolist()), s.pool_size)
        if key not in run_words:
            words = _words(s.entropy)
            run_words[key] = words + [0] * max(0, s.pool_size - len(words))
        flat += run_words[key] + _words(s.spawn_key)
        offsets.append(len(flat))
        children.append(s.n_children_spawned)
    if children and max(children) + n > 0xFFFFFFFF:
        raise ValueError("seqs=... is not allowed: a spawn index beyond 2^32 - 1")
    out = np.empty((len(seqs), n, 4), dtype=np.uint64)
    if seqs:
        _child_states(np.array(flat, dtype=np.uint64), np.array(offsets, dtype=np.int64),
                      np.array(children, dtype=np.int64), pool_size.pop(), out)
    return out
