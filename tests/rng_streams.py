"""Random streams of the statistical tests beyond the ``rng`` fixture (tests/conftest.py).

``sfc64(rng)``: an SFC64 generator seeded from ``rng``'s seed sequence (the test's own reproducible
seed). On it the toolkit draws its standard normals by a compiled loop (``numerics.kernels.sfc64``:
NumPy's ``standard_normal`` numbers from the same state, bit for bit), and the compiled Monte-Carlo
kernel draws them itself: numbers of the same law as the default PCG64 stream's, at ~1/4 of the CPU
per normal. The tests that draw millions of normals take it; their statistics do not depend on the
bit generator (only their random stream does).
"""

import numpy as np


def sfc64(rng: np.random.Generator) -> np.random.Generator:
    """An SFC64 ``Generator`` on ``rng``'s seed sequence."""
    return np.random.Generator(np.random.SFC64(rng.bit_generator.seed_seq))
