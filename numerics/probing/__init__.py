"""Linear probing of a frozen BERT-architecture encoder's [CLS] states (paper Section 2).

The paper's motivation experiment: one logistic-regression probe per layer on the [CLS] hidden
state, trained on synthetic sentences whose label is one sentiment word at a varying position.
Only ``sentences`` is imported here; ``features``, ``probes`` and ``experiment`` need the
optional ``probing`` extra (torch, transformers, scikit-learn), which they import lazily
inside their functions, so importing this package never loads them.
"""

from .sentences import SPLITS, ProbingDesign, ProbingSplits, SentenceSet, make_splits

__all__ = ["SPLITS", "ProbingDesign", "ProbingSplits", "SentenceSet", "make_splits"]
