"""``numerics.kernels.sfc64``: the kernels' standard normals are NumPy's, bit for bit, from the same SFC64 state,
and leave the generator where NumPy would."""

import functools

import numpy as np
import pytest


@functools.cache
def _draws():
    """Compiled once per process and cached with the kernels (tests/compiled_in_tests.py)."""
    from compiled_in_tests import njit_over_kernels

    from numerics.kernels.sfc64 import sfc64_normal

    @njit_over_kernels
    def draws(state, out):
        a, b, c, w = state[0], state[1], state[2], state[3]
        for i in range(out.size):
            out[i], a, b, c, w = sfc64_normal(a, b, c, w)
        state[0], state[1], state[2], state[3] = a, b, c, w

    return draws


@pytest.mark.parametrize("seed", [0, 12345])
def test_normals_and_state_are_numpys(seed):
    """2 x 10^6 normals per seed (about 14,000 through the ziggurat's wedges, 500 beyond its tail edge r = 3.654):
    every one equal to ``Generator.standard_normal``'s, and the generators end in the same state; a second block
    continues from the state written back. The numbers include the rare branches (|x| > r occurs)."""
    from numerics.kernels.sfc64 import set_sfc64_state, sfc64_state

    draws = _draws()
    ref, ker = (np.random.Generator(np.random.SFC64(seed)) for _ in range(2))
    blocks = []
    for n in (2_000_000, 1000):
        out, state = np.empty(n), sfc64_state(ker)
        draws(state, out)
        set_sfc64_state(ker, state)
        np.testing.assert_array_equal(out, ref.standard_normal(n))
        assert str(ker.bit_generator.state) == str(ref.bit_generator.state)
        blocks.append(out)
    assert np.sum(np.abs(blocks[0]) > 3.6541528853610088) > 300  # the tail branch ran (~520 expected)

def test_other_bit_generators_are_refused():
    from numerics.kernels.sfc64 import sfc64_state

    with pytest.raises(ValueError, match="gen=.*SFC64"):
        sfc64_state(np.random.default_rng(0))
