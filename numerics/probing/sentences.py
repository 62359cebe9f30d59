"""Synthetic sentiment sentences for the [CLS] probing experiment (paper Section 2).

Every sentence is one element of a Cartesian product of word lists plugged into a template.
Exactly one slot, ``{sentiment}``, carries the label (1 for a positive word, 0 for a negative
one); the other slots are fillers, and a distractor clause holds sentiment-laden words
(``pleasant``/``awful``, ``delicious``/``disgusting``, ...) that do not decide the label. The
label thus sits at one location whose position in the sentence varies (optional words and two
word orders), which is the situation single-location regression idealises.

Designed sizes (default ``ProbingDesign``). Each template has 4 x 3 x 2 x 3 x 2 x 8 = 1152
sentences (distractor word x determiner x colour x animal x adverb x sentiment word), 576 per
label. A cell is one (template, label) pair, and every split holds the same number of
sentences per cell, so every split is exactly balanced (majority-class rate 1/2):

    split          templates                         sentiment words      per cell  size
    train          after_verb, before_noun           SENTIMENT_WORDS      432       1728
    test           after_verb, before_noun           SENTIMENT_WORDS      144        576
    ood_token      after_verb, before_noun           OOD_SENTIMENT_WORDS  144        576
    ood_structure  distractor_after, question_first  SENTIMENT_WORDS      144        576

train and test partition the 2304 in-distribution sentences (disjoint); the OOD splits are
stratified subsamples of their own products. Draws use ``SeedSequence(seed).spawn(3)``.
"""

from __future__ import annotations

import dataclasses
import itertools
import string
from types import MappingProxyType

import numpy as np

__all__ = [
    "FILLERS", "SENTIMENT_WORDS", "OOD_SENTIMENT_WORDS", "TRAIN_TEMPLATES", "OOD_TEMPLATES",
    "SPLITS", "Template", "SentenceSet", "ProbingDesign", "ProbingSplits",
    "sentence_product", "make_splits",
]

FILLERS = MappingProxyType({
    "weather": ("pleasant", "awful", "sunny", "gloomy"),
    "food": ("delicious", "disgusting", "warm", "cold"),
    "det": ("my", "his", "our"),
    "color": ("", "brown"),
    "animal": ("dog", "cat", "horse"),
    "adverb": ("", "very"),
})
# word -> label (1 positive, 0 negative); four of each so that every product is balanced.
SENTIMENT_WORDS = MappingProxyType({
    "nice": 1, "cute": 1, "friendly": 1, "lovely": 1,
    "mean": 0, "nasty": 0, "aggressive": 0, "dreadful": 0,
})
OOD_SENTIMENT_WORDS = MappingProxyType({
    "charming": 1, "gentle": 1, "adorable": 1, "wonderful": 1,
    "vicious": 0, "grumpy": 0, "horrible": 0, "hostile": 0,
})
SPLITS = ("train", "test", "ood_token", "ood_structure")


@dataclasses.dataclass(frozen=True)
class Template:
    """A named format string; ``{sentiment}`` is the labelled slot, the others name ``FILLERS``."""

    name: str
    text: str

    @property
    def slots(self) -> tuple[str, ...]:
        return tuple(f for _, f, _, _ in string.Formatter().parse(self.text) if f is not None)


TRAIN_TEMPLATES = (
    Template("after_verb", "the weather is {weather}. {det} {color} {animal} is {adverb} {sentiment}."),
    Template("before_noun", "the weather is {weather}. {det} {adverb} {sentiment} {color} {animal} is sleeping."),
)
# Held out: the distractor clause moves after the label (a new clause), or a question comes first.
OOD_TEMPLATES = (
    Template("distractor_after", "{det} {color} {animal} is {adverb} {sentiment}, and the food was {food}."),
    Template("question_first", "good evening, the food was {food}, wasn't it? "
                               "{det} {adverb} {sentiment} {color} {animal} is sleeping."),
)


def _clean(text: str) -> str:
    """Collapse the gaps left by empty words and glue punctuation to the preceding word."""
    text = " ".join(text.split())
    for mark in ".,?":
        text = text.replace(" " + mark, mark)
    return text


@dataclasses.dataclass(frozen=True, kw_only=True)
class SentenceSet:
    """One split: sentences, labels (1 positive), template names and the sentiment word's index.

    ``positions[i]`` is the 0-based index, among the whitespace-separated words of sentence i,
    of its sentiment word.
    """

    name: str
    sentences: tuple[str, ...]
    labels: np.ndarray
    templates: tuple[str, ...]
    positions: np.ndarray

    def __post_init__(self):
        n = len(self.sentences)
        for field in ("labels", "templates", "positions"):
            if len(getattr(self, field)) != n:
                raise ValueError(f"{field} has length {len(getattr(self, field))}, expected {n}")
        for field in ("labels", "positions"):
            getattr(self, field).setflags(write=False)

    def __len__(self) -> int:
        return len(self.sentences)

    @property
    def majority_rate(self) -> float:
        """Share of the most frequent label: the accuracy of a constant predictor's best guess."""
        p = float(np.mean(self.labels)) if len(self) else 0.0
        return max(p, 1.0 - p)


def sentence_product(template: Template, sentiment_words=SENTIMENT_WORDS, fillers=FILLERS) -> SentenceSet:
    """All sentences of ``template``: the Cartesian product of its slots, in slot order."""
    slots = template.slots
    unknown = [s for s in slots if s != "sentiment" and s not in fillers]
    if slots.count("sentiment") != 1 or unknown:
        raise ValueError(f"template {template.name!r} must have one {{sentiment}} slot and only "
                         f"filler slots {sorted(fillers)}; unknown slots: {unknown}")
    choices = [tuple(sentiment_words) if s == "sentiment" else fillers[s] for s in slots]
    sentences, labels, positions = [], [], []
    for words in itertools.product(*choices):
        values = dict(zip(slots, words))
        sentences.append(_clean(template.text.format(**values)))
        labels.append(sentiment_words[values["sentiment"]])
        prefix = template.text.split("{sentiment}")[0].format(**values)
        positions.append(len(prefix.split()))
    return SentenceSet(name=template.name, sentences=tuple(sentences), labels=np.array(labels, dtype=np.int64),
                       templates=(template.name,) * len(sentences), positions=np.array(positions, dtype=np.int64))


@dataclasses.dataclass(frozen=True, kw_only=True)
class ProbingDesign:
    """Split sizes per (template, label) cell and the seed; the default is the full design."""

    seed: int = 0
    train_per_cell: int = 432
    test_per_cell: int = 144
    ood_per_cell: int = 144

    def __post_init__(self):
        cell = _cell_size()
        for field in ("train_per_cell", "test_per_cell", "ood_per_cell"):
            value = getattr(self, field)
            if not (isinstance(value, (int, np.integer)) and 1 <= value <= cell):
                raise ValueError(f"{field}={value!r} is not allowed: an integer in [1, {cell}]")
        if self.train_per_cell + self.test_per_cell > cell:
            raise ValueError(f"train_per_cell + test_per_cell = {self.train_per_cell + self.test_per_cell} "
                             f"is not allowed: train and test share a cell of {cell} sentences")
        if not (isinstance(self.seed, (int, np.integer)) and self.seed >= 0):
            raise ValueError(f"seed={self.seed!r} is not allowed: a non-negative integer")

    @property
    def sizes(self) -> dict[str, int]:
        """Designed number of sentences of each split (4 cells each)."""
        per = {"train": self.train_per_cell, "test": self.test_per_cell,
               "ood_token": self.ood_per_cell, "ood_structure": self.ood_per_cell}
        return {name: 4 * per[name] for name in SPLITS}


def _cell_size() -> int:
    """Sentences per (template, label) cell, the smallest over every template of the design."""
    sizes = []
    for templates, words in ((TRAIN_TEMPLATES, SENTIMENT_WORDS), (TRAIN_TEMPLATES, OOD_SENTIMENT_WORDS),
                             (OOD_TEMPLATES, SENTIMENT_WORDS)):
        n_label = min(sum(1 for v in words.values() if v == label) for label in (0, 1))
        for template in templates:
            sizes.append(n_label * int(np.prod([len(FILLERS[s]) for s in template.slots if s != "sentiment"])))
    return min(sizes)


@dataclasses.dataclass(frozen=True, kw_only=True)
class ProbingSplits:
    """The four splits, in the order of ``SPLITS``."""

    train: SentenceSet
    test: SentenceSet
    ood_token: SentenceSet
    ood_structure: SentenceSet
    design: ProbingDesign

    def items(self):
        return [(name, getattr(self, name)) for name in SPLITS]


def _concat(name: str, parts) -> SentenceSet:
    return SentenceSet(name=name, sentences=tuple(s for p in parts for s in p.sentences),
                       labels=np.concatenate([p.labels for p in parts]),
                       templates=tuple(t for p in parts for t in p.templates),
                       positions=np.concatenate([p.positions for p in parts]))


def _take(name: str, full: SentenceSet, idx) -> SentenceSet:
    idx = np.sort(np.asarray(idx))
    return SentenceSet(name=name, sentences=tuple(full.sentences[i] for i in idx), labels=full.labels[idx],
                       templates=tuple(full.templates[i] for i in idx), positions=full.positions[idx])


def _stratified(templates, words, sizes, names, rng):
    """Per (template, label) cell, a random permutation cut into consecutive blocks of ``sizes``."""
    blocks = [[] for _ in sizes]
    for template in templates:
        full = sentence_product(template, words)
        for label in (0, 1):
            cell = np.flatnonzero(full.labels == label)
            perm = rng.permutation(cell)
            start = 0
            for k, size in enumerate(sizes):
                blocks[k].append(_take(template.name, full, perm[start:start + size]))
                start += size
    return [_concat(name, parts) for name, parts in zip(names, blocks)]


def make_splits(design: ProbingDesign | None = None) -> ProbingSplits:
    """Build train, test, OOD-token and OOD-structure sets as documented in the module docstring.

    ``design`` defaults to ``ProbingDesign()`` (the full design, seed 0).
    """
    design = ProbingDesign() if design is None else design
    seeds = np.random.SeedSequence(design.seed).spawn(3)
    rng_id, rng_token, rng_structure = (np.random.default_rng(s) for s in seeds)
    train, test = _stratified(TRAIN_TEMPLATES, SENTIMENT_WORDS, (design.train_per_cell, design.test_per_cell),
                              ("train", "test"), rng_id)
    (ood_token,) = _stratified(TRAIN_TEMPLATES, OOD_SENTIMENT_WORDS, (design.ood_per_cell,), ("ood_token",),
                               rng_token)
    (ood_structure,) = _stratified(OOD_TEMPLATES, SENTIMENT_WORDS, (design.ood_per_cell,), ("ood_structure",),
                                   rng_structure)
    return ProbingSplits(train=train, test=test, ood_token=ood_token, ood_structure=ood_structure,
                         design=design)
