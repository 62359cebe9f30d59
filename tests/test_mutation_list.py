"""The mutation campaign's list (tests/mutation/mutants*.py) is well formed and true to the tree:
every snippet exists exactly once, every named test file and claim exists. The campaign itself
(`python -m tests.mutation`) runs in CI, not here."""

import importlib.util
from pathlib import Path

import pytest

from figures.verify import discover_claims

ROOT = Path(__file__).resolve().parents[1]


def _load(name):
    spec = importlib.util.spec_from_file_location(f"_slr_mutation_{name}", ROOT / "tests" / "mutation" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    import sys

    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


RUNNER = _load("runner")
MUTANTS = RUNNER.load_mutants(ROOT)


def test_every_snippet_exists_exactly_once_and_the_list_is_well_formed():
    assert RUNNER.check_mutants(MUTANTS.MUTANTS, ROOT) == []


def test_the_campaign_has_at_least_40_mutants_across_the_three_categories():
    counts = {c: sum(m.category == c for m in MUTANTS.MUTANTS) for c in MUTANTS.CATEGORIES}
    assert sum(counts.values()) >= 40
    assert all(n >= 8 for n in counts.values()), counts


def test_named_tests_and_claims_exist():
    claim_ids = {c.claim_id for c in discover_claims()}
    for m in MUTANTS.MUTANTS:
        assert set(m.claims) <= claim_ids, (m.id, set(m.claims) - claim_ids)
        for node in m.tests:
            path, _, name = node.partition("::")
            assert (ROOT / path).is_file(), (m.id, node)
            if name:
                assert f"def {name.split('[')[0].split('::')[-1]}(" in (ROOT / path).read_text(), (m.id, node)
        if m.category in ("theory", "numerics"):
            assert m.claims, f"code mutant {m.id} names no claim"


def test_no_snippet_cites_the_specification_by_section():
    # Section references in strings are rewritten project-wide; a mutant must not depend on them.
    assert not [m.id for m in MUTANTS.MUTANTS if "§" in m.original or "§" in m.replacement]


def test_a_moved_snippet_is_an_error(tmp_path):
    m = MUTANTS.MUTANTS[0]
    (tmp_path / "tests" / "mutation").mkdir(parents=True)
    for source in (ROOT / "tests" / "mutation").glob("*.py"):  # the list and the modules it imports
        (tmp_path / "tests" / "mutation" / source.name).write_text(source.read_text())
    target = tmp_path / m.path
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text("nothing here\n")
    problems = RUNNER.check_mutants([m], tmp_path)
    assert len(problems) == 1 and "found 0 times" in problems[0]
    target.write_text(m.original + "\n" + m.original + "\n")
    assert "found 2 times" in RUNNER.check_mutants([m], tmp_path)[0]


def test_the_goals_are_those_of_the_campaign():
    assert RUNNER.GOALS == {"tests kill code mutants": 0.95, "claims kill code mutants": 0.90,
                            "verification mutants killed": 1.0}


def test_rates_and_the_exit_rule():
    Outcome = RUNNER.Outcome
    code = MUTANTS.Mutant("a", "theory", "p", "x", "y", "", ("t",), ("c",))
    ver = MUTANTS.Mutant("b", "verification", "p", "x", "y", "", ("t",))
    outcomes = [Outcome(code, tests_killed=True, claims_killed=False), Outcome(ver, tests_killed=True)]
    assert RUNNER.rates(outcomes) == {"tests kill code mutants": 1.0, "claims kill code mutants": 0.0,
                                      "verification mutants killed": 1.0}
    assert RUNNER.report(outcomes, 1.0) is False
    outcomes[0].claims_killed = True
    assert RUNNER.report(outcomes, 1.0) is True


@pytest.mark.parametrize("m", MUTANTS.MUTANTS[:3], ids=lambda m: m.id)
def test_apply_mutant_changes_only_the_copy(m, tmp_path):
    copy = tmp_path / "copy"
    (copy / m.path).parent.mkdir(parents=True)
    (copy / m.path).write_text((ROOT / m.path).read_text())
    RUNNER.apply_mutant(copy, m)
    assert m.replacement in (copy / m.path).read_text()
    assert m.original in (ROOT / m.path).read_text()
