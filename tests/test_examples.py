"""The seed examples on the other architecture: one line naming what the example needs, not an AttributeError."""

import pytest

pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

from test_hf import example, gpt2, neo  # noqa: E402


@pytest.mark.parametrize(
    "script, build, holds, needs",
    [
        (
            "seed_000_gpt2",
            lambda: neo(),
            "gpt_neo",
            "this example needs a GPT-2 model (its c_attn / c_proj layout): try examples/seed_001_gpt_neo.py",
        ),
        (
            "seed_001_gpt_neo",
            lambda: gpt2(),
            "gpt2",
            "this example needs a GPT-Neo model (its q_proj / k_proj / v_proj layout): try examples/seed_000_gpt2.py",
        ),
    ],
    ids=["gpt2 example on gpt-neo", "gpt-neo example on gpt2"],
)
def test_an_example_on_the_other_architecture_says_what_it_needs(tmp_path, capsys, script, build, holds, needs):
    build().save_pretrained(tmp_path)
    transformers.utils.logging.disable_progress_bar()  # its bars on stderr are not the example's output
    capsys.readouterr()
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    assert example(script).main([str(tmp_path)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "Traceback" not in err
    assert err.strip() == f"{script}.py: {tmp_path} holds a {holds} model; {needs}"
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before
    transformers.utils.logging.enable_progress_bar()


# --- a model saved without its tokenizer -------------------------------------------------------------
@pytest.fixture
def no_tokenizer(tmp_path):
    """A GPT-2 directory with the model only: transformers 5 then returns a one-token tokenizer."""
    gpt2().save_pretrained(tmp_path)
    return tmp_path


def test_from_hf_without_a_tokenizer_names_tokens_t0_t1_and_says_so(no_tokenizer):
    from circuits import CircuitWarning
    from circuits.io.hf import from_hf

    with pytest.warns(
        CircuitWarning,
        match=r"names 1 of the model's 100 token ids, so it is not this model's: "
        r"tokens are named t0, t1, … instead",
    ):
        model = from_hf(no_tokenizer)
    assert model.vocab.tokens[:3] == ("t0", "t1", "t2") and model.vocab.bos is None


def test_from_hf_refuses_a_tokenizer_that_does_not_cover_the_model(no_tokenizer):
    from circuits import CircuitError
    from circuits.io.hf import from_hf, load_hf

    one_token = transformers.AutoTokenizer.from_pretrained(str(no_tokenizer), local_files_only=True)
    with pytest.raises(
        CircuitError,
        match=r"^the tokenizer given names 1 of the model's 100 token ids: pass the "
        r"model's own tokenizer, or none \(tokens t0, t1, …\)$",
    ):
        from_hf(load_hf(no_tokenizer), tokenizer=one_token)


def test_the_gpt2_example_without_a_tokenizer_is_one_line(no_tokenizer, capsys):
    transformers.utils.logging.disable_progress_bar()
    capsys.readouterr()
    assert example("seed_000_gpt2").main([str(no_tokenizer)]) == 2
    out, err = capsys.readouterr()
    transformers.utils.logging.enable_progress_bar()
    assert out == "" and err.strip() == (
        f"seed_000_gpt2.py: the tokenizer at {str(no_tokenizer)!r} names 1 of the "
        "model's 100 token ids: save the model's own tokenizer beside it"
    )


def test_scan_without_a_tokenizer_warns_once_and_scans(no_tokenizer, capsys):
    from circuits.cli import main

    assert main(["scan", "--hf", str(no_tokenizer), "--seq-len", "4"]) == 0
    out, err = capsys.readouterr()
    assert "Traceback" not in err and "previous" in out
    assert err.strip().splitlines() == [
        f"circuits: warning: the tokenizer at {str(no_tokenizer)!r} names 1 of the "
        "model's 100 token ids, so it is not this model's: tokens are named t0, t1, … "
        "instead"
    ]


# --- GPT-Neo's float32 q·k ---------------------------------------------------------------------------
@pytest.mark.parametrize("std", [0.02, 0.1])
def test_gpt_neo_parity_in_each_q_k_mode(std):
    """Exact float64 drifts from Hugging Face as q·k grows (HF takes it in float32); qk_dtype="float32" does not."""
    import numpy as np
    import torch
    from test_hf import random_ids

    from circuits.io.hf import from_hf

    hf_model = neo(V=100, d=64, n_head=4, kinds=("global", "local"), window=4, initializer_range=std)
    ids, valid = random_ids(100, 3, 24)
    with torch.no_grad():
        out = hf_model(ids, attention_mask=valid.long(), output_attentions=True)
    v = valid.numpy()
    gaps = {}
    for mode in ("float64", "float32"):
        trace = from_hf(hf_model, qk_dtype=mode).run_ids(ids.numpy(), v)
        gaps[mode] = max(
            np.abs(t.pattern - a.numpy()).transpose(0, 2, 1, 3)[v].max() for t, a in zip(trace.layers, out.attentions)
        )
    assert gaps["float32"] <= 1e-9, gaps
    if std == 0.1:
        assert gaps["float64"] > 1e-7, gaps  # the honest default is not HF's numbers at this scale


def test_the_q_k_mode_survives_a_save_and_load(tmp_path):
    from circuits import CircuitError, Model
    from circuits.io.export import load, save
    from circuits.io.hf import from_hf

    model = from_hf(neo(V=30, d=16, n_head=2), qk_dtype="float32")
    save(model, tmp_path / "neo.npz")
    assert load(tmp_path / "neo.npz").qk_dtype == "float32"
    with pytest.raises(CircuitError, match=r"^qk_dtype = 'float16'; choose one of 'float64', 'float32'$"):
        Model(model.vocab, model.W_E, qk_dtype="float16")
