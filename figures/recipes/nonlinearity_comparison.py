"""Figure: the oracle (k, v) = (k*, v*) of every attention nonlinearity at its best lambda against d,
beside the Bayes risk and the best linear predictor (docs/math/nonlinearities.md#the-oracle).

Data: ``numerics.nonlinearity.oracle_comparison`` (quadrature, exact at finite d; the oracle excess
is a sum of non-negative terms, so it is resolved to relative accuracy even at 1e-100). Left: the
excess R - eps^2 at the best lambda; right: the best lambda. L = 10, gamma = sqrt(1/2) (the paper's).
Softmax and the Bayes risk are computed on a shorter d grid (their quadrature costs more; beyond
d = 256 both are below 1e-19; the Bayes curve stops where its absolute error estimate, ~2e-15,
no longer resolves it).
"""

from __future__ import annotations

import math

import numpy as np

NAME = "nonlinearity_comparison"
TITLE = "Oracle excess risk at the best lambda vs d for erf, linear, tanh, relu, sigmoid, softmax; Bayes; linear"
COST = 3.7  # CPU s of a full compute and plot, measured (slr reproduce, load ~2); orders the work only
SEED = 20251130

_STYLE = {"erf": ("#000000", "-"), "linear": ("#999999", "--"), "tanh": ("#009E73", "-"),
          "relu": ("#CC79A7", "-."), "sigmoid": ("#E69F00", ":"), "softmax": ("#D55E00", "-")}


def params(quick: bool) -> dict:
    d_max, d_costly_max = (2**8, 2**5) if quick else (2**14, 2**8)
    return {"L": 10, "gamma": math.sqrt(0.5), "lam_min": 1e-3, "lam_max": 1e2,
            "d_grid": [2**k for k in range(1, int(math.log2(d_max)) + 1)],
            "d_grid_costly": [2**k for k in range(1, int(math.log2(d_costly_max)) + 1)],
            "fit_d_min": 2**10}


def compute(p: dict, rng: np.random.Generator, progress) -> dict:
    from numerics.nonlinearity import fitted_slope, oracle_comparison
    from theory.nonlinearity import NONLINEARITY_NAMES

    n = len(p["d_grid"]) * (len(NONLINEARITY_NAMES) - 1) + len(p["d_grid_costly"])
    with progress(total=n, desc=NAME) as bar:
        res = oracle_comparison(p["d_grid"], p["d_grid_costly"], L=p["L"], gamma=p["gamma"],
                                lam_range=(p["lam_min"], p["lam_max"]), progress=bar.update)
    out = {"bayes_d": res.bayes_d, "bayes_excess": res.bayes_excess, "bayes_abserr": res.bayes_abserr,
           "baseline_linear_excess": np.array(res.linear_excess)}
    for name, m in res.members.items():
        for key, value in m.items():
            out[f"{name}_{key}"] = np.asarray(value)
        tail = m["d"] >= p["fit_d_min"]
        out[f"{name}_slope"] = np.array(fitted_slope(m["d"][tail], m["excess"][tail])
                                        if np.sum(tail) >= 2 else np.nan)
    return out


def plot(data: dict, p: dict):
    from matplotlib.figure import Figure

    from theory.nonlinearity import NONLINEARITY_NAMES

    from ..style import DOUBLE_COLUMN

    fig = Figure(figsize=(DOUBLE_COLUMN, 3.6), layout="constrained")
    left, right = fig.subplots(1, 2)
    for name in NONLINEARITY_NAMES:
        color, ls = _STYLE[name]
        d, ex, err = data[f"{name}_d"], data[f"{name}_excess"], data[f"{name}_abserr"]
        ok = ex > 2 * err   # resolved by the quadrature
        slope = float(data[f"{name}_slope"])
        label = name + (f" (slope {slope:.2f})" if np.isfinite(slope) else "")
        left.plot(d[ok], ex[ok], ls, color=color, marker="o", ms=2.5, label=label)
        right.plot(d, data[f"{name}_lam"], ls, color=color, marker="o", ms=2.5, label=name)
    ok = data["bayes_excess"] > 2 * data["bayes_abserr"]
    left.plot(data["bayes_d"][ok], data["bayes_excess"][ok], "-", color="#0072B2", lw=2, alpha=0.5,
              label="Bayes")
    left.axhline(float(data["baseline_linear_excess"]), color="#56B4E9", ls="--", lw=1, label="best linear (Prop 3)")
    for ax in (left, right):
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("d")
    left.set_ylabel("oracle excess R(k*, v*) − ε² at best λ")
    left.set_ylim(1e-25, 10)
    right.set_ylabel("best λ")
    fig.legend(*left.get_legend_handles_labels(), loc="outside lower center", ncols=3)
    fig.suptitle(f"Attention nonlinearities at the oracle, L = {p['L']}, γ = √½\n(quadrature; slopes "
                 f"of log excess on log d for d ≥ {p['fit_d_min']})")
    return fig
