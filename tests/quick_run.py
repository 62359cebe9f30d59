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
    # Imported here, not at the top: each spawned pool worker of the script runs this module again
    # (as ``__mp_main__``), and pytest's import costs it ~0.12 s CPU.
    import pytest

    from figures import cli

    outcomes, results = {}, {}
    figures_done, verify_done = cli._figures_done, cli._verify_done

    def keep_figures(found, *args, **kwargs):
        outcomes.update((o.name, o) for o in found)
        return figures_done(found, *args, **kwargs)

    def keep_claims(found, *args, **kwargs):
        results.update((r.claim_id, r) for r in found)
        return verify_done(found, *args, **kwargs)

    out = io.StringIO()
    with pytest.MonkeyPatch.context() as mp, contextlib.redirect_stdout(out):
        mp.setattr(cli, "_figures_done", keep_figures)
        mp.setattr(cli, "_verify_done", keep_claims)
        status = cli.main(argv)
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
