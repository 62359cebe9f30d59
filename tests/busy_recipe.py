"""A figure recipe that stays busy until its process is stopped: the interrupt tests of the real
command (tests/test_cli_faults.py) signal it while its workers compute, whatever the machine's
speed (a real recipe's cost is no bound: one finishing before the signal would leave nothing to
interrupt). ``busy_recipe_two`` is the same recipe under a second name, so that two workers compute.

The worker imports this module by name (``figures.work``: a recipe in the module the command
found it in); the command's process finds it through a patched ``figures.registry.discover_recipes``.
"""

import time

NAME = "busy_one"
TITLE = "A recipe that computes until it is stopped"
SEED = 0
LIMIT_SECONDS = 300.0   # a stray worker ends on its own after this


def params(quick: bool) -> dict:
    return {}


def compute(p: dict, rng, progress) -> dict:
    start = time.monotonic()
    while time.monotonic() - start < LIMIT_SECONDS:
        time.sleep(0.02)
    raise TimeoutError(f"{NAME}: not stopped within {LIMIT_SECONDS} s")


def plot(data: dict, p: dict):
    raise AssertionError("never reached: the recipe is stopped while it computes")
