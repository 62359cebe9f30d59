"""One logistic-regression probe per layer on the [CLS] states (paper Section 2).

For layer l, with features x = h^(l)[CLS] / s_l (s_l = root-mean-square entry of the training
features of that layer, a single scalar, so no direction is reweighted and no centring can
turn roundoff into signal), the probe is P(y = 1 | x) = sigmoid(<w, x> + b), fitted by
L2-penalised maximum likelihood (scikit-learn ``LogisticRegression``, lbfgs, inverse penalty
``C``) on the training split. Its accuracy is reported on every split.

A layer whose features are the same vector for every sentence (the embedding layer at [CLS])
can only yield a constant probe: the fitted logit is b = log(p/(1-p)) at w = 0, p the training
share of label 1, so the accuracy on a split is the share of the training-majority label there
(1/2 on the balanced splits of ``sentences``).

scikit-learn is imported inside ``fit_layer_probes`` (the optional ``probing`` extra).
"""

from __future__ import annotations

import dataclasses
import warnings

import numpy as np

__all__ = ["LayerProbes", "fit_layer_probes"]


@dataclasses.dataclass(frozen=True, kw_only=True)
class LayerProbes:
    """Accuracy ``accuracy[l, j]`` of the layer-l probe on split ``splits[j]``, with diagnostics.

    ``stderr`` is the binomial standard error sqrt(a (1 - a) / n) of each accuracy (the
    sentences of a split taken as independent draws); ``predictions[j]`` has shape
    (n_layers + 1, n_j); ``n_iter`` counts lbfgs iterations per layer; ``scale`` is s_l.
    """

    splits: tuple[str, ...]
    accuracy: np.ndarray
    n: np.ndarray
    majority_rate: np.ndarray
    predictions: tuple[np.ndarray, ...]
    n_iter: np.ndarray
    scale: np.ndarray
    C: float

    @property
    def stderr(self) -> np.ndarray:
        return np.sqrt(self.accuracy * (1.0 - self.accuracy) / self.n)

    def split(self, name: str) -> np.ndarray:
        """Accuracy per layer on split ``name``."""
        return self.accuracy[:, self.splits.index(name)]


def fit_layer_probes(features, labels, *, train="train", C=1.0, tol=1e-6, max_iter=5000,
                     progress=None) -> LayerProbes:
    """Fit one probe per layer on ``features[train]`` and score it on every split.

    ``features``: mapping split name -> array (n_layers + 1, n_split, hidden); ``labels``:
    mapping split name -> 0/1 array (n_split,). Raises ``RuntimeError`` naming the layer if
    lbfgs stops at ``max_iter`` without meeting ``tol``. ``progress``: optional tqdm-like factory.
    """
    from sklearn.exceptions import ConvergenceWarning
    from sklearn.linear_model import LogisticRegression

    splits = tuple(features)
    if train not in features:
        raise ValueError(f"train={train!r} is not allowed: it must name one of the splits {splits}")
    if set(labels) != set(splits):
        raise ValueError(f"labels has splits {sorted(labels)}, features has {sorted(splits)}: they must match")
    if not (np.isfinite(C) and C > 0):
        raise ValueError(f"C={C!r} is not allowed: the inverse L2 penalty must be finite and > 0")
    X = {name: np.asarray(features[name], dtype=np.float64) for name in splits}
    y = {name: np.asarray(labels[name]) for name in splits}
    n_states = X[train].shape[0]
    for name in splits:
        if X[name].ndim != 3 or X[name].shape[0] != n_states or X[name].shape[1] != len(y[name]):
            raise ValueError(f"features[{name!r}] has shape {X[name].shape}: expected "
                             f"({n_states}, {len(y[name])}, hidden) to match labels[{name!r}]")
        if not np.isin(y[name], (0, 1)).all():
            raise ValueError(f"labels[{name!r}] must be 0 or 1")
    if np.unique(y[train]).size < 2:
        raise ValueError(f"labels[{train!r}] hold one class only: a probe needs both")

    accuracy = np.empty((n_states, len(splits)))
    predictions = [np.empty((n_states, len(y[name])), dtype=np.int8) for name in splits]
    n_iter = np.empty(n_states, dtype=np.int64)
    scale = np.empty(n_states)
    bar = progress(total=n_states, desc="probes") if progress is not None else None
    for layer in range(n_states):
        scale[layer] = np.sqrt(np.mean(X[train][layer] ** 2)) or 1.0
        clf = LogisticRegression(C=C, tol=tol, max_iter=max_iter)
        with warnings.catch_warnings():
            warnings.simplefilter("error", ConvergenceWarning)
            try:
                clf.fit(X[train][layer] / scale[layer], y[train])
            except ConvergenceWarning as exc:
                raise RuntimeError(f"the probe of layer {layer} did not converge in max_iter={max_iter} "
                                   f"lbfgs iterations (tol={tol}): raise max_iter or lower C") from exc
        n_iter[layer] = int(np.max(clf.n_iter_))
        for j, name in enumerate(splits):
            predictions[j][layer] = clf.predict(X[name][layer] / scale[layer])
            accuracy[layer, j] = np.mean(predictions[j][layer] == y[name])
        if bar is not None:
            bar.update()
    if bar is not None:
        bar.close()
    n = np.array([len(y[name]) for name in splits])
    majority = np.array([max(np.mean(y[name]), 1 - np.mean(y[name])) for name in splits])
    return LayerProbes(splits=splits, accuracy=accuracy, n=n, majority_rate=majority,
                       predictions=tuple(predictions), n_iter=n_iter, scale=scale, C=float(C))
