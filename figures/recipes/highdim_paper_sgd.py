"""Figure: the paper's online-SGD experiment through the effective ODE
(docs/math/highdim.md#the-papers-sgd-setting).

The paper's SGD setting (``numerics.PAPER_SGD``: d = 80, L = 10, B = 5, alpha = 1e-3 so c = alpha d = 0.08,
lambda_t = 2 / (1 + 1e-4 t), 200,000 steps), run by the exact reduced simulator from the fixed start
(kappa, nu) = (0.5, 0.5) on M, against two deterministic predictions in flow time tau = alpha t: the population
gradient flow (``numerics.overlap_flow``, the alpha -> 0 limit) and the effective ODE F + (c/d) D
(``numerics.highdim.effective_flow``, docs/math/highdim.md#the-effective-ode), both following
lambda(tau / alpha). The runs are compared up to the exact symmetry (k, v) -> (-k, -v): at d = 80 a few runs
in a hundred cross to the mirror solution while kappa dips near the saddle early in the run.

The claim ``highdim-paper-sgd`` (``figures/verify/claims/highdim_paper_sgd.py``) reads this figure's data; the
sizes below are its power target (docs/math/highdim.md#sample-size-of-the-paper-setting-claim): 40 runs up to
flow time 20 (the first 10% of the run, where the claim's statistic is decided), 15 of them to the end,
pooled at the logged times they share. Quick mode: 40 runs over the first 5% of the run.

Left: mean kappa and nu of the runs (band: +- 1.96 standard errors) and the two predictions, against the step
on a log axis. Right: |mean SGD - prediction| of kappa and nu for both predictions, with the SGD mean's
1.96 standard errors. Full compute ~5-6 s CPU (3.5e6 reduced-SGD run-steps and the effective ODE)."""

from __future__ import annotations

import numpy as np

NAME = "highdim_paper_sgd"
TITLE = "The paper's online-SGD experiment: the effective ODE follows mean SGD, the population flow does not"
CAPTION = ("The paper's online SGD (d = 80, L = 10, batch 5, alpha = 1e-3 so c = 0.08, lambda_t = 2/(1 + 1e-4 t)) "
           "from (kappa, nu) = (0.5, 0.5) on M, exact reduced simulator, runs mapped into kappa + nu >= 0 by the sign "
           "symmetry: (left) mean kappa, nu with 95% bands against the population flow and the effective ODE "
           "F + (c/d) D; (right) each prediction's error against step, with 1.96 standard errors of the mean.")
COST = 5.6  # CPU s of a full compute and plot, measured (slr reproduce, load ~2); orders the work only
SEED = 20261201

_START = (0.5, 0.5, 0.0, 0.0, 0.0)
# 40 runs to flow time 20, 15 of them to the end (full); the docs' bootstrap of a 100-run pilot gives power
# >= 0.99 for the claim at these sizes and the same 99% quantile of its ratio as 40 runs to the end
_SIZES = {True: {"n_runs": 40, "early_runs": 0, "early_t": 0.0, "fraction": 0.05, "n_log": 20},
          False: {"n_runs": 15, "early_runs": 25, "early_t": 20.0, "fraction": 1.0, "n_log": 200}}
# rtol 1e-6: the solution differs from rtol 1e-8's by <= 2e-6 over the run (measured), 1e-4 of the SGD
# standard errors (>= 0.015 at 40 runs where the claim's bounds are decided), at a fifth of the right-hand sides
_ODE = {"method": "LSODA", "rtol": 1e-6, "atol": 1e-8}
# the effective ODE's quadratures on the trapezoid step 0.4: its drift within 7e-8 of step 0.1 along the schedule
# (docs/math/highdim.md#the-papers-sgd-setting), at 0.4 of the cost of a right-hand side at the default 0.2
_QUADRATURE = 0.4
_Z95 = 1.959963984540054


def params(quick: bool) -> dict:
    return {"start": list(_START), "ode": dict(_ODE), **_SIZES[quick]}


def compute(p: dict, rng: np.random.Generator, progress) -> dict:
    """``numerics.highdim.compare_with_sgd`` over the run (``n_runs``), then ``early_runs`` further runs up
    to flow time ``early_t`` pooled with them at the logged times up to there. Arrays: ``t`` (n_t,),
    ``sgd_mean``, ``sgd_stderr`` (5, n_t), ``counts`` (n_t,) runs per logged time, ``population`` and
    ``effective`` (5, n_t)."""
    from numerics.dynamics.ode import OdeOptions
    from numerics.highdim import compare_with_sgd
    from numerics.sgd.experiment import PAPER_SGD as s

    with progress(total=2, desc="paper SGD vs effective ODE") as bar:
        out = compare_with_sgd(s.problem, tuple(p["start"]), c=s.alpha * s.d, batch_size=s.batch_size,
                               t_end=s.alpha * s.n_steps * p["fraction"], n_runs=p["n_runs"], rng=rng,
                               n_log=p["n_log"], predictions=("population", "effective"), up_to_sign=True,
                               ode=OdeOptions(**p["ode"]), quadrature_step=_QUADRATURE)
        bar.update()
        counts = np.full(out.t.size, out.n_runs)
        mean, stderr = out.sgd_mean.copy(), out.sgd_stderr.copy()
        if p["early_runs"]:
            k = int(np.sum(out.t <= p["early_t"] * (1 + 1e-12)))
            more_mean, more_se = _early_runs(s, tuple(p["start"]), p["early_runs"],
                                             int(round(out.t[k - 1] / s.alpha)), k - 1, rng)
            if more_mean.shape[1] != k:
                raise RuntimeError(f"the further runs logged {more_mean.shape[1]} times, not the first {k}")
            mean[:, :k], stderr[:, :k] = pooled_mean_stderr(mean[:, :k], stderr[:, :k], out.n_runs, more_mean, more_se,
                                               p["early_runs"])
            counts[:k] += p["early_runs"]
        bar.update()
    return {"t": out.t, "sgd_mean": mean, "sgd_stderr": stderr, "counts": counts,
            "population": out.predictions["population"], "effective": out.predictions["effective"]}


def _early_runs(s, start, n_runs, n_steps, n_log, rng):
    """Mean and standard error (5, n_log + 1) of ``n_runs`` reduced SGD runs from ``start`` over
    ``n_steps`` steps logged ``n_log`` times, each run mapped into kappa + nu >= 0 by the symmetry
    (k, v) -> (-k, -v) (as ``compare_with_sgd(up_to_sign=True)``)."""
    from numerics.sgd.reduced import online_sgd_reduced
    from theory import OVERLAP_NAMES, Overlaps

    init = Overlaps(**{k: np.full(n_runs, float(x)) for k, x in zip(OVERLAP_NAMES, start)})
    run = online_sgd_reduced(s.problem, init, alpha=s.alpha, n_steps=n_steps, batch_size=s.batch_size, rng=rng,
                             log_every=n_steps // n_log)
    x = np.stack([getattr(run, k) for k in OVERLAP_NAMES])
    x[:4] *= np.where(x[0] + x[1] < 0, -1.0, 1.0)
    return x.mean(axis=2), x.std(axis=2, ddof=1) / np.sqrt(n_runs)


def pooled_mean_stderr(mean_a, se_a, n_a, mean_b, se_b, n_b):
    """Mean and standard error of two samples pooled, from each one's mean, standard error and size
    (the sample variance with n - 1 of the union, exactly)."""
    n = n_a + n_b
    ss = (n_a - 1) * n_a * se_a**2 + (n_b - 1) * n_b * se_b**2 + n_a * n_b / n * (mean_a - mean_b) ** 2
    return (n_a * mean_a + n_b * mean_b) / n, np.sqrt(ss / (n - 1) / n)


def plot(data: dict, p: dict):
    from matplotlib.figure import Figure

    from ..style import DOUBLE_COLUMN, PALETTE

    fig = Figure(figsize=(DOUBLE_COLUMN, 3.6), layout="constrained")
    left, right = fig.subplots(1, 2)
    steps = data["t"][1:] / 1e-3
    mean, se = data["sgd_mean"][:, 1:], data["sgd_stderr"][:, 1:]
    preds = {"population": ("population flow", "--"), "effective": ("effective ODE F + (c/d) D", ":")}
    for i, (symbol, shade) in enumerate((("κ", PALETTE["monte_carlo"]), ("ν", PALETTE["quadrature"]))):
        left.fill_between(steps, mean[i] - _Z95 * se[i], mean[i] + _Z95 * se[i], color=shade, alpha=0.3, lw=0)
        left.plot(steps, mean[i], color=shade, lw=1.0, label=f"{symbol}: mean SGD (95% band)")
        right.fill_between(steps, 0, _Z95 * se[i], color=shade, alpha=0.15, lw=0)
        for name, (label, ls) in preds.items():
            left.plot(steps, data[name][i, 1:], ls, color=shade, lw=1.2, label=f"{symbol}: {label}")
            right.plot(steps, np.abs(mean[i] - data[name][i, 1:]), ls, color=shade, lw=1.0)
    left.set(xscale="log", xlabel="step t", ylabel="overlap", title="mean overlaps and the predictions")
    right.set(xscale="log", yscale="log", xlabel="step t", ylabel="|mean SGD − prediction|",
              title="errors (shaded: 1.96 s.e. of the SGD mean)")
    fig.legend(*left.get_legend_handles_labels(), loc="outside lower center", ncols=3)
    first, last = int(data["counts"][1]), int(data["counts"][-1])
    runs = (f"{first} runs" if first == last else
            f"{first} runs to step {p['early_t'] / 1e-3:,.0f}, {last} of them to the end")
    fig.suptitle("The paper's online SGD: d = 80, L = 10, batch 5, α = 1e-3, λ_t = 2/(1 + 1e-4 t), "
                 f"from (κ, ν) = (0.5, 0.5) on M;\nexact reduced simulator, {runs};\n"
                 "each run mapped into κ + ν ≥ 0 by the symmetry (k, v) → (−k, −v)")
    return fig
