"""[CLS] hidden states of every layer of a frozen BERT-architecture encoder (paper Section 2).

For a sentence tokenised as ``[CLS] w_1 ... w_m [SEP]``, a BERT encoder with ``n_layers``
transformer blocks yields hidden states h^(0), ..., h^(n_layers) (h^(0) = embedding output,
``output_hidden_states=True``). The feature of layer l is h^(l)[0], the state at the [CLS]
position. h^(0)[0] = LayerNorm(E_word[CLS] + E_pos[0] + E_type[0]) is the same vector for every
sentence, so a probe on it is at chance; later layers mix in the other tokens through attention.

torch and transformers are imported inside the functions (the optional ``probing`` extra).
Results may be cached on disk as ``cls-<key>.npz`` + ``cls-<key>.json``, the key hashing the
weights, the architecture, the token ids and the sentences; files are written atomically.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import time
from pathlib import Path

import numpy as np

__all__ = ["ClsStates", "EncoderUnavailable", "load_encoder", "cls_hidden_states", "sentences_sha256"]

_FORMAT = "cls-hidden-states/1"


class EncoderUnavailable(OSError):
    """The encoder's files are not on this machine (nothing is downloaded)."""


@dataclasses.dataclass(frozen=True, kw_only=True)
class ClsStates:
    """``states[l, i]``: [CLS] state of layer l (0 = embeddings) for sentence i, float64.

    The encoder computes in float32; the cache stores float32 and the cast to float64 is exact.
    """

    states: np.ndarray
    model_name: str
    key: str
    sentences_sha256: str
    from_cache: bool
    seconds: float

    @property
    def n_layers(self) -> int:
        """Transformer blocks of the encoder (``states`` has ``n_layers + 1`` rows)."""
        return self.states.shape[0] - 1


def sentences_sha256(sentences) -> str:
    """SHA-256 of the sentences, in order (JSON list, UTF-8)."""
    return hashlib.sha256(json.dumps(list(sentences), ensure_ascii=False).encode()).hexdigest()


def load_encoder(name_or_path):
    """``(model, tokenizer)`` from a local folder or the local Hugging Face cache, never the network.

    Raises ``EncoderUnavailable`` naming ``name_or_path`` when the files are not present.
    """
    try:
        from transformers import AutoModel, AutoTokenizer
    except ImportError as exc:  # pragma: no cover - exercised only without the extra
        raise EncoderUnavailable("transformers is not installed: pip install '.[probing]'") from exc
    try:
        tokenizer = AutoTokenizer.from_pretrained(str(name_or_path), local_files_only=True)
        model = AutoModel.from_pretrained(str(name_or_path), local_files_only=True)
    except OSError as exc:
        raise EncoderUnavailable(
            f"encoder {str(name_or_path)!r} is not available locally (no download is attempted): "
            f"pass a folder holding config.json, the weights and the tokenizer files, or fill the "
            f"Hugging Face cache first ({type(exc).__name__}: {exc})") from exc
    return model, tokenizer


def _weights_sha256(model) -> str:
    import torch

    h = hashlib.sha256()
    for name, tensor in sorted(model.state_dict().items()):
        t = tensor.detach().cpu().contiguous()
        h.update(f"{name}|{t.dtype}|{tuple(t.shape)}|".encode())
        h.update(t.reshape(-1).view(torch.uint8).numpy().tobytes())
    return h.hexdigest()


def _architecture(model) -> dict:
    config = model.config.to_dict()
    return {k: v for k, v in config.items()
            if not k.startswith("_") and k not in ("transformers_version", "name_or_path", "dtype", "torch_dtype")}


def _cache_key(model, input_ids, sentences_hash) -> tuple[str, dict]:
    arch = json.dumps(_architecture(model), sort_keys=True, default=str)
    ids = hashlib.sha256(json.dumps(input_ids).encode()).hexdigest()
    identity = {"format": _FORMAT, "weights_sha256": _weights_sha256(model),
                "architecture_sha256": hashlib.sha256(arch.encode()).hexdigest(),
                "token_ids_sha256": ids, "sentences_sha256": sentences_hash}
    key = hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()
    return key, identity


def _atomic_write(path: Path, write) -> None:
    """``write(fileobj)`` into a temporary file beside ``path``, then ``os.replace`` it into place."""
    import tempfile

    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        Path(tmp).unlink(missing_ok=True)


def _read_cache(npz: Path, sidecar: Path, key: str, shape: tuple):
    """The cached states, or None when absent, for another key, or unreadable (then recomputed)."""
    if not (npz.is_file() and sidecar.is_file()):
        return None
    try:
        meta = json.loads(sidecar.read_text())
        with np.load(npz, allow_pickle=False) as data:
            states = data["states"]
    except Exception:  # a truncated or edited entry is a miss: it is recomputed and rewritten
        return None
    if meta.get("key") != key or states.shape != shape or states.dtype != np.float32:
        return None
    return states


def _checked_inputs(sentences, model, tokenizer, batch_size):
    """(model, tokenizer, sentences as strings) after the argument checks of ``cls_hidden_states``."""
    if isinstance(model, (str, os.PathLike)):
        if tokenizer is not None:
            raise ValueError("tokenizer must be None when model is a name or path (both are loaded)")
        model, tokenizer = load_encoder(model)
    elif tokenizer is None:
        raise ValueError("tokenizer is required when model is a model object")
    if not (isinstance(batch_size, (int, np.integer)) and batch_size >= 1):
        raise ValueError(f"batch_size={batch_size!r} is not allowed: a positive integer")
    sentences = [str(s) for s in sentences]
    if not sentences:
        raise ValueError("sentences is empty: at least one sentence is needed")
    return model, tokenizer, sentences


def _token_ids(tokenizer, sentences, model) -> list:
    """The token ids of each sentence; ValueError if one exceeds the encoder's positions."""
    input_ids = tokenizer(sentences)["input_ids"]
    limit = model.config.max_position_embeddings
    too_long = [i for i, ids in enumerate(input_ids) if len(ids) > limit]
    if too_long:
        raise ValueError(f"sentence {too_long[0]} has {len(input_ids[too_long[0]])} tokens, "
                         f"more than max_position_embeddings={limit}")
    return input_ids


def _run_batches(model, tokenizer, sentences, input_ids, shape, batch_size, bar_factory, model_name):
    """The float32 [CLS] states (``shape``), batches of ``batch_size`` sorted by length, in eval mode."""
    import torch

    order = np.argsort([len(ids) for ids in input_ids], kind="stable")
    states = np.empty(shape, dtype=np.float32)
    was_training = model.training
    model.eval()
    try:
        with torch.inference_mode(), bar_factory(total=len(sentences),
                                                 desc=f"[CLS] states {model_name or type(model).__name__}") as bar:
            for lo in range(0, len(sentences), batch_size):
                idx = order[lo:lo + batch_size]
                batch = tokenizer([sentences[i] for i in idx], padding=True, return_tensors="pt")
                if not bool((batch["input_ids"][:, 0] == tokenizer.cls_token_id).all()):
                    raise ValueError("the tokenizer does not put [CLS] at position 0 of every padded "
                                     "sequence (a left-padding or non-BERT tokenizer?)")
                batch = {name: tensor.to(model.device) for name, tensor in batch.items()}
                hidden = model(**batch, output_hidden_states=True).hidden_states
                if len(hidden) != shape[0]:
                    raise ValueError(f"the encoder returned {len(hidden)} hidden states, expected {shape[0]}")
                states[:, idx, :] = torch.stack([h[:, 0, :] for h in hidden]).float().cpu().numpy()
                bar.update(len(idx))
    finally:
        model.train(was_training)
    return states


def _write_cache(npz: Path, sidecar: Path, states, meta: dict) -> None:
    """The states and their JSON sidecar (``meta`` plus the package versions), written atomically."""
    import torch

    npz.parent.mkdir(parents=True, exist_ok=True)
    _atomic_write(npz, lambda f: np.savez(f, states=states))
    meta = {**meta, "versions": {"torch": torch.__version__, "transformers": _version("transformers")},
            "created": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
    _atomic_write(sidecar, lambda f: f.write(json.dumps(meta, indent=1).encode()))


def cls_hidden_states(sentences, model, tokenizer=None, *, batch_size=32, cache_dir=None,
                      progress=True) -> ClsStates:
    """[CLS] state of every layer for every sentence: ``states`` of shape (n_layers+1, n, hidden).

    ``model`` is a BERT-architecture encoder (with ``tokenizer``), or a local path / cached
    model name passed to ``load_encoder``. Sentences run in batches of ``batch_size``, sorted by
    length to limit padding (right padding, so [CLS] stays at position 0; this is checked).
    With ``cache_dir``, results are read from / written to ``cls-<key>.npz`` and its JSON sidecar.
    ``progress``: bool (a tqdm bar on stderr or none) or a tqdm-like factory ``f(total=, desc=)``.
    """
    bar_factory = progress if callable(progress) else _tqdm_factory(bool(progress))
    model, tokenizer, sentences = _checked_inputs(sentences, model, tokenizer, batch_size)
    start = time.perf_counter()
    input_ids = _token_ids(tokenizer, sentences, model)
    shape = (model.config.num_hidden_layers + 1, len(sentences), model.config.hidden_size)
    sentences_hash = sentences_sha256(sentences)
    model_name = getattr(model.config, "name_or_path", "") or getattr(model.config, "_name_or_path", "")
    key = identity = None
    if cache_dir is not None:
        key, identity = _cache_key(model, input_ids, sentences_hash)
        cache_dir = Path(cache_dir).expanduser().resolve()
        npz, sidecar = cache_dir / f"cls-{key[:20]}.npz", cache_dir / f"cls-{key[:20]}.json"
        cached = _read_cache(npz, sidecar, key, shape)
        if cached is not None:
            return ClsStates(states=cached.astype(np.float64), model_name=model_name, key=key,
                             sentences_sha256=sentences_hash, from_cache=True,
                             seconds=time.perf_counter() - start)
    states = _run_batches(model, tokenizer, sentences, input_ids, shape, batch_size, bar_factory, model_name)
    seconds = time.perf_counter() - start
    if cache_dir is not None:
        _write_cache(npz, sidecar, states, {"key": key, "identity": identity, "model_name": model_name,
                                            "shape": list(shape), "dtype": "float32",
                                            "n_sentences": len(sentences), "seconds": seconds})
    return ClsStates(states=states.astype(np.float64), model_name=model_name, key=key or "",
                     sentences_sha256=sentences_hash, from_cache=False, seconds=seconds)


def _tqdm_factory(enabled: bool):
    import functools

    from tqdm.auto import tqdm

    return functools.partial(tqdm, disable=not enabled, unit="sentence")


def _version(package: str) -> str:
    from importlib.metadata import version

    return version(package)
