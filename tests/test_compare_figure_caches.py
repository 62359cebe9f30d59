"""scripts/compare_figure_caches.py: bit-for-bit comparison of two figure caches."""

import importlib.util
from pathlib import Path

import numpy as np

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "compare_figure_caches.py"


def _load():
    spec = importlib.util.spec_from_file_location("compare_figure_caches", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_identical_caches_pass_and_any_change_is_reported(tmp_path, capsys):
    compare = _load()
    before, after = tmp_path / "before", tmp_path / "after"
    before.mkdir(), after.mkdir()
    x = np.array([1.0, np.nan, 3.0])
    np.savez(before / "a.npz", x=x, n=np.arange(3))
    np.savez(after / "a.npz", x=x.copy(), n=np.arange(3))
    assert compare.main([str(before), str(after)]) == 0          # NaN at the same place is equal
    np.savez(after / "a.npz", x=x + np.array([0.0, 0.0, 2.0**-51]), n=np.arange(3))
    assert compare.main([str(before), str(after)]) == 1          # one ulp of 3.0 is a difference
    assert "x: differs" in capsys.readouterr().out
    np.savez(after / "a.npz", x=x.astype(np.float32), n=np.arange(3))
    assert compare.compare_caches(before, after)["a.npz"] == ["x: float64(3,) vs float32(3,)"]
    (after / "a.npz").unlink()
    assert compare.compare_caches(before, after) == {"a.npz": ["missing after"]}
