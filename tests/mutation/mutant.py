"""What a mutant of the campaign is: a one-line bug a developer could make, with the tests and claims
expected to catch it (the mutants themselves: ``mutants_theory.py``, ``mutants_numerics.py``,
``mutants_verification.py``, gathered by ``mutants.py``).

A mutant replaces ``original`` (found exactly once in ``path``, one line or part of one) by
``replacement``. ``tests`` are pytest node ids run on the mutated copy (default-run tests only:
the goal is about the default test command), ``claims`` are ids of ``slr verify`` claims run
there. Categories: "theory" and "numerics" (code mutants: the goals ask >= 95% killed by their
tests and >= 90% by their claims alone) and "verification" (the claim framework and the claims
themselves: every one killed). ``tests/test_mutation_list.py`` checks that the list is well formed
and matches the tree; ``python -m tests.mutation`` runs it.
"""

from __future__ import annotations

import dataclasses

CATEGORIES = ("theory", "numerics", "verification")


@dataclasses.dataclass(frozen=True)
class Mutant:
    id: str
    category: str
    path: str
    original: str
    replacement: str
    description: str
    tests: tuple = ()
    claims: tuple = ()


def mutant(id, category, path, original, replacement, description, tests, claims=()):
    return Mutant(id, category, path, original, replacement, description, tuple(tests), tuple(claims))


T1 = ("theorem1-quadrature", "theorem1-montecarlo")
BRANCH_END = (["tests/test_highdim_branch_end.py::test_closed_form_is_the_extrapolated_finite_d_pitchfork"],
              ("highdim-branch-end",))
KPGD, KSGD, KMC = ("tests/test_kernels_pgd.py::", "tests/test_kernels_sgd.py::",
                   "tests/test_kernels_montecarlo.py::")
