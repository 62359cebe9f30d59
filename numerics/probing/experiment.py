"""The probing experiment of paper Section 2 end to end: sentences -> [CLS] states -> probes.

The paper probes frozen ``bert-base-uncased`` (12 layers, hence 13 [CLS] states with the
embeddings); any BERT-architecture encoder works here. Everything after the sentence
generation needs the optional ``probing`` extra, imported lazily.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .sentences import ProbingDesign, ProbingSplits, make_splits

__all__ = ["PAPER_MODEL", "ProbingResult", "run_probing"]

PAPER_MODEL = "bert-base-uncased"


@dataclasses.dataclass(frozen=True, kw_only=True)
class ProbingResult:
    """Splits, probe accuracies per (layer, split) and how the features were obtained."""

    splits: ProbingSplits
    probes: object            # numerics.probing.probes.LayerProbes
    model_name: str
    features_key: str         # cache key of the [CLS] states ("" when not cached)
    features_from_cache: bool
    extraction_seconds: float

    @property
    def n_layers(self) -> int:
        return self.probes.accuracy.shape[0] - 1


def run_probing(model, tokenizer=None, *, design: ProbingDesign | None = None, cache_dir=None,
                batch_size=32, C=1.0, progress=True) -> ProbingResult:
    """Build the splits of ``design``, extract every layer's [CLS] state, fit and score the probes.

    ``model``/``tokenizer`` as in ``features.cls_hidden_states`` (objects, or a local path or
    cached model name with ``tokenizer=None``). ``progress``: bool or a tqdm-like factory.
    """
    from .features import cls_hidden_states
    from .probes import fit_layer_probes

    splits = make_splits(design)
    items = splits.items()
    sentences = [s for _, part in items for s in part.sentences]
    states = cls_hidden_states(sentences, model, tokenizer, batch_size=batch_size, cache_dir=cache_dir,
                               progress=progress)
    bounds = np.cumsum([0] + [len(part) for _, part in items])
    features = {name: states.states[:, lo:hi] for (name, _), lo, hi in zip(items, bounds[:-1], bounds[1:])}
    labels = {name: part.labels for name, part in items}
    probes = fit_layer_probes(features, labels, C=C, progress=progress if callable(progress) else None)
    return ProbingResult(splits=splits, probes=probes, model_name=states.model_name, features_key=states.key,
                         features_from_cache=states.from_cache, extraction_seconds=states.seconds)
