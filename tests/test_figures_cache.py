"""The figure-data cache: hits, and detection of missing, stale and corrupt entries; atomic writes."""

import hashlib
import json

import numpy as np
import pytest

from figures import versions
from figures.cache import DataCache, atomic_write, cache_key
from figures.versions import VERSIONED, package_versions

PARAMS = {"n": 3, "x": 0.5, "name": "a", "sizes": [1, 2]}


def _save(cache, params=PARAMS, data=None, stem="demo"):
    key = cache_key("demo", "src", params, 7)
    data = {"a": np.arange(5.0), "b": np.array(["x", "yy"])} if data is None else data
    cache.save(stem, key, data, recipe="demo", source_hash="src", params=params, seed=7)
    return key


def test_roundtrip_is_a_hit_with_identical_arrays(tmp_path):
    cache = DataCache(tmp_path)
    key = _save(cache)
    got = cache.load("demo", key)
    assert got.status == "hit"
    np.testing.assert_array_equal(got.data["a"], np.arange(5.0))
    np.testing.assert_array_equal(got.data["b"], np.array(["x", "yy"]))
    meta = json.loads((tmp_path / "demo.json").read_text())
    assert meta["params"] == PARAMS and meta["seed"] == 7 and meta["versions"]["numpy"] == np.__version__
    assert {"created", "source_hash", "npz_sha256", "arrays"} <= set(meta)


def test_missing_entry(tmp_path):
    assert DataCache(tmp_path / "nowhere").load("demo", "k").status == "missing"


def test_key_depends_on_every_ingredient():
    base = cache_key("demo", "src", PARAMS, 7)
    assert base != cache_key("other", "src", PARAMS, 7)
    assert base != cache_key("demo", "src2", PARAMS, 7)
    assert base != cache_key("demo", "src", {**PARAMS, "n": 4}, 7)
    assert base != cache_key("demo", "src", PARAMS, 8)
    assert base == cache_key("demo", "src", dict(reversed(PARAMS.items())), 7)  # order-free


def test_stale_entry_for_other_parameters(tmp_path):
    cache = DataCache(tmp_path)
    _save(cache)
    got = cache.load("demo", cache_key("demo", "src", {**PARAMS, "n": 4}, 7))
    assert got.status == "stale" and got.data is None


def test_truncated_npz_is_corrupt(tmp_path):
    cache = DataCache(tmp_path)
    key = _save(cache)
    npz = tmp_path / "demo.npz"
    npz.write_bytes(npz.read_bytes()[:-40])
    assert cache.load("demo", key).status == "corrupt"


def test_garbage_npz_with_matching_hash_is_corrupt(tmp_path):
    # Even a sidecar that vouches for the bytes cannot make an unreadable archive a hit.
    cache = DataCache(tmp_path)
    key = _save(cache)
    (tmp_path / "demo.npz").write_bytes(b"not a zip file")
    meta = json.loads((tmp_path / "demo.json").read_text())
    meta["npz_sha256"] = hashlib.sha256(b"not a zip file").hexdigest()
    (tmp_path / "demo.json").write_text(json.dumps(meta))
    got = cache.load("demo", key)
    assert got.status == "corrupt" and "unreadable" in got.reason


@pytest.mark.parametrize("edit", ["params", "arrays", "garbage", "delete"])
def test_edited_or_missing_sidecar_is_corrupt(tmp_path, edit):
    cache = DataCache(tmp_path)
    key = _save(cache)
    sidecar = tmp_path / "demo.json"
    meta = json.loads(sidecar.read_text())
    if edit == "params":
        meta["params"]["n"] = 4
        sidecar.write_text(json.dumps(meta))
    elif edit == "arrays":
        meta["arrays"]["c"] = {"dtype": "<f8", "shape": [1]}
        sidecar.write_text(json.dumps(meta))
    elif edit == "garbage":
        sidecar.write_text("{ not json")
    else:
        sidecar.unlink()
    assert cache.load("demo", key).status == "corrupt"


def test_npz_replaced_without_new_sidecar_is_corrupt(tmp_path):
    # A crash between the npz and the sidecar write leaves a new npz with the old sidecar.
    cache = DataCache(tmp_path)
    key = _save(cache)
    np.savez(tmp_path / "demo.npz", a=np.zeros(5), b=np.array(["x", "yy"]))
    assert cache.load("demo", key).status == "corrupt"


def test_atomic_write_leaves_nothing_on_exception(tmp_path):
    target = tmp_path / "file.bin"

    def write(fh):
        fh.write(b"partial")
        raise RuntimeError("interrupted")

    with pytest.raises(RuntimeError, match="interrupted"):
        atomic_write(target, write)
    assert list(tmp_path.iterdir()) == []


def test_interrupted_sidecar_write_leaves_a_detectably_corrupt_entry(tmp_path, monkeypatch):
    import figures.cache as cache_module

    cache = DataCache(tmp_path)
    key = _save(cache)
    before = sorted(p.name for p in tmp_path.iterdir())
    real = cache_module.atomic_write

    def interrupted(path, write):
        if path.suffix != ".json":
            return real(path, write)

        def partial(fh):
            fh.write(b'{"key": ')
            raise OSError("disk full")

        return real(path, partial)

    # The new npz lands, the sidecar write fails half-way: no temporary file may remain and
    # the entry must read as corrupt (old sidecar, new npz), never as a hit.
    monkeypatch.setattr(cache_module, "atomic_write", interrupted)
    with pytest.raises(OSError, match="disk full"):
        cache.save("demo", key, {"a": np.ones(5), "b": np.array(["x", "yy"])}, recipe="demo",
                   source_hash="src", params=PARAMS, seed=7)
    assert sorted(p.name for p in tmp_path.iterdir()) == before
    assert cache.load("demo", key).status == "corrupt"


@pytest.mark.parametrize("data, match", [
    ({"a": np.array([object()])}, "dtype object"),
    ({"file": np.zeros(2)}, "not allowed"),
    ({}, "non-empty"),
])
def test_bad_data_is_refused_before_writing(tmp_path, data, match):
    with pytest.raises(ValueError, match=match):
        _save(DataCache(tmp_path), data=data)
    assert not any(tmp_path.iterdir())


def test_non_json_parameters_are_refused():
    with pytest.raises(ValueError, match="not allowed"):
        cache_key("demo", "src", {"x": np.float32(1.0)}, 0)


_MALFORMED = {
    "list instead of an object": lambda m: [m],
    "unknown format": lambda m: {**m, "format": 99},
    "format as bool": lambda m: {**m, "format": True},
    "missing dtype": lambda m: {**m, "arrays": {"a": {"shape": [5]}, "b": m["arrays"]["b"]}},
    "bad dtype": lambda m: {**m, "arrays": {**m["arrays"], "a": {"dtype": "<q9", "shape": [5]}}},
    "object dtype": lambda m: {**m, "arrays": {**m["arrays"], "a": {"dtype": "|O", "shape": [5]}}},
    "null shape": lambda m: {**m, "arrays": {**m["arrays"], "a": {"dtype": "<f8", "shape": None}}},
    "negative size": lambda m: {**m, "arrays": {**m["arrays"], "a": {"dtype": "<f8", "shape": [-5]}}},
    "arrays as a list": lambda m: {**m, "arrays": ["a", "b"]},
    "seed as text": lambda m: {**m, "seed": "7"},
    "params as a list": lambda m: {**m, "params": [1]},
}


@pytest.mark.parametrize("how", sorted(_MALFORMED))
def test_malformed_sidecar_is_corrupt_and_a_rewrite_heals_it(tmp_path, how):
    cache = DataCache(tmp_path)
    key = _save(cache)
    meta = json.loads((tmp_path / "demo.json").read_text())
    (tmp_path / "demo.json").write_text(json.dumps(_MALFORMED[how](meta)))
    got = cache.load("demo", key)
    assert got.status == "corrupt" and "sidecar" in got.reason, got
    _save(cache)  # what the runner does on anything but a hit
    assert cache.load("demo", key).status == "hit"


def test_temporaries_of_dead_writers_are_removed_and_live_ones_kept(tmp_path):
    import os
    import subprocess
    import sys

    from figures.cache import remove_stale_temporaries

    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                          text=True, check=True)
    stale = tmp_path / f".x.png.{int(dead.stdout)}-00ff.tmp"
    live = tmp_path / f".y.png.{os.getpid()}-00ff.tmp"
    stale.write_bytes(b"half")
    live.write_bytes(b"half")
    assert remove_stale_temporaries(tmp_path) == [stale]
    assert not stale.exists() and live.exists()


def test_package_versions_are_read_once_per_process_and_returned_as_a_new_dict(monkeypatch):
    calls = []

    def version(package):
        calls.append(package)
        return "1.0"

    monkeypatch.setattr(versions.metadata, "version", version)
    versions._installed_versions.cache_clear()
    try:
        first = package_versions()
        first["numpy"] = "edited by a caller"
        assert package_versions()["numpy"] == "1.0"
        assert sorted(calls) == sorted(VERSIONED)
    finally:
        versions._installed_versions.cache_clear()
