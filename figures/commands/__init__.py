"""The ``slr`` subcommands beyond running figures and claims: risk, list, clean."""

from .clean import add_clean_parser
from .risk import add_risk_parser
from .status import add_list_parser

__all__ = ["add_clean_parser", "add_list_parser", "add_risk_parser"]
