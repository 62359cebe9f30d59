import mpmath
import numpy as np
import pytest


@pytest.fixture(autouse=True)
def _reset_mpmath():
    """Tests must not leak mpmath precision changes into each other."""
    dps = mpmath.mp.dps
    yield
    mpmath.mp.dps = dps


@pytest.fixture
def rng(request):
    """A Generator seeded from the test's name, so each test has its own reproducible stream."""
    seed = np.frombuffer(request.node.nodeid.encode()[:64].ljust(64, b"\0"), dtype=np.uint32)
    return np.random.default_rng(np.random.SeedSequence(seed.tolist()))


@pytest.fixture
def agg_backend(monkeypatch):
    """Figures are drawn off-screen (the package never selects a backend itself)."""
    import matplotlib

    monkeypatch.setenv("MPLBACKEND", "Agg")
    matplotlib.use("Agg")


@pytest.fixture(scope="session")
def quick_claim():
    """``quick_claim(claim_id)``: the claim's quick-mode result at seed 0, computed once per session
    and shared by the tests that only read it."""
    from figures.verify import discover_claims

    claims = {c.claim_id: c for c in discover_claims()}
    cache = {}

    def get(claim_id):
        if claim_id not in cache:
            cache[claim_id] = claims[claim_id](quick=True, seed=0)
        return cache[claim_id]

    return get
