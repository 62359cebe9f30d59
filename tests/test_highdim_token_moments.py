"""The one-token moments on the directions the features read against the 4-dim product rule
(docs/math/highdim.md#the-directions-the-features-read)."""

import numpy as np
import pytest

from theory.highdim import frame_coordinates
from theory.highdim.token_moments import token_moments, token_moments_reference

EPS = np.finfo(float).eps
# generic states, the saddle, and states where v, v* or k* lie in the span of the others (rank-deficient QR)
STATES = [(0.3, 0.2, 0.1, -0.2, 0.15), (0.6, -0.4, 0.2, 0.1, -0.3), (-0.1, 0.7, -0.3, 0.4, 0.2),
          (0.0, 0.0, 0.0, 0.0, 0.0), (0.3, 1.0, 0.0, 0.0, 0.3), (1.0, 0.5, 0.0, 0.0, 0.5), (0.5, 0.5, 0.0, 0.0, 1.0)]
TOKENS = [dict(mean=np.sqrt(50.0), sd=0.5, informative=True), dict(mean=0.0, sd=1.0, informative=False)]


def _diagonals(m):
    """E[phi^2] and E[A^2 phi^2] for phi = (1, a, b, w, u) (11 features each)."""
    return [np.concatenate([[m["A"][j]], np.diagonal(m["ff"][j]), [m["ww"][j], m["uu"][j]]]) for j in (0, 2)]


@pytest.mark.parametrize("lam", [0.089, 1.0, 8.0])
@pytest.mark.parametrize("state", STATES)
def test_reduced_route_is_the_product_rule(state, lam):
    """Both routes integrate a polynomial of degree <= 6 exactly in the Gauss-Hermite coordinates on the same
    z1 rule, so they differ by round-off only: each entry E[A^j phi_r phi_s] is a sum over N nodes whose
    absolute terms add up to at most B_rs = (E[(1 + A^2) phi_r^2] + E[(1 + A^2) phi_s^2]) / 2
    (|A^j| <= 1 + A^2, |phi_r phi_s| <= (phi_r^2 + phi_s^2) / 2), and recursive summation of N terms errs by
    <= N eps B_rs; the reference's N (64 Hermite nodes per z1) bounds both routes'. Leaving out the t_perp
    correction changes aa, bb, ab by E[A^j w^2] E E^T etc., of the order of B itself."""
    k, v = frame_coordinates(*state)
    for token in TOKENS:
        new = token_moments(k, v, lam, **token)
        ref = token_moments_reference(k, v, lam, **token)
        # the reference counts its nodes: trapezoid on [-10, 10] at step 0.2 / max(1, lambda sd), 64 Hermite nodes each
        n_nodes = (int(round(20.0 * max(1.0, lam * token["sd"]) / 0.2)) + 1) * 64
        d0, d2 = _diagonals(ref)
        scale = d0 + d2
        bound = n_nodes * EPS * 0.5 * (scale[:, None] + scale[None, :])     # (11, 11) over phi = (1, a, b, w, u)
        for key, rows, cols in (("A", 0, 0), ("f", 0, slice(1, 9)), ("ff", slice(1, 9), slice(1, 9)),
                                ("ww", 9, 9), ("uu", 10, 10), ("wu", 9, 10)):
            err = np.abs(np.asarray(new[key]) - np.asarray(ref[key]))
            assert np.all(err <= 2.0 * bound[rows, cols]), (key, token["informative"], np.max(err))
        assert new["s2"] == ref["s2"]

