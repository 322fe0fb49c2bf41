"""Export: state dicts (TransformerLens and Hugging Face names), .npz and .safetensors files, and their errors."""

import subprocess
import sys

import numpy as np
import pytest
import sympy

from circuits import MLP, CircuitError, Head, Layer, LayerNorm, Model, Vocab, blank, names
from circuits.io.export import (
    CONFIG_KEY,
    from_hf_state_dict,
    from_tl_state_dict,
    load,
    model_config,
    save,
    to_hf_state_dict,
    to_tl_state_dict,
)
from circuits.model.basis import Basis


def gpt_like(
    seed=0,
    V=30,
    d=16,
    n_heads=4,
    n_layers=2,
    n_ctx=12,
    scale="1/sqrt(d_head)",
    windows=(None, None),
    act="gelu_tanh",
    qkv_bias=True,
) -> Model:
    """A GPT-shaped model with random weights: LayerNorms, MLPs, equal heads; windows per layer."""
    rng = np.random.default_rng(seed)
    w = lambda *shape: rng.normal(0, 0.3, shape)  # noqa: E731
    dh = d // n_heads
    ln = lambda: LayerNorm(w=1 + w(d), b=w(d), eps=1e-5)  # noqa: E731
    bias = (lambda: w(dh)) if qkv_bias else (lambda: None)  # noqa: E731
    layers = [
        Layer(
            heads=[
                Head(
                    W_Q=w(dh, d),
                    W_K=w(dh, d),
                    W_V=w(dh, d),
                    W_O=w(d, dh),
                    b_Q=bias(),
                    b_K=bias(),
                    b_V=bias(),
                    window=windows[l],
                )
                for _ in range(n_heads)
            ],
            b_O=w(d),
            mlp=MLP(W_in=w(3 * d, d), W_out=w(d, 3 * d), b_in=w(3 * d), b_out=w(d), act=act),
            ln_attn=ln(),
            ln_mlp=ln(),
        )
        for l in range(n_layers)
    ]
    return Model(
        Vocab.numbered(V),
        w(d, V),
        w(d, n_ctx),
        layers=layers,
        W_U=w(V, d),
        ln_final=ln(),
        qk_multiplier=scale,
        name=f"gpt-like {seed}",
    )


def hand_built() -> Model:
    """Everything a hand-built model may have: named residual, BOS, fixed patterns, heads of different
    d_head, a head writing nothing, symbols, a scale override, a window, no LayerNorm, relu and exact GELU MLPs."""
    a = sympy.Symbol("a")
    vocab = Vocab.chars_of("abcde", bos="^")
    resid = Basis(names("tok", 6) + names("pos", 5) + ["scratch"])
    W_E, W_pos = blank(resid, 6), blank(resid, 5)
    for i in range(6):
        W_E[f"tok:{i}", i] = 1
    for i in range(5):
        W_pos[f"pos:{i}", i] = 1
    W_Q, W_K = blank(1, resid), blank(1, resid)
    W_Q[0, "tok:1"], W_K[0, "tok:2"] = a, 3
    W_O = blank(resid, 1)
    W_O["scratch", 0] = 1
    rng = np.random.default_rng(1)
    layers = [
        [
            Head(W_Q=W_Q, W_K=W_K, W_V=W_Q, W_O=W_O, scale=0.5),
            Head(W_Q=rng.normal(size=(3, 12)), W_K=rng.normal(size=(3, 12)), W_V=rng.normal(size=(2, 12)), window=2),
            Head(W_V=np.eye(12)[:1], pattern="previous"),
        ],
        Layer(
            heads=[Head(W_V=np.eye(12)[:2], W_O=rng.normal(size=(12, 2)), pattern="first")],
            b_O=rng.normal(size=12),
            mlp=MLP(W_in=rng.normal(size=(5, 12)), W_out=rng.normal(size=(12, 5)), act="relu"),
        ),
        Layer(
            mlp=MLP(W_in=rng.normal(size=(4, 12)), W_out=rng.normal(size=(12, 4)), act="gelu"),
            ln_mlp=LayerNorm(eps=1e-3),
        ),
    ]
    return Model(
        vocab,
        W_E,
        W_pos,
        layers=layers,
        W_U=rng.normal(size=(6, 12)),
        b_U=rng.normal(size=6),
        residual=resid,
        qk_multiplier=2 * a,
        params={"a": 1.5},
        name="hand-built",
    )


MODELS = {
    "gpt2-like": gpt_like,
    "neo-like": lambda: gpt_like(1, scale=1.0, windows=(None, 3), qkv_bias=False),
    "hand-built": hand_built,
}


def same_behaviour(m1: Model, m2: Model, ids: np.ndarray) -> None:
    t1, t2 = m1.run_ids(ids), m2.run_ids(ids)
    np.testing.assert_array_equal(t1.logits, t2.logits)
    np.testing.assert_array_equal(t1.resid_final, t2.resid_final)
    for l1, l2 in zip(t1.layers, t2.layers):
        if l1.pattern is not None:
            np.testing.assert_array_equal(l1.pattern, l2.pattern)


def ids_for(model: Model, T: int = 5, batch: int = 3) -> np.ndarray:  # [batch, T]
    return np.random.default_rng(0).integers(0, len(model.vocab), (batch, T))


@pytest.mark.parametrize("kind", MODELS)
def test_npz_round_trip_is_exact(kind, tmp_path):
    model = MODELS[kind]()
    loaded = load(save(model, tmp_path / "m.npz"))
    assert model_config(loaded) == model_config(model)
    assert loaded.vocab == model.vocab and loaded.residual == model.residual and loaded.name == model.name
    same_behaviour(model, loaded, ids_for(model))


@pytest.mark.parametrize("kind", MODELS)
def test_safetensors_round_trip_is_exact(kind, tmp_path):
    pytest.importorskip("safetensors")
    model = MODELS[kind]()
    loaded = load(save(model, tmp_path / "m.safetensors"))
    assert model_config(loaded) == model_config(model)
    same_behaviour(model, loaded, ids_for(model))


def test_tl_state_dict_uses_transformerlens_names_and_shapes():
    model = gpt_like(V=30, d=16, n_heads=4, n_ctx=12)
    sd = to_tl_state_dict(model)
    shapes = {k: v.shape for k, v in sd.items()}
    assert shapes["embed.W_E"] == (30, 16) and shapes["pos_embed.W_pos"] == (12, 16)
    assert shapes["blocks.0.attn.W_Q"] == (4, 16, 4) and shapes["blocks.0.attn.W_O"] == (4, 4, 16)
    assert shapes["blocks.1.attn.b_Q"] == (4, 4) and shapes["blocks.1.attn.b_O"] == (16,)
    assert shapes["blocks.0.mlp.W_in"] == (16, 48) and shapes["blocks.0.mlp.W_out"] == (48, 16)
    assert shapes["unembed.W_U"] == (16, 30) and {"ln_final.w", "blocks.1.ln2.b"} <= set(sd)
    h = model.head(1, 2)
    np.testing.assert_array_equal(sd["blocks.1.attn.W_Q"][2], h.W_Q.T)  # row-vector convention: x @ W_Q
    np.testing.assert_array_equal(sd["blocks.1.attn.W_O"][2], h.W_O.T)
    same_behaviour(model, from_tl_state_dict(sd, model_config(model)), ids_for(model))


def test_transformerlens_buffers_are_ignored():
    model = gpt_like()
    sd = to_tl_state_dict(model) | {"blocks.0.attn.IGNORE": np.array(-1e5), "blocks.0.attn.mask": np.ones((12, 12))}
    same_behaviour(model, from_tl_state_dict(sd, model_config(model)), ids_for(model))


@pytest.mark.parametrize("arch, kind", [("gpt2", "gpt2-like"), ("gpt_neo", "neo-like")])
def test_hf_state_dict_round_trip(arch, kind):
    model = MODELS[kind]()
    sd, config = to_hf_state_dict(model)
    assert config["model_type"] == arch
    back = from_hf_state_dict(sd, config)
    np.testing.assert_allclose(back.run_ids(ids_for(model)).logits, model.run_ids(ids_for(model)).logits, atol=1e-12)
    if arch == "gpt2":
        assert sd["transformer.h.0.attn.c_attn.weight"].shape == (16, 48)  # Conv1D: [in, out]
    else:
        assert config["attention_types"] == [[["global", "local"], 1]] and config["window_size"] == 3
        assert sd["transformer.h.1.attn.attention.q_proj.weight"].shape == (16, 16)


@pytest.mark.parametrize(
    "make, message",
    [
        (hand_built, "this model lacks ln_final"),
        (lambda: gpt_like(windows=(2, 3), scale=1.0, qkv_bias=False), r"local layers use windows \[2, 3\]"),
        (lambda: gpt_like(windows=(None, 3)), "fit neither GPT-2"),
        (lambda: gpt_like(scale=0.3), "fit neither GPT-2"),
        (lambda: gpt_like(scale=1.0), "head 0.0 has a query, key or value bias, which GPT-Neo does not have"),
    ],
)
def test_hf_export_refuses_what_hf_cannot_hold(make, message):
    with pytest.raises(CircuitError, match=message):
        to_hf_state_dict(make())


def test_hf_export_names_the_arch_mismatch():
    with pytest.raises(CircuitError, match="layer 1 has a local window 3; GPT-2 has none"):
        to_hf_state_dict(gpt_like(windows=(None, 3)), arch="gpt2")


def test_hf_state_dict_errors_name_the_key():
    sd, config = to_hf_state_dict(gpt_like())
    missing = {k: v for k, v in sd.items() if k != "transformer.h.1.mlp.c_fc.bias"}
    with pytest.raises(CircuitError, match="ckpt: key 'h.1.mlp.c_fc.bias' is missing"):
        from_hf_state_dict(missing, config, source="ckpt")
    wrong = sd | {"transformer.h.0.attn.c_attn.weight": np.zeros((16, 47))}
    with pytest.raises(CircuitError, match=r"key 'h.0.attn.c_attn.weight' has shape \(16, 47\) but needs \(16, 48\)"):
        from_hf_state_dict(wrong, config)
    with pytest.raises(CircuitError, match="unexpected key 'h.0.attn.rotary'"):
        from_hf_state_dict(sd | {"transformer.h.0.attn.rotary": np.zeros(3)}, config)
    with pytest.raises(CircuitError, match="model_type 'llama' is not supported"):
        from_hf_state_dict(sd, config | {"model_type": "llama"})
    with pytest.raises(CircuitError, match="activation 'swish' is not supported"):
        from_hf_state_dict(sd, config | {"activation_function": "swish"})


# --- damaged and foreign files ------------------------------------------------------------------
@pytest.fixture
def npz(tmp_path):
    return save(gpt_like(), tmp_path / "model.npz")


def rewrite(path, drop=(), add=None):
    """The archive at `path` with some keys dropped or added (np.savez, no pickle)."""
    with np.load(path, allow_pickle=False) as f:
        arrays = {k: f[k] for k in f.files if k not in drop}
    np.savez(path, **arrays, **(add or {}))
    return path


def test_truncated_npz_names_the_file(npz):
    data = npz.read_bytes()
    npz.write_bytes(data[: len(data) // 2])
    with pytest.raises(CircuitError, match=r"model.npz: not a readable .npz file") as e:
        load(npz)
    assert "\n" not in str(e.value)


def test_missing_key_names_file_and_key(npz):
    rewrite(npz, drop=["blocks.1.attn.W_K"])
    with pytest.raises(CircuitError, match=r"model.npz: key 'blocks.1.attn.W_K' is missing"):
        load(npz)


def test_wrong_shape_names_file_and_key(npz):
    rewrite(npz, drop=["blocks.0.mlp.b_in"], add={"blocks.0.mlp.b_in": np.zeros(7)})
    with pytest.raises(CircuitError, match=r"model.npz: key 'blocks.0.mlp.b_in' has shape \(7,\) but needs \(48,\)"):
        load(npz)


def test_unexpected_key_names_file_and_key(npz):
    rewrite(npz, add={"blocks.9.attn.W_Q": np.zeros(3)})
    with pytest.raises(CircuitError, match=r"model.npz: unexpected key 'blocks.9.attn.W_Q'"):
        load(npz)


def test_missing_config_is_explained(npz):
    rewrite(npz, drop=[CONFIG_KEY])
    with pytest.raises(CircuitError, match="'__circuits_config__' is missing; this .npz was not written by circuits"):
        load(npz)


def test_pickled_arrays_are_refused(npz):
    rewrite(npz, add={"notes": np.array([{"evil": True}], dtype=object)})  # np.savez pickles object arrays
    with pytest.raises(CircuitError, match=r"model.npz: key 'notes' holds pickled objects; refusing to load it"):
        load(npz)


def test_pickled_npy_is_refused(tmp_path):
    path = tmp_path / "model.npz"
    with open(path, "wb") as f:
        np.save(f, np.array([{"evil": True}], dtype=object), allow_pickle=True)
    with pytest.raises(CircuitError, match="model.npz: refusing to load pickled data"):
        load(path)


def test_not_a_model_file(tmp_path):
    (tmp_path / "notes.npz").write_text("hello")
    with pytest.raises(CircuitError, match="notes.npz: not a readable .npz file"):
        load(tmp_path / "notes.npz")
    (tmp_path / "pickle.npz").write_bytes(b"\x80\x04\x95")  # how every pickle (protocol ≥ 2) begins
    with pytest.raises(CircuitError, match="pickle.npz: refusing to load pickled data"):
        load(tmp_path / "pickle.npz")
    np.save(tmp_path / "one.npy", np.zeros(3))
    (tmp_path / "one.npy").rename(tmp_path / "one.npz")
    with pytest.raises(CircuitError, match="one.npz: holds a single array"):
        load(tmp_path / "one.npz")
    with pytest.raises(CircuitError, match="missing.npz: no such file"):
        load(tmp_path / "missing.npz")
    (tmp_path / "m.pt").write_text("x")
    with pytest.raises(CircuitError, match="m.pt: choose a file ending in .npz or .safetensors"):
        load(tmp_path / "m.pt")


def test_damaged_config_json(npz):
    rewrite(npz, drop=[CONFIG_KEY], add={CONFIG_KEY: np.frombuffer(b'{"format": ', dtype=np.uint8)})
    with pytest.raises(CircuitError, match="model.npz: the circuits config is not valid JSON"):
        load(npz)


def test_truncated_safetensors_names_the_file(tmp_path):
    pytest.importorskip("safetensors")
    path = save(gpt_like(), tmp_path / "model.safetensors")
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 100])
    with pytest.raises(CircuitError, match="model.safetensors: not a readable .safetensors file"):
        load(path)


def test_functions_as_patterns_cannot_be_saved(tmp_path):
    model = Model(Vocab.numbered(3), np.eye(3), layers=[[Head(W_V=np.eye(3), pattern=lambda T: np.eye(T))]])
    with pytest.raises(CircuitError, match="head 0.0 has a fixed pattern given as a function"):
        save(model, tmp_path / "m.npz")


def test_npz_needs_only_numpy(tmp_path):
    """The core (export, scan) never imports torch or safetensors."""
    code = (
        "import sys, numpy as np\n"
        "from circuits import Model, Vocab, Head\n"
        "from circuits.io.export import save, load\n"
        "from circuits.analysis.scan import scan\n"
        "m = Model(Vocab.numbered(4), np.eye(4), layers=[[Head(W_V=np.eye(4), pattern='previous')]])\n"
        f"load(save(m, {str(tmp_path / 'm.npz')!r}))\n"
        "scan(m, seq_len=2)\n"
        "bad = [k for k in ('torch', 'transformers', 'safetensors') if k in sys.modules]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
