"""``numerics.kernels.sfc64``: the kernels' standard normals are NumPy's, bit for bit, from the same SFC64 state,
and leave the generator where NumPy would."""

import functools

import numpy as np
import pytest


@functools.cache
def _draws():
    """Compiled once per process and cached with the kernels (tests/compiled_in_tests.py)."""
    from compiled_in_tests import njit_over_kernels

    import numerics.kernels.sfc64 as ks

    @njit_over_kernels
    def draws(state, out):
        a, b, c, w = state[0], state[1], state[2], state[3]
        for i in range(out.size):
            out[i], a, b, c, w = ks.sfc64_normal(a, b, c, w)
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
        np.testing.assert_array_equal(out.view(np.uint64), ref.standard_normal(n).view(np.uint64))  # signed zeros too
        assert str(ker.bit_generator.state) == str(ref.bit_generator.state)
        blocks.append(out)
    assert np.sum(np.abs(blocks[0]) > 3.6541528853610088) > 300  # the tail branch ran (~520 expected)

def test_other_bit_generators_are_refused():
    from numerics.kernels.sfc64 import sfc64_state

    with pytest.raises(ValueError, match="gen=.*SFC64"):
        sfc64_state(np.random.default_rng(0))


@functools.cache
def _chisquare_draws():
    """Compiled once per process and cached with the kernels (tests/compiled_in_tests.py)."""
    from compiled_in_tests import njit_over_kernels

    import numerics.kernels.sfc64 as ks

    @njit_over_kernels
    def draws(state, df, out, hoisted):
        a, b, c, w = state[0], state[1], state[2], state[3]
        bb, cc = ks.gamma_constants(df / 2.0)
        for i in range(out.size):
            if hoisted:
                out[i], a, b, c, w = ks.sfc64_chisquare_above_two(bb, cc, a, b, c, w)
            else:
                out[i], a, b, c, w = ks.sfc64_chisquare(df, a, b, c, w)
        state[0], state[1], state[2], state[3] = a, b, c, w

    return draws


@pytest.mark.parametrize("df", [0.6, 1.0, 2.0, 3.0, 5.0, 6.0, 75.0, 76.0])
def test_chisquare_draws_and_state_are_numpys(df):
    """``sfc64_chisquare`` against ``Generator.chisquare`` on the same SFC64 state: 10^5 draws per degrees of
    freedom, bit for bit, on each of NumPy's three branches of standard_gamma(df / 2) (below 1: rejection on
    the exponential ziggurat; 1: the exponential itself; above 1: Marsaglia-Tsang on normals), and the same
    final state."""
    from numerics.kernels.sfc64 import sfc64_state

    draws = _chisquare_draws()
    ref, ker = (np.random.Generator(np.random.SFC64(int(df * 10))) for _ in range(2))
    out, state = np.empty(100_000), sfc64_state(ker)
    draws(state, df, out, False)
    np.testing.assert_array_equal(out, ref.chisquare(df, out.size))
    np.testing.assert_array_equal(state, sfc64_state(ref))


@pytest.mark.parametrize("df", [2.5, 3.0, 76.0, 9996.0])
def test_chisquare_above_two_with_constants_formed_once_is_numpys(df):
    """``sfc64_chisquare_above_two`` with ``gamma_constants(df / 2)`` formed once before the loop (as
    ``sgd_noise.noise_draws`` draws the Bartlett variables) against ``Generator.chisquare``: 10^5 draws bit for bit
    and the same final state (df 9996: the high-dimensional figures' Wishart degrees of freedom)."""
    from numerics.kernels.sfc64 import sfc64_state

    draws = _chisquare_draws()
    ref, ker = (np.random.Generator(np.random.SFC64(int(df * 10) + 1)) for _ in range(2))
    out, state = np.empty(100_000), sfc64_state(ker)
    draws(state, df, out, True)
    np.testing.assert_array_equal(out, ref.chisquare(df, out.size))
    np.testing.assert_array_equal(state, sfc64_state(ref))


def _spawned(seq):
    seq.spawn(3)
    return seq


@pytest.mark.parametrize("seq", [
    lambda: np.random.SeedSequence(0),
    lambda: np.random.SeedSequence(20250115).spawn(40)[37],
    lambda: np.random.SeedSequence(2**100 + 5, spawn_key=(7, 2**40)),
    lambda: np.random.SeedSequence([1, 2, 3, 4, 5, 6], spawn_key=(1,)),
    lambda: np.random.SeedSequence(3, pool_size=8),
    lambda: np.random.SeedSequence((123, 2**63 + 1), spawn_key=(0, 1, 2)),
    lambda: _spawned(np.random.SeedSequence(9)),
])
def test_child_states_are_those_of_numpys_generators(seq):
    """``sfc64_child_states`` equals the state of ``SFC64(child)`` for the next 5 children of SeedSequences with
    small, large (several 32-bit words) and sequence entropy, long and large spawn keys, another pool size and
    children already spawned; the parent is not advanced."""
    from numerics.kernels.seed_sequence import sfc64_child_states
    from numerics.kernels.sfc64 import sfc64_state

    parent = seq()
    spawned = parent.n_children_spawned
    got = sfc64_child_states([parent, parent], 5)
    assert parent.n_children_spawned == spawned
    want = np.array([sfc64_state(np.random.Generator(np.random.SFC64(child))) for child in parent.spawn(5)])
    np.testing.assert_array_equal(got, np.stack([want, want]))
