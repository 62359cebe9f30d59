"""Exact reduced simulator of online SGD: the overlap process in O(1) work per step, for every d >= 4.

Same algorithm as ``numerics.sgd.full.online_sgd_full`` (loss, gradients, projected step: see there);
the overlap trajectories have exactly the same law. Derivation in
docs/math/sgd-reduced.md#exact-reduced-simulator, in four steps:

1. Markov property: by rotation invariance, the law of the next (k, v) depends only on the overlaps.
2. Frame: k, v, k*, v* lie in a 4-dim subspace F with basis (k*, v*, f3, f4), in which
   k = (kappa, eta, k3, 0), v = (theta, nu, v3, v4), k3, v4 >= 0 (``cholesky_coordinates``). Each
   token is X = X^F + X^perp with X^perp ~ N(0, s_i^2 I) on F^perp independent of X^F, and the
   coefficients c_i, e_i of g_k = sum c_i X_i, g_v = sum e_i X_i depend on X^F only. A noise token's
   X^F is drawn only through its coordinates in a plane containing k and v; its parts off that plane
   enter g_k, g_v through two sums over the noise tokens, drawn as one Gaussian pair per step
   (``plane``, docs/math/sgd-reduced.md#aggregated-noise-tokens).
3. The step: u = sum c_i X_i^perp, w = sum e_i X_i^perp are, given X^F, u = (L A)_11 f5,
   w = (L A)_21 f5 + (L A)_22 f6 with L L^T = Sigma (their 2x2 covariance) and A lower triangular,
   a11^2 ~ chi2(d-4), a22^2 ~ chi2(d-5), n21 ~ N(0, 1) (Bartlett decomposition of the
   Wishart(d-4, Sigma) Gram matrix of (u, w); d = 4, 5 included).
4. Normalise k~, v~ in (k*, v*, f3, ..., f6), back to the Cholesky form (small parts as norms).
Cost per step O(n_runs B L), independent of d (d only enters through s = sqrt(d/2) and the chi2
degrees of freedom). d < 4 raises ValueError: use ``online_sgd_full``, cheap at such d.
"""

from __future__ import annotations

import functools

import numpy as np
from scipy.special import erf

from theory.parameters import Overlaps

from .frame import cholesky_coordinates, frame_overlaps
from .ending import RunEnding, advance_blocks
from .fresh_risk import fresh_test_risk
from .plane import cholesky2, complement_parts, draw_tokens, frame_tokens, plane_basis, project_complement, token_numbers
from .trajectory import (SGDTrajectory, check_reduced, child_streams, lambda_path, logged_steps, logged_trajectory,
                         progress_bar, run_generators, run_streams, stream_states)  # the last four also for the tests

__all__ = ["online_sgd_reduced", "sgd_step"]

_TWO_OVER_SQRT_PI = 2.0 / np.sqrt(np.pi)
_TINY = np.finfo(float).tiny
_CHUNK_FLOATS = 2**21  # random numbers drawn ahead per block of steps (16 MiB)


def _informative_mean(d):  # the informative token's mean along k* (docs/math/sgd-reduced.md#exact-reduced-simulator)
    return np.sqrt(d / 2.0)


def _draw_noise(streams, n, d, B, eps):
    """The target noise eps xi (R, n, B) and the Bartlett variables (a11, n21, a22), each (R, n), of n steps for every
    run, from streams[i][1:4]: Generators, or SFC64 states (R, 4, 4) (``kernels.sgd_noise``: the same numbers)."""
    R, m = len(streams), d - 4  # m: Wishart degrees of freedom
    if isinstance(streams, np.ndarray):
        from ..kernels.sgd_noise import noise_draws

        out = np.empty((R, n, B)), np.empty((R, n)), np.empty((R, n)), np.empty((R, n))
        noise_draws(streams, B, m, float(eps), *out)
        return out
    stack = (lambda xs: xs[0][None]) if R == 1 else np.stack
    extra = stack([s[1].standard_normal((n, B + 1)) for s in streams])
    n21 = extra[:, :, B] if m >= 1 else np.zeros((R, n))
    a11 = np.sqrt(stack([s[2].chisquare(m, n) for s in streams])) if m >= 1 else np.zeros((R, n))
    a22 = np.sqrt(stack([s[3].chisquare(m - 1, n) for s in streams])) if m >= 2 else np.zeros((R, n))
    return eps * extra[:, :, :B], a11, n21, a22


def _draw_chunk(streams, n, d, B, L, gamma, eps):
    """Randomness of n steps for every run: the token-stream numbers (``plane.draw_tokens``: informative
    tokens in F with the informative mean added, (R, n, 4, B); noise tokens' plane coordinates (a, b),
    (R, n, 2, B (L-1)); the complement normals, (R, n, 2, 4)), the targets Y (R, n, B) and the Bartlett
    variables (a11, n21, a22), each (R, n). streams[i] = (tokens, extra, chi2_a, chi2_b) of run i: each is
    consumed in order, so a run's numbers do not depend on the chunking."""
    inf, ab, Z = draw_tokens(streams, n, d, B, L, gamma, _informative_mean(d))
    noise, a11, n21, a22 = _draw_noise(streams, n, d, B, eps)
    return inf, ab, Z, inf[:, :, 1] + noise, a11, n21, a22


def _coefficients(KV, x, y, lam, two_over_b, B):
    """PQ = (p, q) = (<X, k>, <X, v>) and the gradient coefficients CE = (c, e), both (R, 2, B L),
    from the tokens in F, x (R, 4, B L), and the targets y (R, B)."""
    R = x.shape[0]
    PQ = KV @ x
    lp = lam * PQ[:, 0]
    gate = erf(lp)
    r = np.add.reduce((gate * PQ[:, 1]).reshape(R, B, -1), axis=-1)
    r -= y
    r *= two_over_b
    CE = np.empty_like(PQ)
    np.multiply(r[:, :, None], gate.reshape(R, B, -1), out=CE[:, 1].reshape(R, B, -1))
    np.multiply(lp, lp, out=lp)
    np.negative(lp, out=lp)
    np.exp(lp, out=lp)
    lp *= PQ[:, 1]
    r *= lam * _TWO_OVER_SQRT_PI
    np.multiply(r[:, :, None], lp.reshape(R, B, -1), out=CE[:, 0].reshape(R, B, -1))
    return PQ, CE


def _perp_pair(CE, scale2, a11, n21, a22):
    """Coordinates (u5, w5, w6) of u = sum c_i X_i^perp = u5 f5 and w = sum e_i X_i^perp
    = w5 f5 + w6 f6: the rows of L A (Bartlett, module docstring step 3), with L L^T = Sigma."""
    l11, l21, l22 = cholesky2((CE * scale2) @ CE.transpose(0, 2, 1))
    return l11 * a11, l21 * a11 + l22 * n21, l22 * a22


def _advance(KV, x, PQ, CE, alpha, u5, w5, w6, F, off_plane=None):
    """The projected, normalised step (module docstring steps 3-4) given the coefficients and the
    perpendicular pair -alpha (u, w) in coordinates (u5; w5, w6). F: an (R, 2, 6) work array
    whose entries F[:, 0, 5] are zero. ``off_plane``: None, or the noise tokens' in-frame parts (U, W)
    (R, 2, 4) that x leaves out (``plane.complement_parts``). Returns the new Cholesky coordinates KV."""
    G = CE @ x.transpose(0, 2, 1)               # in-frame parts of g_k, g_v
    if off_plane is not None:
        G += off_plane
    A = np.add.reduce(CE * PQ, axis=-1)         # <k, g_k>, <v, g_v>
    A *= alpha
    A += 1.0
    # (k~, v~) in the frame (k*, v*, f3, f4, f5, f6)
    np.multiply(KV, A[:, :, None], out=F[:, :, :4])
    G *= alpha
    F[:, :, :4] -= G
    F[:, 0, 4] = u5
    F[:, 1, 4] = w5
    F[:, 1, 5] = w6
    F /= np.sqrt(np.add.reduce(F * F, axis=-1))[:, :, None]
    rest = F[:, :, 2:]
    M = np.add.reduce(rest[:, :1] * rest, axis=-1)  # |k_rest|^2, <k_rest, v_rest>
    k_rest = np.sqrt(M[:, 0])
    beta = M[:, 1] / np.maximum(M[:, 0], _TINY)  # M0 = 0 forces M1 = 0
    res = rest[:, 1] - beta[:, None] * rest[:, 0]
    out = np.empty_like(KV)
    out[:, :, :2] = F[:, :, :2]
    out[:, 0, 2] = k_rest
    out[:, 0, 3] = 0.0
    out[:, 1, 2] = beta * k_rest
    out[:, 1, 3] = np.sqrt(np.add.reduce(res * res, axis=-1))
    return out


def sgd_step(KV, x, y, lam, alpha, two_over_b, B, scale2, u_a11, u_n21, u_a22, F,
              coefficients=_coefficients, complement=None):
    """One SGD step on KV (R, 2, 4); u_* = -alpha (a11, n21, a22). x: the tokens in F (R, 4, B L), in full,
    or, with ``complement`` = (noise, QZ) (``plane``: the noise tokens' indicator (B L,) and the projected
    complement normals (R, 2, 4)), with the noise tokens reduced to their plane parts (``plane.frame_tokens``)."""
    PQ, CE = coefficients(KV, x, y, lam, two_over_b, B)
    u5, w5, w6 = _perp_pair(CE, scale2, u_a11, u_n21, u_a22)
    off_plane = None if complement is None else complement_parts(CE, *complement)
    return _advance(KV, x, PQ, CE, alpha, u5, w5, w6, F, off_plane)


def _advance_numpy(KV, streams, lam, alpha, shape, scale2, snap_at, work, coefficients=_coefficients):
    """The steps of one chunk (reference route: ``_draw_chunk``, ``sgd_step``); returns the final KV
    and the KV after each step of ``snap_at`` (indices into the chunk); shape = (d, B, L, gamma, eps)."""
    d, B, L, gamma, eps = shape
    inf, ab, Z, Y, a11, n21, a22 = _draw_chunk(streams, len(lam), d, B, L, gamma, eps)
    lam_list, snaps, wanted = lam.tolist(), [], set(snap_at.tolist())
    noise = (np.arange(B * L) % L != 0).astype(float)  # the noise tokens' indicator
    for j in range(len(lam_list)):
        E = plane_basis(KV)[0]
        KV = sgd_step(KV, frame_tokens(E, inf[:, j], ab[:, j], L), Y[:, j], lam_list[j], alpha, 2.0 / B, B, scale2,
                       -alpha * a11[:, j], -alpha * n21[:, j], -alpha * a22[:, j], work, coefficients,
                       (noise, project_complement(E, Z[:, j])))
        if j in wanted:
            snaps.append(KV)
    return KV, snaps


def _advance_kernel(KV, streams, lam, alpha, shape, scale2, snap_at, work, member="erf"):
    """``_advance_numpy`` by ``kernels.sgd_step.sgd_reduced_runs`` (member "erf" or "softmax") on the runs' SFC64 states
    (R, 4, 4) (``run_streams``; tokens drawn in the kernel, the rest by ``_draw_noise``): the same numbers."""
    from ..kernels.sgd_step import ERF, SOFTMAX, sgd_reduced_runs

    d, B, L, gamma, eps = shape
    KV, rows, snaps = np.array(KV, order="C"), np.full(len(lam), -1), np.empty((len(snap_at),) + KV.shape)
    rows[snap_at] = np.arange(len(snap_at))
    noise, a11, n21, a22 = _draw_noise(streams, len(lam), d, B, eps)
    sgd_reduced_runs(KV, streams, float(gamma), float(_informative_mean(d)), noise, -alpha * a11, -alpha * n21,
                     -alpha * a22, np.ascontiguousarray(lam), float(alpha), 2.0 / B, L, rows, snaps,
                     {"erf": ERF, "softmax": SOFTMAX}[member])
    return KV, list(snaps)


def _chunk_steps(n_steps, n_runs, B, L, kernel):
    """Steps per block of numbers drawn ahead (``_CHUNK_FLOATS`` floats; the kernel draws the tokens itself)."""
    per_step = n_runs * (B + 3 if kernel else token_numbers(B, L) + B + 3)
    return max(1, min(n_steps, _CHUNK_FLOATS // per_step))


def _route(engine, coefficients):
    """The steps of a chunk: kernel or NumPy route (``coefficients``: NumPy unless the kernel has their member)."""
    if coefficients is None:
        return _advance_kernel if engine == "kernel" else _advance_numpy
    member = getattr(coefficients, "kernel_member", None) if engine == "kernel" else None
    return (functools.partial(_advance_kernel, member=member) if member
            else functools.partial(_advance_numpy, coefficients=coefficients))


def online_sgd_reduced(problem, overlaps: Overlaps, *, alpha: float, n_steps: int,
                       batch_size: int, rng, log_every: int = 1, test_size: int = 0,
                       progress: bool = False, engine: str = "kernel",
                       coefficients=None, until=None, population_risk: bool = True) -> SGDTrajectory:
    """Online SGD (``numerics.sgd.full``) simulated exactly on the overlaps (module docstring).

    overlaps: initial overlaps, array fields of shape (n_runs,) (e.g. from
    ``numerics.dynamics.initial.sample_initial_overlaps``). ``rng``: a Generator or one per run; run i's training
    streams and its test samples come from children of its generator, each consumed in order (drawn ahead in blocks
    of steps): a run uses the same random numbers whichever other runs are simulated with it (results equal up to
    the summation order of vectorised reductions) and whatever the block length (bit-identical); ``run_streams``. Lambda and logging
    conventions as ``online_sgd_full``. test_size > 0 logs the empirical risk on a fresh test set of that size at
    every logged step (``test_risk_kind = "fresh"``): exact marginal law at each step; the full simulator's fixed
    test set also correlates the steps, which this does not reproduce. Requires d >= 4; no d-dimensional array is
    ever formed. ``progress``: a tqdm bar (per block of pre-drawn steps). ``engine``: "kernel" (compiled,
    ``numerics.kernels``, the default) or "numpy" (the reference route): the same random numbers, the same
    trajectories to round-off. ``coefficients``: another predictor's (PQ, CE) map (signature of ``_coefficients``;
    ``numerics.nonlinearity.sgd``; exact for any predictor of (<X_l, k>, <X_l, v>)), on the kernel if it has their
    member (``_route``), else NumPy; test_size 0. ``until``: None, or a map from the logged overlaps (dict of
    (n_runs,) arrays) to a boolean per run; a run ends at the first logged step where it holds, its later rows NaN
    (``numerics.sgd.ending``). ``population_risk`` False: the logged population risk is None (the closed form costs
    ~1 us per logged run, more than a step at B L = 10, for callers that read the overlaps only).
    """
    d, L, gamma, eps = check_reduced(problem, alpha, n_steps, batch_size, log_every, test_size, engine, coefficients)
    KV = cholesky_coordinates(overlaps)
    n_runs = KV.shape[0]
    advance = _route(engine, coefficients)
    kernel = getattr(advance, "func", advance) is _advance_kernel
    train, test = run_streams(rng, n_runs, test_size, kernel)
    lam = lambda_path(problem, n_steps)
    steps = logged_steps(n_steps, log_every)
    scale2, work = np.ones(batch_size * L), np.zeros((n_runs, 2, 6))
    scale2[::L] = gamma * gamma
    frames = np.empty((len(steps), n_runs, 2, 4))  # KV at the logged steps (step 0 first; NaN once a run ended)
    frames[0], ending = KV, RunEnding(until, n_runs, test_size)
    ending.update(frames[0])
    chunk = ending.block(_chunk_steps(n_steps, n_runs, batch_size, L, kernel), n_steps, log_every)
    bar = progress_bar(progress, n_steps, "SGD steps (reduced)")
    KV = advance_blocks(KV, train, advance, lam, steps, chunk, (alpha, (d, batch_size, L, gamma, eps), scale2), work,
                        ending, frames, bar)
    bar.update(n_steps - bar.n)
    bar.close()
    if not np.all(np.isfinite(KV)):
        raise FloatingPointError("online_sgd_reduced produced non-finite overlaps (the step alpha is probably too "
                                 "large for this d)")
    # The logged risks after the run (the test streams are consumed in the order of the logged steps, as they would
    # be step by step): the population risk in one call, the fresh test risk one logged step after the other.
    overlaps = {name: x.reshape(len(steps), n_runs) for name, x in frame_overlaps(frames.reshape(-1, 2, 4)).items()}
    test_risk = None if test_size == 0 else np.array([
        fresh_test_risk(test, frames[i], test_size, d, L, gamma, eps, float(lam[n]), engine) for i, n in enumerate(steps)])
    return logged_trajectory(steps, lam, overlaps, test_risk, "fresh" if test_size > 0 else "none", (d, L, gamma, eps),
                             alpha, batch_size, population_risk)
