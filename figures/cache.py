"""Cache of computed figure data: ``<stem>.npz`` plus a JSON sidecar ``<stem>.json``.

The key of an entry is the SHA-256 of the canonical JSON of (recipe name, hash of the code the
recipe runs (``figures.codehash``: the recipe and every project module it imports,
transitively), parameters, seed, versions of the packages that can change the numbers), so
editing any of that code, changing a parameter or upgrading numpy makes the entry stale.
The sidecar records the key and its ingredients, the package versions, the creation time,
the name, dtype and shape of every array and the SHA-256 of the ``.npz`` bytes.

Writes are atomic: each file goes to a temporary file in the same folder, is flushed to disk
and moved into place with ``os.replace``; the sidecar is written last. A reader therefore sees
either a complete entry or one whose sidecar does not match its ``.npz``, which it reports as
corrupt. ``load`` distinguishes four outcomes: hit, missing, stale (valid entry for another
key) and corrupt (unreadable or truncated ``.npz``, edited or unreadable sidecar, missing or
extra arrays); the caller recomputes on anything but a hit.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import hashlib
import io
import json
import os
import secrets
from pathlib import Path

import numpy as np

from .versions import package_versions

__all__ = ["CacheLookup", "DataCache", "atomic_write", "cache_key", "remove_stale_temporaries"]

_FORMAT = 2  # 2: package versions in the key


def _canonical_json(obj) -> str:
    def refuse(value):
        raise ValueError(f"parameter value {value!r} of type {type(value).__name__} is not allowed: "
                         "cache keys take JSON values only (int, float, str, bool, None, lists, dicts)")

    return json.dumps(obj, sort_keys=True, separators=(",", ":"), allow_nan=False, default=refuse)


def cache_key(name: str, source_hash: str, params: dict, seed: int, versions: dict | None = None) -> str:
    """SHA-256 hex digest of the canonical JSON of the entry's ingredients; ``versions``: the
    package versions (default: those installed, ``package_versions()``)."""
    versions = package_versions() if versions is None else versions
    text = _canonical_json({"recipe": name, "source_hash": source_hash, "params": params, "seed": seed,
                            "versions": versions})
    return hashlib.sha256(text.encode()).hexdigest()


@dataclasses.dataclass(frozen=True)
class CacheLookup:
    """Outcome of ``DataCache.load``: status is 'hit', 'missing', 'stale' or 'corrupt'."""

    status: str
    data: dict | None = None
    reason: str = ""


def _temporary_name(path: Path) -> Path:
    # A fresh hidden name in the same folder (so os.replace is atomic) that names the writing
    # process, so that a later run can tell a live writer's file from debris.
    return path.parent / f".{path.name}.{os.getpid()}-{secrets.token_hex(8)}.tmp"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    return True


def remove_stale_temporaries(folder) -> list[Path]:
    """Delete the temporary files of ``atomic_write`` in ``folder`` whose writing process is gone
    (left by a killed run); returns what was deleted. Files of live processes are kept."""
    removed = []
    for tmp in Path(folder).glob(".*.tmp") if Path(folder).is_dir() else ():
        pid_text = tmp.name.rsplit(".", 2)[-2].split("-")[0]
        if pid_text.isdigit() and not _alive(int(pid_text)):
            with contextlib.suppress(FileNotFoundError):
                tmp.unlink()
                removed.append(tmp)
    return removed


def atomic_write(path: Path, write) -> None:
    """Call ``write(fileobj)`` on a temporary file next to ``path``, then move it into place.

    The temporary file is removed if anything fails or the process is stopped (SIGTERM and
    Ctrl-C raise); after SIGKILL it is removed by ``remove_stale_temporaries`` on the next run."""
    # Created with the default permissions (unlike mkstemp's 0600): the outputs are meant to be shared.
    tmp = _temporary_name(path)
    try:
        with open(tmp, "xb") as fh:
            write(fh)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def _checked_arrays(data) -> dict:
    if not isinstance(data, dict) or not data:
        raise ValueError(f"data={type(data).__name__} is not allowed: compute() must return a "
                         "non-empty dict of numpy arrays")
    arrays = {}
    for key, value in data.items():
        arr = np.asarray(value)
        if not isinstance(key, str) or not key.isidentifier() or key in ("file", "allow_pickle"):
            raise ValueError(f"array name {key!r} is not allowed: names must be Python identifiers "
                             "other than 'file' and 'allow_pickle' (arguments of numpy.savez)")
        if arr.dtype.hasobject:
            raise ValueError(f"array {key!r} has dtype object, which is not allowed (no pickles in "
                             "the cache): return numeric, boolean or fixed-width string arrays")
        arrays[key] = arr
    return arrays


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _array_problem(name, entry) -> str | None:
    if not isinstance(entry, dict) or not isinstance(entry.get("dtype"), str):
        return f"array {name!r}: no dtype string"
    try:
        dtype = np.dtype(entry["dtype"])
    except TypeError:
        return f"array {name!r}: dtype {entry['dtype']!r} unknown"
    if dtype.hasobject:
        return f"array {name!r}: object dtype"
    shape = entry.get("shape")
    if not isinstance(shape, list) or not all(_is_int(n) and n >= 0 for n in shape):
        return f"array {name!r}: shape {shape!r} is not a list of sizes"
    return None


def _sidecar_problem(meta) -> str | None:
    """What is wrong with a parsed sidecar, or None: every field ``load`` relies on is checked
    for its type, so a malformed sidecar is reported as corrupt, never raised or trusted."""
    if not isinstance(meta, dict):
        return f"a JSON object is needed, got {type(meta).__name__}"
    if meta.get("format") != _FORMAT or not _is_int(meta.get("format")):
        return f"format {meta.get('format')!r} is not {_FORMAT}"
    for field, kind in (("key", str), ("recipe", str), ("source_hash", str), ("npz_sha256", str),
                        ("params", dict), ("arrays", dict), ("versions", dict)):
        if not isinstance(meta.get(field), kind):
            return f"{field} is not a {kind.__name__}"
    if not _is_int(meta.get("seed")):
        return "seed is not an integer"
    if not meta["arrays"]:
        return "no arrays listed"
    for name, entry in meta["arrays"].items():
        problem = _array_problem(name, entry)
        if problem:
            return problem
    return None


@dataclasses.dataclass(frozen=True)
class DataCache:
    """An on-disk cache of dicts of arrays in ``directory`` (created on first save)."""

    directory: Path

    def paths(self, stem: str) -> tuple[Path, Path]:
        return Path(self.directory) / f"{stem}.npz", Path(self.directory) / f"{stem}.json"

    def load(self, stem: str, key: str) -> CacheLookup:
        npz_path, json_path = self.paths(stem)
        if not npz_path.exists() and not json_path.exists():
            return CacheLookup("missing", reason="no entry")
        try:
            meta = json.loads(json_path.read_text())
            problem = _sidecar_problem(meta)
            if problem:
                return CacheLookup("corrupt", reason=f"sidecar malformed ({problem})")
            stored_key = meta["key"]
            rebuilt = cache_key(meta["recipe"], meta["source_hash"], meta["params"], meta["seed"], meta["versions"])
            expected_arrays = meta["arrays"]
            digest = meta["npz_sha256"]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            return CacheLookup("corrupt", reason=f"sidecar unreadable ({type(exc).__name__}: {exc})")
        if rebuilt != stored_key:
            return CacheLookup("corrupt", reason="sidecar edited (its key does not match its contents)")
        if stored_key != key:
            return CacheLookup("stale", reason="recipe code, parameters or package versions changed")
        try:
            raw = npz_path.read_bytes()
        except OSError as exc:
            return CacheLookup("corrupt", reason=f"npz unreadable ({exc})")
        if hashlib.sha256(raw).hexdigest() != digest:
            return CacheLookup("corrupt", reason="npz does not match its sidecar (truncated or replaced)")
        try:
            with np.load(io.BytesIO(raw), allow_pickle=False) as npz:
                data = {name: npz[name] for name in npz.files}
        except Exception as exc:  # any failure to parse the archive means a corrupt entry
            return CacheLookup("corrupt", reason=f"npz unreadable ({type(exc).__name__}: {exc})")
        described = {name: (np.dtype(a["dtype"]), tuple(a["shape"])) for name, a in expected_arrays.items()}
        actual = {name: (arr.dtype, arr.shape) for name, arr in data.items()}
        if described != actual:
            return CacheLookup("corrupt", reason="arrays differ from those the sidecar lists")
        return CacheLookup("hit", data=data)

    def save(self, stem: str, key: str, data: dict, *, recipe: str, source_hash: str,
             params: dict, seed: int) -> Path:
        """Write ``data`` atomically, npz first and sidecar last; returns the npz path."""
        arrays = _checked_arrays(data)
        versions = package_versions()
        if cache_key(recipe, source_hash, params, seed, versions) != key:
            raise ValueError(f"key={key!r} is not the key of recipe={recipe!r} with these parameters")
        Path(self.directory).mkdir(parents=True, exist_ok=True)
        npz_path, json_path = self.paths(stem)
        buffer = io.BytesIO()
        np.savez(buffer, **arrays)
        raw = buffer.getvalue()
        atomic_write(npz_path, lambda fh: fh.write(raw))
        meta = {
            "format": _FORMAT, "key": key, "recipe": recipe, "source_hash": source_hash,
            "params": params, "seed": seed, "versions": versions,
            "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "arrays": {name: {"dtype": arr.dtype.str, "shape": list(arr.shape)} for name, arr in arrays.items()},
            "npz_sha256": hashlib.sha256(raw).hexdigest(),
        }
        text = json.dumps(meta, indent=1, sort_keys=True)
        atomic_write(json_path, lambda fh: fh.write(text.encode()))
        return npz_path
