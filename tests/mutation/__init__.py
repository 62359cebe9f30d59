"""A standing mutation campaign: one-line bugs planted in a scratch copy of the repository, each
expected to be caught by named tests and claims (``mutants.py``), and the runner that plants
them (``runner.py``; ``python -m tests.mutation`` from the repository root)."""
