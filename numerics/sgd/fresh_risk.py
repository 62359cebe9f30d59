"""The fresh test risk of the exact reduced simulator (``numerics.sgd.reduced``, ``test_size > 0``):
the empirical risk on new samples drawn from the exact law of their in-frame parts given the
overlaps (docs/math/sgd-reduced.md#exact-reduced-simulator)."""

from __future__ import annotations

import numpy as np
from scipy.special import erf

from .frame import frame_overlaps

__all__ = ["fresh_test_risk"]


def fresh_test_risk(gens, KV, n, d, L, gamma, eps, lam, engine="numpy"):
    """Empirical risk on n fresh samples per run, drawn from the exact law of their in-frame parts:
    noise tokens (p, q) ~ N(0, [[1, rho], [rho, 1]]); the informative token in the frame of F.
    ``engine``: "numpy" (the reference) or "kernel" (``numerics.kernels.fresh_risk_step``: the same
    numbers from the same generators, the same risks to round-off; ``gens`` may then also be the runs' SFC64
    states, an (R, 4) uint64 array advanced in place)."""
    if engine == "kernel":
        from ..kernels.erf_poly import erf_table
        from ..kernels.fresh_risk_step import fresh_risk_runs
        from ..kernels.sfc64 import set_sfc64_state, sfc64_state

        # gens: Generators, or the runs' SFC64 states (R, 4) (``online_sgd_reduced``'s kernel route), advanced
        states = gens if isinstance(gens, np.ndarray) else np.array([sfc64_state(g) for g in gens])
        out = np.empty(len(states))
        fresh_risk_runs(states, np.ascontiguousarray(KV), np.ascontiguousarray(frame_overlaps(KV)["rho"]), n,
                        float(d), L, float(gamma), float(eps), float(lam), erf_table(), out)
        if not isinstance(gens, np.ndarray):
            for g, state in zip(gens, states):
                set_sfc64_state(g, state)
        return out
    z = np.stack([g.standard_normal((n, 2 * (L - 1) + 5)) for g in gens])  # (R, n, .)
    rho = frame_overlaps(KV)["rho"][:, None, None]
    z1, z2 = z[:, :, :L - 1], z[:, :, L - 1:2 * (L - 1)]
    T = np.sum(erf(lam * z1) * (rho * z1 + np.sqrt(np.maximum(1 - rho * rho, 0.0)) * z2), axis=-1)
    x = gamma * z[:, :, 2 * (L - 1):2 * (L - 1) + 4]  # (R, n, 4)
    x[:, :, 0] += np.sqrt(d / 2.0)
    p0, q0 = (x @ KV.transpose(0, 2, 1)).transpose(2, 0, 1)
    Y = x[:, :, 1] + eps * z[:, :, -1]
    return np.mean((Y - T - erf(lam * p0) * q0) ** 2, axis=1)
