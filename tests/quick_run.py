"""The session's quick ``slr`` runs in one process, and the background run of ``slr reproduce --quick``.

``quick_cli_run(argv)`` runs ``slr <argv>`` in the calling process and keeps what the command
reports (tests/conftest.py shares it between the tests). Run as a script,
``python tests/quick_run.py <pickle> <slr argument>...`` does the same and leaves
``(status, stdout, outcomes, results)`` pickled in ``<pickle>`` (written to a temporary name, then
renamed: a reader never sees it half written): under pytest-xdist one worker starts it as the run
begins, so the quick reproduction's pool and both workers' other tests share the cores instead of a
worker waiting idle for it (tests/conftest.py, ``_start_quick_reproduction``).
"""

import contextlib
import io
import os
import pickle
import sys
from pathlib import Path


def quick_cli_run(argv, figures=False, claims=False):
    """``slr <argv>`` in this process: (exit status, standard output, {recipe: outcome} if
    ``figures``, {claim id: result} if ``claims``), captured where the command reports them."""
    from figures import cli

    outcomes, results = {}, {}
    figures_done, verify_done = cli._figures_done, cli._verify_done

    def keep_figures(found, *args, **kwargs):
        outcomes.update((o.name, o) for o in found)
        return figures_done(found, *args, **kwargs)

    def keep_claims(found, *args, **kwargs):
        results.update((r.claim_id, r) for r in found)
        return verify_done(found, *args, **kwargs)

    # Patched and restored here rather than with pytest's MonkeyPatch: the background script does
    # not import pytest (~0.2 s CPU).
    out = io.StringIO()
    cli._figures_done, cli._verify_done = keep_figures, keep_claims
    try:
        with contextlib.redirect_stdout(out):
            status = cli.main(argv)
    finally:
        cli._figures_done, cli._verify_done = figures_done, verify_done
    return status, out.getvalue(), outcomes, results


def main(args) -> int:
    stored, argv = Path(args[0]), args[1:]
    import matplotlib

    matplotlib.use("Agg")
    value = quick_cli_run(argv, figures=True, claims=True)
    partial = stored.with_name(stored.name + f".{os.getpid()}.tmp")
    partial.write_bytes(pickle.dumps(value))
    partial.replace(stored)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
