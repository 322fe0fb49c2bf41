"""Hugging Face import: parity with GPT-2 and GPT-Neo (random init, no downloads), round trips, the seed examples."""

import importlib.util
import json
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from helpers import cli_scan  # noqa: E402

from circuits import CircuitError  # noqa: E402
from circuits.analysis.scan import scan  # noqa: E402
from circuits.io.export import load, save  # noqa: E402
from circuits.io.hf import from_hf, load_hf, repeated_random_tokens, to_hf, token_strings  # noqa: E402

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
GPT2_TOL, NEO_TOL = 1e-10, 1e-6


def gpt2(seed=0, V=100, d=32, n_head=4, n_layer=2, n_ctx=64, **config):
    torch.manual_seed(seed)
    config = {"bos_token_id": 0, "eos_token_id": 0} | config
    cfg = transformers.GPT2Config(
        vocab_size=V, n_positions=n_ctx, n_embd=d, n_layer=n_layer, n_head=n_head, attn_implementation="eager", **config
    )
    return transformers.GPT2LMHeadModel(cfg).eval().double()


def neo(seed=0, V=100, d=32, n_head=4, kinds=("global", "local"), window=4, n_ctx=64, **config):
    torch.manual_seed(seed)
    cfg = transformers.GPTNeoConfig(
        vocab_size=V,
        max_position_embeddings=n_ctx,
        hidden_size=d,
        num_layers=len(kinds),
        num_heads=n_head,
        attention_types=[[list(kinds), 1]],
        window_size=window,
        bos_token_id=0,
        eos_token_id=0,
        **config,
    )
    return transformers.GPTNeoForCausalLM(cfg).eval().double()


def random_ids(V, batch, T, seed=0):  # -> [batch, T], and a right-padded valid mask
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, V, (batch, T), generator=g)
    valid = torch.ones(batch, T, dtype=torch.bool)
    for b in range(1, batch):
        valid[b, max(1, T - 3 * b) :] = False  # later rows are shorter: padding on the right
    return ids, valid


def max_errors(hf_model, ids, valid):
    """Largest |HF − circuits| over valid query rows: (attention patterns, logits)."""
    model = from_hf(hf_model)
    with torch.no_grad():
        out = hf_model(ids, attention_mask=valid.long(), output_attentions=True)
    trace = model.run_ids(ids.numpy(), valid.numpy())
    v = valid.numpy()
    pattern = max(
        np.abs(t.pattern - a.numpy()).transpose(0, 2, 1, 3)[v].max()  # [b, q, h, k] at valid q
        for t, a in zip(trace.layers, out.attentions)
    )
    logits = np.abs(trace.logits - out.logits.numpy())[v].max()
    return pattern, logits, np.abs(out.logits.numpy()[v]).max()


SHAPES = [(1, 1), (1, 17), (3, 9), (2, 40)]  # (batch, seq); batch > 1 pads later rows on the right


@pytest.mark.parametrize(
    "size",
    [
        dict(V=100, d=32, n_head=4, n_layer=2),
        dict(V=257, d=48, n_head=3, n_layer=3),
        dict(V=50, d=64, n_head=8, n_layer=1),
    ],
    ids=["d32", "d48", "d64"],
)
@pytest.mark.parametrize("batch, T", SHAPES)
def test_gpt2_parity(size, batch, T):
    hf_model = gpt2(**size)
    pattern, logits, _ = max_errors(hf_model, *random_ids(size["V"], batch, T))
    assert pattern < GPT2_TOL and logits < GPT2_TOL


@pytest.mark.parametrize(
    "config",
    [
        dict(activation_function="relu"),
        dict(activation_function="gelu"),
        dict(scale_attn_by_inverse_layer_idx=True),
        dict(n_inner=20, layer_norm_epsilon=1e-3),
        dict(tie_word_embeddings=False),
        dict(initializer_range=0.3),
    ],
    ids=["relu", "gelu", "inverse-layer-scale", "n_inner-eps", "untied", "sharp"],
)
def test_gpt2_parity_variants(config):
    pattern, logits, _ = max_errors(gpt2(seed=1, n_layer=3, **config), *random_ids(100, 2, 20))
    assert pattern < GPT2_TOL and logits < GPT2_TOL


@pytest.mark.parametrize(
    "kinds, window",
    [(("global", "local"), 4), (("local", "local", "global"), 1), (("local", "global", "local", "global"), 7)],
)
@pytest.mark.parametrize("batch, T", SHAPES)
def test_gpt_neo_parity_with_local_layers(kinds, window, batch, T):
    hf_model = neo(kinds=kinds, window=window)
    pattern, logits, _ = max_errors(hf_model, *random_ids(100, batch, T))
    assert pattern < NEO_TOL and logits < NEO_TOL


def test_gpt_neo_parity_with_sharp_attention():
    """Weights 10× GPT-Neo's init make patterns nearly one-hot; HF's float32 q·k still agrees to 1e-6 (logits:
    relative)."""
    hf_model = neo(seed=3, kinds=("global", "local", "global", "local"), window=5, initializer_range=0.2)
    pattern, logits, scale = max_errors(hf_model, *random_ids(100, 3, 30))
    assert pattern < NEO_TOL and logits < NEO_TOL * scale


def _attn_in_model_dtype(self, query, key, value, attention_mask=None, head_mask=None):
    """GPTNeoSelfAttention._attn of transformers 5 without its `.to(torch.float32)` on query and key."""
    attn_weights = torch.matmul(query, key.transpose(-1, -2))  # [b, h, q, k]
    q_len, k_len = query.size(-2), key.size(-2)
    causal_mask = self.bias[:, :, k_len - q_len : k_len, :k_len]  # local layers: the windowed band
    mask_value = torch.tensor(torch.finfo(attn_weights.dtype).min, dtype=attn_weights.dtype)
    attn_weights = torch.where(causal_mask, attn_weights, mask_value)
    if attention_mask is not None:
        attn_weights = attn_weights + attention_mask
    attn_weights = torch.nn.functional.softmax(attn_weights, dim=-1)
    return torch.matmul(attn_weights, value), attn_weights


def test_gpt_neo_conversion_is_exact_without_hfs_float32_upcast(monkeypatch):
    """The 1e-6 is HF's float32 q·k alone: computed in float64, GPT-Neo matches as closely as GPT-2 does."""
    from transformers.models.gpt_neo import modeling_gpt_neo

    monkeypatch.setattr(modeling_gpt_neo.GPTNeoSelfAttention, "_attn", _attn_in_model_dtype)
    hf_model = neo(seed=3, kinds=("global", "local", "global", "local"), window=5, initializer_range=0.2)
    pattern, logits, _ = max_errors(hf_model, *random_ids(100, 3, 30))
    assert pattern < GPT2_TOL and logits < GPT2_TOL


def test_local_layers_become_windowed_heads():
    model = from_hf(neo(kinds=("global", "local"), window=3))
    assert [h.window for h in model.heads()] == [None] * 4 + [3] * 4
    assert {h.scale for h in model.heads()} == {1.0}
    assert {h.scale for h in from_hf(gpt2()).heads()} == {1 / np.sqrt(8)}


# --- round trips --------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "make",
    [gpt2, lambda: neo(kinds=("global", "local", "local"), window=2), lambda: gpt2(tie_word_embeddings=False)],
    ids=["gpt2", "gpt-neo", "gpt2-untied"],
)
def test_hf_to_circuits_to_hf_is_exact(make):
    hf_model = make()
    back = to_hf(from_hf(hf_model))
    original, again = hf_model.state_dict(), back.state_dict()
    for key, value in original.items():
        assert torch.equal(again[key], value), key


def test_export_round_trip_of_a_converted_model(tmp_path):
    hf_model = neo(kinds=("global", "local"), window=3)
    model = from_hf(hf_model)
    ids = random_ids(100, 2, 10)[0].numpy()
    for suffix in (".npz", ".safetensors"):
        loaded = load(save(model, tmp_path / f"neo{suffix}"))
        np.testing.assert_array_equal(loaded.run_ids(ids).logits, model.run_ids(ids).logits)
        assert [h.window for h in loaded.heads()] == [h.window for h in model.heads()]


def test_to_hf_refuses_non_gpt_models():
    from circuits import Head, Model, Vocab

    with pytest.raises(CircuitError, match="no position embedding"):
        to_hf(Model(Vocab.numbered(3), np.eye(3), layers=[[Head(W_V=np.eye(3), pattern="first")]]))


# --- loading from disk --------------------------------------------------------------------------
def byte_chars() -> list[str]:
    """GPT-2's byte-level alphabet in id order: ids 0..255 of the real GPT-2 vocabulary spell these."""
    bs = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1), *range(ord("®"), ord("ÿ") + 1)]
    cs, n = bs[:], 0
    for b in range(256):
        if b not in bs:
            bs.append(b)
            cs.append(256 + n)
            n += 1
    return [chr(c) for c in cs]


def byte_tokenizer():
    """A GPT-2 tokenizer with no merges: one token per byte, then <|endoftext|> (id 256), as in GPT-2."""
    vocab = {c: i for i, c in enumerate(byte_chars())} | {"<|endoftext|>": 256}
    return transformers.GPT2Tokenizer(vocab=vocab, merges=[])


@pytest.fixture(scope="module")
def gpt2_dir(tmp_path_factory):
    """A random GPT-2 saved as a user would save the real one: model and tokenizer in one directory."""
    path = tmp_path_factory.mktemp("gpt2")
    gpt2(V=257, d=32, n_head=4, n_layer=3, n_ctx=64, bos_token_id=256, eos_token_id=256).save_pretrained(path)
    byte_tokenizer().save_pretrained(path)
    return path


def test_from_hf_reads_a_local_directory_and_its_tokenizer(gpt2_dir):
    model = from_hf(gpt2_dir)
    assert model.vocab.tokens[:3] == ("!", '"', "#") and model.vocab.bos == "<|endoftext|>"
    assert model.vocab.id("<|endoftext|>") == 256 and model.n_ctx == 64
    hf_model = load_hf(gpt2_dir).double()
    ids = torch.tensor([[256, 51, 71, 68]])
    with torch.no_grad():
        expected = hf_model(ids).logits.numpy()
    np.testing.assert_allclose(model.run_ids(ids.numpy()).logits, expected, atol=GPT2_TOL)


def test_missing_local_model_is_one_line(tmp_path):
    with pytest.raises(CircuitError, match="no local model at .*circuits never downloads") as e:
        load_hf(tmp_path / "nothing-here")
    assert "\n" not in str(e.value)


def test_missing_extra_says_how_to_install(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "transformers", None)
    with pytest.raises(CircuitError, match=r'pip install "circuits-workbench\[hf\]"'):
        from_hf("anything")


# --- the seed exercises -------------------------------------------------------------------------
def example(name):
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


SEED_000_TOKENS = list('NY"D"O/CcA]l(Yao=^cONY"D"')


def test_repeated_random_tokens_are_the_seeds():
    ids = repeated_random_tokens(seed=2025, seq_len=20, high=100, bos_id=256)
    assert ids.shape == (1, 41) and ids[0, 0] == 256
    np.testing.assert_array_equal(ids[0, 1:21], ids[0, 21:])
    assert token_strings(byte_tokenizer(), ids)[-25:] == SEED_000_TOKENS  # the seed prints the last 25


def test_seed_000_exercise_1_on_random_gpt2(gpt2_dir):
    seed000 = example("seed_000_gpt2")
    hf_model, model = load_hf(gpt2_dir).double(), from_hf(gpt2_dir)
    ids = np.asarray(byte_tokenizer()("<|endoftext|>" + seed000.SENTENCE)["input_ids"])[None]
    with torch.no_grad():
        attentions = hf_model(torch.from_numpy(ids), output_attentions=True).attentions
    for layer in (0, model.n_layers - 1):
        np.testing.assert_allclose(
            seed000.layer_patterns(model, ids, layer), attentions[layer][0].numpy(), atol=GPT2_TOL
        )

    ids, trace, halves = seed000.repeated_tokens(model, bos_id=256)
    with torch.no_grad():
        logprobs = torch.log_softmax(hf_model(torch.from_numpy(ids)).logits, dim=-1)[0]  # [T, V]
    expected = logprobs[:-1].gather(-1, torch.from_numpy(ids[0, 1:, None]))[:, 0].numpy()  # [T − 1]
    np.testing.assert_allclose(halves.series, expected, atol=GPT2_TOL)
    assert halves.series.shape == (40,)
    assert halves.first_half == pytest.approx(expected[:20].mean())
    assert halves.second_half == pytest.approx(expected[20:].mean())


def test_seed_000_exercise_2_by_hand_on_random_gpt2(gpt2_dir):
    seed000 = example("seed_000_gpt2")
    hf_model, model = load_hf(gpt2_dir).double(), from_hf(gpt2_dir)
    ids = np.asarray(byte_tokenizer()("<|endoftext|>" + seed000.SENTENCE)["input_ids"])[None]
    for layer in (0, 2):
        errors = seed000.attention_by_hand(hf_model, model, ids, layer)
        assert max(errors.values()) < GPT2_TOL, errors


def test_seed_000_script_runs(gpt2_dir, capsys):
    assert example("seed_000_gpt2").main([str(gpt2_dir), "--layer", "1"]) == 0
    out = capsys.readouterr().out
    assert "Performance on the first half:" in out and "Performance on the second half:" in out
    assert "exercise 2, A vs HF attentions" in out


@pytest.mark.parametrize("layer, n", [(0, 5), (1, 9)], ids=["global", "local"])
def test_seed_001_rebuild_on_random_gpt_neo(layer, n):
    seed001 = example("seed_001_gpt_neo")
    hf_model = neo(V=60, d=48, n_head=4, kinds=("global", "local"), window=3)
    model = from_hf(hf_model)
    x = seed001.seed_inputs(model.d_model, n=n)
    errors = seed001.rebuild(hf_model, model, x, layer)
    assert errors["W_QK vs seed headQK"] < 1e-12
    assert errors["pattern vs HF"] < NEO_TOL and errors["output vs HF (relative)"] < NEO_TOL
    patterns, _ = seed001.self_attention(model, x, layer)
    if layer == 1:
        assert patterns[:, 5, :3].max() == 0.0  # window 3: query 5 sees keys 3, 4, 5 only


def test_seed_001_script_runs(tmp_path, capsys):
    neo(kinds=("global", "local"), window=3).float().save_pretrained(tmp_path)
    assert example("seed_001_gpt_neo").main([str(tmp_path)]) == 0
    assert "pattern vs HF" in capsys.readouterr().out


# --- head scan on converted models ----------------------------------------------------------------
def test_scan_finds_a_previous_token_head_planted_in_random_gpt2():
    """Make positions dominate the residual stream, then set one head's W_Q, W_K (inside c_attn) to look one back."""
    hf_model = gpt2(seed=5, V=100, d=64, n_head=2, n_layer=2, n_ctx=32)
    seq_len, layer, head = 10, 1, 1
    T, dh = 2 * seq_len + 1, 32
    block = hf_model.transformer.h[layer]
    with torch.no_grad():
        hf_model.transformer.wpe.weight.normal_(0.0, 1.0)
        X = block.ln_1(hf_model.transformer.wpe.weight[:T]).numpy()  # [T, d_model]
        M = np.linalg.pinv(X.T)  # [T, d_model]: M x_i = e_i
        strength = 30.0 * np.sqrt(dh)  # q·k of 30 after GPT-2's 1/sqrt(d_head)
        W_Q = np.pad(strength * np.eye(T, k=1) @ M, [(0, dh - T), (0, 0)])  # [d_head, d_model]: q_i = e_{i−1}
        W_K = np.pad(M, [(0, dh - T), (0, 0)])  # k_j = e_j
        d = hf_model.config.n_embd
        q, k = slice(head * dh, (head + 1) * dh), slice(d + head * dh, d + (head + 1) * dh)
        block.attn.c_attn.weight[:, q] = torch.from_numpy(W_Q.T)  # Conv1D: [in, out]
        block.attn.c_attn.weight[:, k] = torch.from_numpy(W_K.T)
        block.attn.c_attn.bias[q] = 0.0
        block.attn.c_attn.bias[k] = 0.0
    result = scan(from_hf(hf_model), seq_len=seq_len, behaviours="previous-token", bos_id=0)
    assert [s.name for s in result.found("previous-token")] == [f"head {layer}.{head}"]
    assert result.top("previous-token")[0].score > 0.9


def test_cli_scan_hf_directory(gpt2_dir, capsys):
    assert cli_scan(["--hf", str(gpt2_dir), "--seq-len", "10", "--batch", "2", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert set(data["behaviours"]) == {"previous-token", "duplicate-token", "induction", "first-token"}
    assert len(data["behaviours"]["induction"]) == 3 * 4 and data["inputs"] == {"batch": 2, "seq": 21}


def test_cli_scan_hf_name_not_in_cache_is_one_line(capsys, monkeypatch, tmp_path):
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert cli_scan(["--hf", "someone/not-a-cached-model"]) == 2
    err = capsys.readouterr().err
    assert "no local model at 'someone/not-a-cached-model'" in err and err.count("\n") == 1


FLOAT32_TOL = 1e-4  # the float32 path's stated tolerance on logits (README, "Real models"), GPT-2 at init


def test_the_float32_path_matches_hf_float32_and_float64_within_its_tolerance():
    """from_hf(dtype="float32") runs in float32 as HF's default model does: within FLOAT32_TOL of HF in either dtype."""
    hf64 = gpt2(seed=3, V=120, d=64, n_head=4, n_layer=3)
    hf32 = gpt2(seed=3, V=120, d=64, n_head=4, n_layer=3).float()
    ids, valid = random_ids(120, 3, 40, seed=4)
    model = from_hf(hf32, dtype="float32")
    trace = model.run_ids(ids.numpy(), valid.numpy(), keep=())
    assert trace.logits.dtype == np.float32 and all(layer.pattern is None for layer in trace.layers)
    v = valid.numpy()
    with torch.no_grad():
        want32 = hf32(ids, attention_mask=valid.long()).logits.numpy()
        want64 = hf64(ids, attention_mask=valid.long()).logits.numpy()
    for want in (want32, want64):
        err = np.abs(trace.logits.astype(np.float64) - want)[v].max()
        assert 0 < err < FLOAT32_TOL, err
