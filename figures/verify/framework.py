"""Claims of the paper checked numerically: the ``ClaimResult`` record and the ``claim`` decorator.

A claim is a function ``check(quick: bool, rng: numpy.random.Generator) -> Check`` in a module
of ``figures/verify/claims/``, decorated with ``@claim(id, statement)``; the decorator turns it
into a ``Claim`` whose call returns a ``ClaimResult`` (the row of the verification report).
Claims are found by scanning that package (no global registry to mutate), so adding one is
adding a decorated function there.

A claim about an experiment that a figure computes reads that figure's data instead of computing
it again: ``@claim(id, statement, figure="recipe_name")`` declares the dependency (once), and the
check is then ``check(quick, rng, figure) -> Check`` with ``figure`` a ``FigureData`` (the recipe's
parameters and arrays, ``figures.runner.figure_data``; the arrays are read at their first use):
taken from the cache entry of the run's output folder when it is valid (its key covers the recipe's code, parameters, seed and package
versions, ``figures.cache``), else computed and stored there; computed in memory when the claim
is called without a cache folder. Its randomness is then the figure's (the recipe's seed), not
the claim's ``rng``. A claim comparing the data of several figures declares them all,
``figure=("recipe_a", "recipe_b")``, and its check receives one ``FigureData`` per name, in that
order: ``check(quick, rng, a, b)``; each is read as above, and the report names every entry's key.

A claim needing a module that does not exist yet calls ``require("package.module")``, which
raises ``MissingPrerequisite``: the claim is reported as 'skipped' with the reason, never as
passed. Any other exception is reported as 'error' and counts as a failure.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import importlib
import importlib.util
import time
import traceback

import numpy as np

from numerics.pool import Terminated

__all__ = ["Check", "Claim", "ClaimResult", "MissingPrerequisite", "claim", "discover_claims",
           "require"]

CLAIM_PACKAGE = "figures.verify.claims"
STATUSES = ("pass", "fail", "error", "skipped")


class MissingPrerequisite(Exception):
    """A module the claim needs is not available (yet)."""


def require(module_name: str):
    """Import and return ``module_name``, or raise ``MissingPrerequisite`` if it does not exist."""
    try:
        found = importlib.util.find_spec(module_name) is not None
    except ModuleNotFoundError:
        found = False
    if not found:
        raise MissingPrerequisite(f"module {module_name} is not available")
    return importlib.import_module(module_name)


@dataclasses.dataclass(frozen=True, kw_only=True)
class Check:
    """What a claim function measured.

    method: how it was checked; measured: the number compared with ``tolerance`` (pass iff
    measured <= tolerance, both >= 0 by convention, e.g. a max |z| or a max relative error);
    measured_text: the measured quantity in words; derivation: where the tolerance comes from;
    details: JSON-serialisable extra numbers for the JSON report.
    """

    method: str
    measured: float
    measured_text: str
    tolerance: float
    derivation: str
    details: dict = dataclasses.field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return bool(np.isfinite(self.measured) and self.measured <= self.tolerance)


@dataclasses.dataclass(frozen=True, kw_only=True)
class ClaimResult:
    """One row of the verification report."""

    claim_id: str
    statement: str
    method: str
    measured: float
    measured_text: str
    tolerance: float
    derivation: str
    status: str
    seconds: float
    details: dict = dataclasses.field(default_factory=dict)
    cpu_seconds: float = 0.0   # this process and its ended children (figures.provenance.cpu_seconds)

    def __post_init__(self):
        if self.status not in STATUSES:
            raise ValueError(f"status={self.status!r} is not allowed: status must be one of {STATUSES}")

    @property
    def ok(self) -> bool:
        """False for 'fail' and 'error'; a skipped claim is not a failure (it is listed as such)."""
        return self.status in ("pass", "skipped")


def claim_seed_sequence(claim_id: str, seed: int) -> np.random.SeedSequence:
    """Independent stream per claim: entropy (seed, 32 bits of SHA-256 of the claim id)."""
    tag = int.from_bytes(hashlib.sha256(claim_id.encode()).digest()[:4], "little")
    return np.random.SeedSequence([seed, tag])


@dataclasses.dataclass(frozen=True)
class Claim:
    """A registered claim; ``claim(quick, seed, cache)`` runs it and returns a ``ClaimResult``.
    ``figures``: the recipes whose data the check reads, in the order of its arguments (see the
    module docstring), or (). ``cost``: the CPU seconds of a full run, measured (as a recipe's ``COST``;
    the claims' values: one worker process running every claim in turn, so a claim that first loads a
    library or a compiled kernel carries that cost); it only orders the work of ``slr`` on several
    workers, longest first, so that they finish together."""

    claim_id: str
    statement: str
    check: object
    figures: tuple = ()
    cost: float = 0.0

    @property
    def name(self) -> str:
        return self.claim_id

    def _run_check(self, quick: bool, rng, cache):
        if not self.figures:
            return _checked(self.check(quick, rng)), {}
        from ..runner import figure_data

        figures = [figure_data(name, quick=quick, cache_dir=cache) for name in self.figures]
        check = _checked(self.check(quick, rng, *figures))
        read = [{"recipe": f.name, "status": f.status, "key": f.key} for f in figures]
        return check, {"figure_data": read[0] if len(read) == 1 else read}

    def __call__(self, quick: bool = False, seed: int = 0, cache=None) -> ClaimResult:
        """``cache``: the folder of figure data (``OutputPaths.cache``) a claim with ``figures``
        reads and fills; None: their data is computed in memory."""
        from ..provenance import cpu_seconds

        cpu = cpu_seconds()
        result = self._result(quick, seed, cache)
        return dataclasses.replace(result, cpu_seconds=cpu_seconds() - cpu)

    def _result(self, quick: bool, seed: int, cache) -> ClaimResult:
        rng = np.random.default_rng(claim_seed_sequence(self.claim_id, seed))
        start = time.perf_counter()
        row = dict(claim_id=self.claim_id, statement=self.statement)
        try:
            check, provenance = self._run_check(quick, rng, cache)
        except MissingPrerequisite as exc:
            return ClaimResult(**row, method="-", measured=float("nan"), measured_text=str(exc),
                               tolerance=float("nan"), derivation="-", status="skipped",
                               seconds=time.perf_counter() - start)
        except Terminated:
            raise
        except (Exception, SystemExit) as exc:  # reported as an error row, and a failure of the run
            return ClaimResult(**row, method="-", measured=float("nan"),
                               measured_text=f"{type(exc).__name__}: {exc}", tolerance=float("nan"),
                               derivation="-", status="error", seconds=time.perf_counter() - start,
                               details={"traceback": traceback.format_exc()})
        return ClaimResult(**row, method=check.method, measured=float(check.measured),
                           measured_text=check.measured_text, tolerance=float(check.tolerance),
                           derivation=check.derivation, status="pass" if check.passed else "fail",
                           seconds=time.perf_counter() - start, details={**check.details, **provenance})


class InvalidCheck(Exception):
    """A claim function returned something other than a well-formed ``Check``."""


def _checked(check) -> Check:
    """``check`` if it is a Check whose measured value is >= 0 (+inf: a failure) and whose
    tolerance is finite and >= 0 (an infinite tolerance would make a check that cannot fail)."""
    if not isinstance(check, Check):
        raise InvalidCheck(f"the claim returned {type(check).__name__}, not a Check")
    for field in ("measured", "tolerance"):
        value = getattr(check, field)
        try:
            number = float(value)
        except (TypeError, ValueError):
            raise InvalidCheck(f"{field}={value!r} is not a number") from None
        if not (number >= 0 and (field == "measured" or math.isfinite(number))):
            allowed = "a number >= 0 (inf for a failure)" if field == "measured" else "a finite number >= 0"
            raise InvalidCheck(f"{field}={value!r} is not allowed: {allowed} is needed")
    return check


def claim(claim_id: str, statement: str, *, figure: str | tuple = (), cost: float = 0.0):
    """Decorator: ``@claim("theorem1-quadrature", "Theorem 1: ...")`` on ``check(quick, rng) -> Check``;
    with ``figure="recipe_name"`` on ``check(quick, rng, figure: FigureData) -> Check``, with
    ``figure=("a", "b")`` on ``check(quick, rng, a: FigureData, b: FigureData)``; ``cost``: the
    measured CPU seconds of a full run (orders the work only)."""
    figures = (figure,) if isinstance(figure, str) else tuple(figure)
    if not all(isinstance(name, str) and name for name in figures) or len(set(figures)) != len(figures):
        raise ValueError(f"figure={figure!r} is not allowed: a recipe name or a tuple of distinct recipe names")

    def wrap(check) -> Claim:
        return Claim(claim_id, statement, check, figures, float(cost))

    return wrap


def discover_claims() -> list[Claim]:
    """Every ``Claim`` at module level in ``figures/verify/claims/``, by module ``ORDER``, then source order."""
    from ..registry import public_modules, unique_names

    claims = []
    for module in sorted(public_modules(CLAIM_PACKAGE), key=lambda m: (getattr(m, "ORDER", 100), m.__name__)):
        claims += [obj for obj in vars(module).values() if isinstance(obj, Claim)]
    return unique_names(claims, "claim")
