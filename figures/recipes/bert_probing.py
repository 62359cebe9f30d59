"""Figure (paper Section 2): linear probes of frozen BERT's [CLS] state, per layer and split.

``numerics.probing``: synthetic sentences whose label is one sentiment word at a varying
position, with a distractor clause (``sentences``); the [CLS] state of each of the 13 hidden
states of ``bert-base-uncased`` (embeddings + 12 layers, ``features``); one logistic regression
per layer fitted on the training split (``probes``). Bars: accuracy on train, test, OOD-token
(held-out sentiment words) and OOD-structure (held-out templates), +-2 binomial standard errors;
dashed line: the majority-class rate (1/2, every split being balanced). The embedding layer's
[CLS] state is the same for every sentence, so its bars sit at chance.

Needs the optional ``probing`` extra and ``bert-base-uncased`` in the local Hugging Face cache
(nothing is downloaded); ``skip_reason`` says what is missing, and ``compute`` raises with
that message. The [CLS] states are also cached by ``numerics.probing.features`` (keyed by the
weights and the sentences), so a change of this module does not re-run the encoder.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np

NAME = "bert_probing"
TITLE = "Paper Section 2: logistic probes of bert-base-uncased's [CLS] state per layer and split"
SEED = 20241002

_EXTRA = ("torch", "transformers", "sklearn")
_LABELS = {"train": "train", "test": "test", "ood_token": "OOD tokens", "ood_structure": "OOD structure"}


def params(quick: bool) -> dict:
    sizes = {"train_per_cell": 24, "test_per_cell": 8, "ood_per_cell": 8} if quick else \
            {"train_per_cell": 432, "test_per_cell": 144, "ood_per_cell": 144}
    return {"model": "bert-base-uncased", "C": 1.0, "batch_size": 32, **sizes}


def skip_reason(p: dict) -> str | None:
    """None when the recipe can run here; otherwise what is missing, in one line."""
    missing = [name for name in _EXTRA if importlib.util.find_spec(name) is None]
    if missing:
        return (f"optional 'probing' extra not installed (missing {', '.join(missing)}): "
                f"pip install -e '.[probing]'")
    model = p["model"]
    if Path(model).expanduser().is_dir():
        return None
    from huggingface_hub import try_to_load_from_cache

    if not isinstance(try_to_load_from_cache(model, "config.json"), str):
        return (f"{model!r} is not in the local Hugging Face cache (nothing is downloaded): "
                f"fill the cache, or set params['model'] to a local folder")
    return None


def compute(p: dict, rng: np.random.Generator, progress, *, cache_dir=None) -> dict:
    from numerics.probing.experiment import run_probing
    from numerics.probing.sentences import ProbingDesign

    reason = skip_reason(p)
    if reason is not None:
        raise RuntimeError(f"{NAME} cannot compute here: {reason}")
    if cache_dir is None:
        from ..paths import OutputPaths

        cache_dir = OutputPaths.resolve().cache / "probing_features"
    design = ProbingDesign(seed=int(rng.integers(2**32)), train_per_cell=p["train_per_cell"],
                           test_per_cell=p["test_per_cell"], ood_per_cell=p["ood_per_cell"])
    result = run_probing(p["model"], design=design, cache_dir=cache_dir, batch_size=p["batch_size"],
                         C=p["C"], progress=progress)
    probes = result.probes
    return {"accuracy": probes.accuracy, "stderr": probes.stderr, "n": probes.n,
            "majority_rate": probes.majority_rate, "n_iter": probes.n_iter,
            "splits": np.array(probes.splits), "model_name": np.array(result.model_name or p["model"]),
            "extraction_seconds": np.array(result.extraction_seconds)}


def plot(data: dict, p: dict):
    from matplotlib.figure import Figure

    from ..style import DOUBLE_COLUMN, PALETTE

    colors = {"train": PALETTE["muted"], "test": PALETTE["quadrature"], "ood_token": PALETTE["flow"],
              "ood_structure": PALETTE["monte_carlo"]}
    splits = [str(s) for s in data["splits"]]
    accuracy, stderr = data["accuracy"], data["stderr"]
    layers = np.arange(accuracy.shape[0])
    width = 0.8 / len(splits)
    fig = Figure(figsize=(DOUBLE_COLUMN, 3.0), layout="constrained")
    ax = fig.subplots()
    for j, name in enumerate(splits):
        ax.bar(layers + (j - (len(splits) - 1) / 2) * width, accuracy[:, j], width, yerr=2 * stderr[:, j],
               color=colors.get(name, PALETTE["accent"]), error_kw={"lw": 0.6},
               label=f"{_LABELS.get(name, name)} (n={int(data['n'][j])})")
    ax.axhline(float(np.max(data["majority_rate"])), color=PALETTE["closed_form"], lw=0.8, ls="--",
               label="majority class")
    ax.set_xticks(layers, ["emb."] + [str(l) for l in layers[1:]])
    ax.set_xlabel("[CLS] hidden state of layer (emb. = embedding output)")
    ax.set_ylabel("probe accuracy")
    ax.set_ylim(0.0, 1.05)
    ax.grid(axis="x", visible=False)
    fig.legend(loc="outside lower center", ncols=3)
    ax.set_title(f"{_short(str(data['model_name']))}: one logistic regression per layer (±2 s.e.)")
    return fig


def _short(model_name: str) -> str:
    """A hub name as is; a local folder as its last two path components."""
    path = Path(model_name)
    return "/".join(path.parts[-2:]) if path.is_absolute() else model_name
