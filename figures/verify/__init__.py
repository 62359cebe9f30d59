"""The verification report: every claim of the paper checked numerically (``slr verify``)."""

from .framework import Check, Claim, ClaimResult, MissingPrerequisite, claim, discover_claims, require
from .report import run_claims, summary_line, write_report

__all__ = ["Check", "Claim", "ClaimResult", "MissingPrerequisite", "claim", "discover_claims",
           "require", "run_claims", "summary_line", "write_report"]
