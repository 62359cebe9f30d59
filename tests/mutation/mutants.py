"""The curated mutants of the campaign, by category (``mutant.py`` says what a mutant is; ``runner.load_mutants``
loads this list from a repository's tree)."""

from __future__ import annotations

from .mutant import CATEGORIES, Mutant
from .mutants_numerics import MUTANTS as NUMERICS
from .mutants_theory import MUTANTS as THEORY
from .mutants_verification import MUTANTS as VERIFICATION

__all__ = ["CATEGORIES", "MUTANTS", "Mutant"]

MUTANTS = THEORY + NUMERICS + VERIFICATION
