"""Online SGD on fresh minibatches with explicit d-dimensional vectors (docs/math/dynamics.md#the-papers-experiments, last row).

At step t a minibatch of B fresh samples (X_b, Y_b) of the task (docs/math/task.md#the-task; the informative token is
put first, which changes nothing since T is permutation invariant) gives the loss of the authors'
code, the mean squared error over the batch,

    l(k, v) = (1/B) sum_b (Y_b - T(X_b))^2,   T(X) = sum_l erf(lambda_t <X_l,k>) <X_l,v>,

with Euclidean gradients (r_b = T(X_b) - Y_b, p_bl = <X_bl,k>, q_bl = <X_bl,v>)

    g_k = sum_bl c_bl X_bl,  c_bl = (2/B) r_b lambda_t erf'(lambda_t p_bl) q_bl,
    g_v = sum_bl e_bl X_bl,  e_bl = (2/B) r_b erf(lambda_t p_bl),

and the simultaneous projected step of paper Definition 1 with the stochastic gradients:
k <- normalize(k - alpha (I - k k^T) g_k), v <- normalize(v - alpha (I - v v^T) g_v).
Exact at every d; cost O(n_runs B L d) per step, most of it drawing the B L d Gaussian coordinates.
The runs advance in blocks whose minibatch fits in a core's cache (``_BLOCK_FLOATS``), and (p, q) and
(g_k, g_v) are each one batched product over the block's tokens, so the coordinates are read twice after
they are drawn, while still in cache (the reference route, ``engine="numpy"``). The default route is the compiled
loop ``numerics.kernels.sgd_full_step``: the same numbers drawn by numba from the same generators, each token's
projections taken once it is drawn, the same trajectories to round-off (docs/math/kernels.md#full-sgd). Sibling: ``numerics.sgd.reduced.online_sgd_reduced`` (the same law
of the overlaps at a cost independent of d).
"""

from __future__ import annotations

import numpy as np
from scipy.special import erf

from ..kernels import check_engine
from .trajectory import (SGDTrajectory, TrajectoryLog, check_settings, child_streams,
                             lambda_path, logged_steps, progress_bar, run_generators, stream_states)

__all__ = ["online_sgd_full", "minibatch_loss_grad", "sample_batch", "sphere_step"]

_TWO_OVER_SQRT_PI = 2.0 / np.sqrt(np.pi)
# Coordinates of the minibatches of one block of runs (1 MiB): the block is drawn, projected and summed
# while it sits in a core's 2 MiB L2 cache. Measured at d = 80, B L = 50, 2,000 runs (load ~9): 9.5 ns per
# coordinate and step in blocks of 32 runs, against 11.5 for all runs at once and 8.2 for drawing alone.
_BLOCK_FLOATS = 2**17
# The kernel route keeps the logged (k, v) of this many coordinates (8 MiB) before recording them: written once per
# logged step and run, they need not stay in cache, and fewer, larger blocks share the recording's per-call cost
# (at 1 MiB, 3,800 calls of ~60 us in the 8,000 runs x 31 logged steps of sgd-reduced-equals-full-in-law).
_SNAP_FLOATS = 2**20
# Unit-norm and orthogonality of the inputs are checked up to this (a few ulps times sqrt(d) slack).
_UNIT_TOL = 1e-10


def sample_batch(gens, k_star, v_star, n, L, gamma, eps):
    """n fresh samples per run: X of shape (n_runs, n, L, d) with X[:, :, 0] the informative token
    N(sqrt(d/2) k*, gamma^2 I) and the others N(0, I); Y = <X_0, v*> + eps xi, shape (n_runs, n).
    Run i draws from gens[i] only (one call), so its numbers do not depend on the other runs."""
    n_runs, d = k_star.shape
    size = n * L * d
    z = np.empty((n_runs, size + n))
    for g, row in zip(gens, z):  # into place: the same numbers as g.standard_normal(size + n), no stacking copy
        g.standard_normal(out=row)
    X = z[:, :size].reshape(n_runs, n, L, d)
    X[:, :, 0, :] *= gamma
    X[:, :, 0, :] += np.sqrt(d / 2.0) * k_star[:, None, :]
    Y = np.einsum("rnd,rd->rn", X[:, :, 0, :], v_star) + eps * z[:, size:]
    return X, Y


def token_products(X, k, v):
    """(p, q) = (<X_l, k>, <X_l, v>) for every token, each (n_runs, n, L): one batched product."""
    R, n, L, d = X.shape
    PQ = X.reshape(R, n * L, d) @ np.stack((k, v), axis=2)
    return PQ[..., 0].reshape(R, n, L), PQ[..., 1].reshape(R, n, L)


def token_sums(c, e, X):
    """(sum_bl c_bl X_bl, sum_bl e_bl X_bl), each (n_runs, d): one batched product."""
    R, n, L, d = X.shape
    CE = np.stack((c.reshape(R, n * L), e.reshape(R, n * L)), axis=1)
    G = CE @ X.reshape(R, n * L, d)
    return G[:, 0], G[:, 1]


def _predict(X, k, v, lam):
    p, q = token_products(X, k, v)
    gate = erf(lam * p)
    return p, q, gate, np.sum(gate * q, axis=-1)


def minibatch_loss_grad(X, Y, k, v, lam):
    """Loss (1/B) sum_b (Y_b - T(X_b))^2 and its Euclidean gradients (g_k, g_v), per run.

    X: (n_runs, B, L, d), Y: (n_runs, B), k, v: (n_runs, d). Formula in the module docstring.
    """
    p, q, gate, T = _predict(X, k, v, lam)
    r = T - Y
    B = X.shape[1]
    e = (2.0 / B) * r[..., None] * gate
    c = (2.0 / B) * r[..., None] * (lam * _TWO_OVER_SQRT_PI) * np.exp(-(lam * p) ** 2) * q
    g_k, g_v = token_sums(c, e, X)
    return np.mean(r * r, axis=1), g_k, g_v


def _test_risk(X, Y, k, v, lam):
    T = _predict(X, k, v, lam)[3]
    return np.mean((Y - T) ** 2, axis=1)


def sphere_step(x, g, alpha):
    """One projected step on the unit sphere, rows of x: normalise(x - alpha (g - <x, g> x))."""
    y = x - alpha * (g - np.sum(x * g, axis=1, keepdims=True) * x)
    return y / np.linalg.norm(y, axis=1, keepdims=True)


def _check_vectors(d, k, v, k_star, v_star):
    arrays = [np.asarray(a, dtype=float) for a in (k, v, k_star, v_star)]
    for name, a in zip(("k", "v", "k_star", "v_star"), arrays):
        if a.ndim != 2 or a.shape[1] != d or a.shape[0] != arrays[0].shape[0]:
            raise ValueError(f"{name} has shape {a.shape}: need (n_runs, d) with d={d}, the same n_runs")
        if not np.all(np.abs(np.linalg.norm(a, axis=1) - 1) <= _UNIT_TOL):
            raise ValueError(f"{name} is not allowed: its rows must be unit vectors")
    if not np.all(np.abs(np.sum(arrays[2] * arrays[3], axis=1)) <= _UNIT_TOL):
        raise ValueError("k_star, v_star are not allowed: they must be orthogonal")
    return arrays


def _advance_numpy(k, v, k_star, v_star, train, lam, alpha, batch_size, shape, loss_grad, steps, record):
    """The reference route: all runs step by step, in blocks of runs whose minibatch fits in cache
    (``_BLOCK_FLOATS``); ``record(n)`` at each logged step n."""
    d, L, gamma, eps = shape
    n_runs, n_steps = k.shape[0], len(lam) - 1
    size = max(1, _BLOCK_FLOATS // (batch_size * L * d))  # runs per block (a run's numbers do not depend on it)
    blocks = [slice(i, i + size) for i in range(0, n_runs, size)]
    next_log = iter(steps)
    target = next(next_log)
    for n in range(n_steps + 1):
        if n == target:
            record(n, k, v)
            target = next(next_log, -1)
        if n == n_steps:
            break
        for block in blocks:
            X, Y = sample_batch(train[block], k_star[block], v_star[block], batch_size, L, gamma, eps)
            _, g_k, g_v = (loss_grad or minibatch_loss_grad)(X, Y, k[block], v[block], lam[n])
            k[block], v[block] = sphere_step(k[block], g_k, alpha), sphere_step(v[block], g_v, alpha)


def _advance_kernel(k, v, k_star, v_star, train, lam, alpha, batch_size, shape, steps, record, bar):
    """The compiled route (``numerics.kernels.sgd_full_step``): run by run, drawing each run's numbers
    from its training stream as ``sample_batch`` does; the (k, v) of the logged steps are kept for a
    block of runs and recorded by ``record`` (rows: runs of the block) as on the reference route; ``bar``
    advances per block of runs. ``train``: one Generator per run, or their SFC64 states (R, 4), advanced in place."""
    from ..kernels.erf_poly import erf_table
    from ..kernels.sfc64 import on_sfc64_state
    from ..kernels.sgd_full_step import sgd_full_kernel

    d, L, gamma, eps = shape
    n_runs = k.shape[0]
    rows = np.full(len(lam), -1)
    rows[steps] = np.arange(len(steps))
    lam_steps, table, shift = np.ascontiguousarray(lam[:-1]), erf_table(), np.sqrt(d / 2.0) * k_star
    v_star = np.ascontiguousarray(v_star)
    size = max(1, _SNAP_FLOATS // (2 * len(steps) * d))  # runs whose logged vectors are kept at once
    for lo in range(0, n_runs, size):
        block = slice(lo, min(n_runs, lo + size))
        snaps = np.empty((len(steps), block.stop - lo, 2, d))
        for r in range(lo, block.stop):
            step = lambda state: sgd_full_kernel(
                k[r], v[r], v_star[r], shift[r], state, gamma, eps, lam_steps, float(alpha), batch_size, L, rows,
                snaps[:, r - lo], table)
            if isinstance(train, np.ndarray):
                step(train[r])
            else:
                on_sfc64_state(train[r], step)
        for i, n in enumerate(steps):
            record(n, snaps[i, :, 0], snaps[i, :, 1], block, i)
        bar.update(round((len(lam) - 1) * block.stop / n_runs) - bar.n)


def _run_streams(rng, n_runs: int, *, as_states: bool, with_test: bool):
    """(train, test) of ``online_sgd_full``: each run's two children of its seed (``child_streams``), as
    Generators (test: None per run unless ``with_test``), or with ``as_states`` (the compiled route without a
    test set) the training children's SFC64 states (R, 4) and test None: ~2 us per run instead of ~45 us for a
    Generator and its state's round trip. Seed sequences given per run are advanced as ``child_streams`` does;
    a ``numerics.sgd.experiment.ChildSeeds`` builds a new SeedSequence at each access, so there is none to advance
    (and none is built: ``stream_states`` reads its fields)."""
    seeds = run_generators(rng, n_runs)
    if not as_states:
        # the test child is built only when a test set is drawn (a Generator costs ~20 us, per run)
        streams = [child_streams(g, 2, used=2 if with_test else 1) for g in seeds]
        return [s[0] for s in streams], [s[1] for s in streams]
    states = np.ascontiguousarray(stream_states(seeds, 2)[:, 0])
    if not isinstance(rng, np.random.Generator) and not hasattr(seeds, "seed_fields"):
        for seq in seeds:
            if isinstance(seq, np.random.SeedSequence):
                seq.spawn(2)
    return states, None


def online_sgd_full(problem, k, v, k_star, v_star, *, alpha: float, n_steps: int,
                    batch_size: int, rng, log_every: int = 1,
                    test_size: int = 0, progress: bool = False, loss_grad=None,
                    engine: str = "kernel", population_risk: bool = True) -> SGDTrajectory:
    """Run online SGD (module docstring) from (k, v) for n_runs independent runs at once.

    k, v, k_star, v_star: arrays (n_runs, d), d = problem.d, unit rows, k* ⟂ v*.
    ``rng``: a Generator or one Generator per run. Run i's training stream and test set come from
    two children spawned from its generator, so the trajectory does not depend on ``test_size``.
    ``problem``: a ``theory.Problem`` (constant lambda) or a ``ScheduledProblem`` whose lam is a
    schedule lambda_t (``numerics.dynamics.schedules``). Step t (t = 0..n_steps-1) uses lambda_t;
    the risks logged at step n use lambda_n.
    test_size > 0: a fixed test set of that size is sampled once per run (the paper uses 1000)
    and the empirical risk on it is logged (``test_risk_kind = "fixed"``).
    ``progress``: a tqdm bar of the steps (updated at the logged steps; per block of runs on the
    kernel route). ``loss_grad``: another predictor's map with the signature of ``minibatch_loss_grad``
    (``numerics.nonlinearity.sgd``; always the NumPy route); test_size must then be 0.
    ``engine``: "kernel" (compiled, ``numerics.kernels.sgd_full_step``, the default) or "numpy" (the
    reference route): the same random numbers, the same trajectories to round-off
    (docs/math/kernels.md#full-sgd). ``population_risk`` False: no closed-form risk is logged (None).
    """
    check_engine(engine)
    d, L, gamma, eps = check_settings(problem, alpha, n_steps, batch_size, log_every, test_size)
    if loss_grad is not None and test_size > 0:
        raise ValueError(f"test_size={test_size!r} is not allowed with loss_grad: the test risk is "
                         "the erf predictor's; use 0")
    k, v, k_star, v_star = _check_vectors(d, k, v, k_star, v_star)
    k, v = k.copy(), v.copy()  # advanced in place, block by block
    n_runs = k.shape[0]
    compiled = engine == "kernel" and loss_grad is None
    train, test = _run_streams(rng, n_runs, as_states=compiled and test_size == 0, with_test=test_size > 0)
    lam = lambda_path(problem, n_steps)
    steps = logged_steps(n_steps, log_every)
    log = TrajectoryLog(steps, n_runs, with_test=test_size > 0)
    X_test = Y_test = None
    if test_size > 0:
        X_test, Y_test = sample_batch(test, k_star, v_star, test_size, L, gamma, eps)
    bar = progress_bar(progress, n_steps, "SGD steps (full)")

    def record(n, k, v, runs=slice(None), row=None):
        ks, vs = k_star[runs], v_star[runs]
        overlaps = dict(kappa=np.sum(k * ks, 1), nu=np.sum(v * vs, 1),
                        theta=np.sum(v * ks, 1), eta=np.sum(k * vs, 1), rho=np.sum(k * v, 1))
        test_risk = None if X_test is None else _test_risk(X_test[runs], Y_test[runs], k, v, lam[n])
        log.record(overlaps, test_risk, row, runs)
        if row is None:
            bar.update(n - bar.n)

    shape = (d, L, gamma, eps)
    if compiled:
        _advance_kernel(k, v, k_star, v_star, train, lam, alpha, batch_size, shape, steps, record, bar)
    else:
        _advance_numpy(k, v, k_star, v_star, train, lam, alpha, batch_size, shape, loss_grad, steps, record)
    bar.close()
    return log.result(lam, "fixed" if test_size > 0 else "none", shape, alpha, batch_size, population_risk)
