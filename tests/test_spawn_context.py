"""numerics.spawn_context: pool workers end by os._exit after multiprocessing's exit steps."""

import atexit

from numerics.pool import worker_context


def _mark_at_exit(path):
    atexit.register(lambda: open(path, "w").close())


def _fail():
    raise RuntimeError("the target failed")


def _report(path):
    with open(path, "w") as fh:
        fh.write("ran")


def test_worker_skips_the_interpreter_teardown(tmp_path):
    marker = tmp_path / "atexit-ran"
    process = worker_context().Process(target=_mark_at_exit, args=(str(marker),))
    process.start()
    process.join(60)
    assert process.exitcode == 0
    assert not marker.exists()   # atexit handlers are part of the teardown that is skipped


def test_worker_keeps_its_exit_code_and_its_work(tmp_path):
    failing = worker_context().Process(target=_fail)
    failing.start()
    failing.join(60)
    assert failing.exitcode == 1
    out = tmp_path / "out"
    working = worker_context().Process(target=_report, args=(str(out),))
    working.start()
    working.join(60)
    assert working.exitcode == 0 and out.read_text() == "ran"
    assert worker_context().get_start_method() == "spawn"
