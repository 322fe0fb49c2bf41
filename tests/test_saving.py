"""Saving models as the README says: float32 files, .safetensors, and `to_hf(model).save_pretrained(dir)` read back
by `from_hf(dir)` exactly. Small models built here; the Hugging Face tests skip without the [hf] extra."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest
from test_analysis import random_model

from circuits import CircuitError, CircuitWarning, LayerNorm
from circuits.io.export import load, save, to_tl_state_dict

HAS = {name: importlib.util.find_spec(name) is not None for name in ("safetensors", "torch", "transformers")}
SUFFIXES = [
    ".npz",
    pytest.param(
        ".safetensors", marks=pytest.mark.skipif(not HAS["safetensors"], reason="needs safetensors (the [hf] extra)")
    ),
]


@pytest.mark.parametrize("suffix", SUFFIXES)
def test_a_float32_file_is_half_the_arrays_and_reads_back_the_rounded_weights(tmp_path, suffix):
    model = random_model(3, mlp=True, ln=True, bias=True)
    wide, narrow = save(model, tmp_path / f"m64{suffix}"), save(model, tmp_path / f"m32{suffix}", dtype="float32")
    arrays = sum(a.size for a in to_tl_state_dict(model).values())
    assert wide.stat().st_size - narrow.stat().st_size >= 4 * arrays - 4096  # 4 bytes saved per number, headers aside
    back = to_tl_state_dict(load(narrow))
    for key, value in to_tl_state_dict(model).items():  # the float32 rounding of each weight, read as float64
        assert back[key].dtype == np.float64
        np.testing.assert_array_equal(back[key], np.asarray(value, dtype=np.float32).astype(np.float64), err_msg=key)
    same = to_tl_state_dict(load(wide))
    assert all(np.array_equal(same[k], v) for k, v in to_tl_state_dict(model).items())  # float64: bit for bit


def test_an_unknown_saved_dtype_is_one_line(tmp_path):
    with pytest.raises(CircuitError) as e:
        save(random_model(0), tmp_path / "m.npz", dtype="float16")
    assert str(e.value) == f"{tmp_path / 'm.npz'}: dtype='float16' is not one circuits saves; choose float64 or float32"
    assert not (tmp_path / "m.npz").exists()


def gpt2_like(seed=0, d=16, heads=2, layers=2, n_vocab=11, n_ctx=12):
    """A circuits model in GPT-2's form (LayerNorms, biases, GELU MLPs, its own W_U), small."""
    from circuits import MLP, Head, Layer, Model, Vocab

    rng = np.random.default_rng(seed)
    r = lambda *s: rng.normal(0, 0.3, s)  # noqa: E731
    dh = d // heads
    blocks = [
        Layer(
            heads=[
                Head(W_Q=r(dh, d), W_K=r(dh, d), W_V=r(dh, d), W_O=r(d, dh), b_Q=r(dh), b_K=r(dh), b_V=r(dh))
                for _ in range(heads)
            ],
            b_O=r(d),
            mlp=MLP(r(4 * d, d), r(d, 4 * d), b_in=r(4 * d), b_out=r(d), act="gelu_tanh"),
            ln_attn=LayerNorm(1 + r(d), r(d)),
            ln_mlp=LayerNorm(1 + r(d), r(d)),
        )
        for _ in range(layers)
    ]
    return Model(
        Vocab.numbered(n_vocab),
        r(d, n_vocab),
        r(d, n_ctx),
        layers=blocks,
        W_U=r(n_vocab, d),
        ln_final=LayerNorm(1 + r(d), r(d)),
        qk_multiplier="1/sqrt(d_head)",
        name="small gpt2",
    )


@pytest.mark.skipif(not (HAS["torch"] and HAS["transformers"]), reason="needs torch and transformers (the [hf] extra)")
def test_to_hf_save_pretrained_round_trips_exactly(tmp_path):
    from circuits.io.hf import from_hf, to_hf

    model = gpt2_like()
    to_hf(model).save_pretrained(tmp_path / "hf")
    with pytest.warns(CircuitWarning, match="tokens are named t0, t1"):  # saved without a tokenizer
        back = from_hf(tmp_path / "hf")
    for key, value in to_tl_state_dict(model).items():
        np.testing.assert_array_equal(to_tl_state_dict(back)[key], value, err_msg=key)
    ids = np.random.default_rng(1).integers(0, 11, (2, 12))
    np.testing.assert_array_equal(back.run_ids(ids).logits, model.run_ids(ids).logits)


@pytest.mark.skipif(
    importlib.util.find_spec("transformer_lens") is None or not HAS["transformers"],
    reason="needs transformer-lens and the [hf] extra",
)
def test_the_transformer_lens_recipe_gives_circuits_logits_and_patterns(tmp_path):
    import importlib.util as iu

    import torch
    from helpers import ROOT

    spec = iu.spec_from_file_location("transformer_lens_bridge", ROOT / "examples" / "transformer_lens_bridge.py")
    recipe = iu.module_from_spec(spec)
    spec.loader.exec_module(recipe)
    model = gpt2_like()
    tl = recipe.bridge(model, tmp_path / "tl")
    ids = np.random.default_rng(1).integers(0, 11, (2, 12))
    with torch.no_grad():
        logits, cache = tl.run_with_cache(torch.from_numpy(ids))
    trace = model.run_ids(ids)
    np.testing.assert_allclose(logits.numpy(), trace.logits, rtol=0, atol=1e-12)
    for l in range(model.n_layers):
        np.testing.assert_allclose(cache[f"blocks.{l}.attn.hook_pattern"].numpy(), trace.layers[l].pattern, atol=1e-12)
    with pytest.raises(CircuitError, match="is not empty; give a new folder"):  # nothing written over
        recipe.bridge(model, tmp_path / "tl")
