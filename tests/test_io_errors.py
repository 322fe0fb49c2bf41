"""Model files and Hugging Face directories that cannot be a model: one line naming the culprit, before any big read.

Each case goes through the real entry point (`circuits scan --npz FILE`, `circuits scan --hf DIR`,
`export.load`, `hf.from_hf`): exit 2, exactly one line on stderr naming the file, the key and its
value, no traceback, no numpy warning in front of it, and the input file left as it was.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile

import numpy as np
import pytest
from helpers import ROOT
from test_catalogue import circuits, one_line
from test_export import MODELS, gpt_like

from circuits import CircuitError, Head, Model, Vocab
from circuits.io import export, files, sizes
from circuits.io.export import CONFIG_KEY, load, model_config, save, tl_keys, to_tl_state_dict


def npy_header(shape: tuple, dtype: str = "<f8") -> bytes:
    """A version 1.0 .npy header declaring `shape`; whatever follows it is the data."""
    text = f"{{'descr': '{dtype}', 'fortran_order': False, 'shape': {shape!r}, }}"
    text += " " * (63 - (len(text) + 10) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + len(text).to_bytes(2, "little") + text.encode("latin1")


@pytest.fixture
def saved(tmp_path):
    model = Model(
        Vocab.chars_of("ab"),
        np.eye(2),
        W_pos=np.zeros((2, 4)),
        W_U=np.eye(2),
        layers=[[Head(W_Q=[[1, 0]], W_K=[[0, 1]], W_V=np.eye(2), W_O=np.eye(2))]],
    )
    return save(model, tmp_path / "model.npz")


def rezip(saved, replace=None, add=None, drop=(), compression=zipfile.ZIP_STORED):
    """A copy of the saved .npz with members replaced, added (name -> raw bytes) or dropped."""
    path = saved.with_name("edited.npz")
    with zipfile.ZipFile(saved) as src, zipfile.ZipFile(path, "w", compression=compression) as out:
        for name in src.namelist():
            if name not in drop:
                out.writestr(name, (replace or {}).get(name, src.read(name)))
        for name, data in (add or {}).items():
            out.writestr(name, data)
    return path


def with_config(saved, change=None, config=None):
    """A copy of the saved .npz whose JSON config `change` edits (or is replaced by the array `config`)."""
    arrays = dict(np.load(saved))
    if config is None:
        config = json.loads(bytes(arrays[CONFIG_KEY]).decode())
        change(config)
        config = np.frombuffer(json.dumps(config).encode(), dtype=np.uint8)
    arrays[CONFIG_KEY] = config
    path = saved.with_name("edited.npz")
    np.savez(path, **arrays)
    return path


def scan_npz(capsys, path, *culprit: str) -> str:
    """`circuits scan --npz path` fails with one line naming the culprit, and leaves the file as it was."""
    before = path.read_bytes()
    line = one_line(*circuits(capsys, "scan", "--npz", str(path)), f"circuits scan: {path}: ", *culprit)
    assert path.read_bytes() == before
    return line


def scan_subprocess(*argv: str) -> str:
    """The command in a fresh interpreter with every warning shown: its stderr must be the one error line."""
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        "PYTHONWARNINGS": "always",
    }
    r = subprocess.run(
        [sys.executable, "-m", "circuits.cli", "scan", *argv],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert r.returncode == 2, r.stdout + r.stderr
    assert "Traceback" not in r.stderr and "Warning" not in r.stderr, r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, f"stderr is not one line:\n{r.stderr}"
    return lines[0]


# --- 1, 2: what the zip directory and the .npy headers say, checked before any array is read ----------------
def test_a_member_declaring_a_huge_shape(saved, capsys):
    path = rezip(saved, replace={"embed.W_E.npy": npy_header((10**6, 10**6)) + bytes(32)})
    scan_npz(
        capsys,
        path,
        "key 'embed.W_E' declares shape (1000000, 1000000), 7.3 TiB as float64, beyond the "
        "4.0 GiB circuits reads (circuits.io.sizes.MAX_BYTES)",
    )


def test_a_member_whose_header_and_data_disagree(saved, capsys):
    path = rezip(saved, replace={"embed.W_E.npy": npy_header((2, 3)) + bytes(8)})
    scan_npz(
        capsys,
        path,
        "key 'embed.W_E' is damaged: its header declares shape (2, 3) of float64 (48 bytes) "
        "but the archive holds 8 bytes",
    )


def test_a_config_member_without_npy_suffix(saved, capsys):
    with zipfile.ZipFile(saved) as z:
        config = z.read(CONFIG_KEY + ".npy")
    path = rezip(saved, drop=[CONFIG_KEY + ".npy"], add={CONFIG_KEY: config})
    scan_npz(capsys, path, f"member {CONFIG_KEY!r} has no .npy suffix; circuits .npz files hold only .npy arrays")


def test_a_member_that_is_not_an_array(saved, capsys):
    scan_npz(capsys, rezip(saved, add={"notes.txt": b"hello"}), "member 'notes.txt' is not an .npy array")


def test_a_member_with_a_damaged_header(saved, capsys):
    scan_npz(
        capsys,
        rezip(saved, replace={"embed.W_E.npy": b"\x93NUMPY\x01\x00\x10\x00{'descr': 12}   \n"}),
        "key 'embed.W_E' is not a readable .npy array",
    )


def test_an_unknown_member_is_refused_before_any_array_is_read(saved, capsys, monkeypatch):
    read = []
    original = files._NpzArrays.__getitem__
    monkeypatch.setattr(files._NpzArrays, "__getitem__", lambda self, key: read.append(key) or original(self, key))
    path = rezip(saved, add={"extra.npy": npy_header((1000,)) + bytes(8000)})
    scan_npz(capsys, path, "unexpected key 'extra'; it is not part of the model its config describes")
    assert read == []


def test_a_member_inflating_beyond_the_limit_is_refused_from_the_zip_directory(saved, capsys, monkeypatch):
    """The 1.9 MB file that inflates to 2 GB, scaled down: a 2 MiB member under a 1 MiB limit, deflated to a few KB."""
    monkeypatch.setattr(sizes, "MAX_BYTES", 2**20)
    path = rezip(saved, add={"extra.npy": npy_header((2**18,)) + bytes(2**21)}, compression=zipfile.ZIP_DEFLATED)
    assert path.stat().st_size < 2**15
    scan_npz(capsys, path, "key 'extra' declares 2.0 MiB, beyond the 1.0 MiB circuits reads")


def test_members_that_together_pass_the_limit(saved, capsys, monkeypatch):
    monkeypatch.setattr(sizes, "MAX_BYTES", 200)  # each member fits, all of them do not
    scan_npz(capsys, saved, "which takes the file beyond the 200 bytes circuits reads (circuits.io.sizes.MAX_BYTES)")


def test_an_absurd_size_in_a_file_is_refused_before_allocating(saved, capsys):
    """d_head 100,000 on d_model 10,000: 7.5 GiB for one W_Q, refused from its header (the data is not there)."""
    path = rezip(saved, replace={"blocks.0.attn.W_Q.npy": npy_header((1, 10_000, 100_000))})
    scan_npz(capsys, path, "key 'blocks.0.attn.W_Q' declares shape (1, 10000, 100000), 7.5 GiB as float64, beyond")


def test_a_safetensors_file_beyond_the_limit(saved, capsys, monkeypatch):
    pytest.importorskip("safetensors")
    path = save(load(saved), saved.with_suffix(".safetensors"))
    monkeypatch.setattr(sizes, "MAX_BYTES", 100)
    scan_npz(capsys, path, "its arrays take 256 bytes as float64, beyond the 100 bytes circuits reads")


def test_an_unknown_safetensors_key_is_refused(saved, capsys):
    st = pytest.importorskip("safetensors.numpy")
    path = saved.with_suffix(".safetensors")
    arrays = to_tl_state_dict(load(saved)) | {"extra": np.zeros(3)}
    st.save_file(arrays, str(path), metadata={export.METADATA_KEY: json.dumps(model_config(load(saved)))})
    scan_npz(capsys, path, "unexpected key 'extra'")


@pytest.mark.parametrize("kind", MODELS)
def test_the_keys_a_config_expects_are_the_keys_save_writes(kind):
    model = MODELS[kind]()
    assert tl_keys(model_config(model)) == set(to_tl_state_dict(model))


# --- 3: impossible sizes in the config ------------------------------------------------------------------------
def head(c):
    return c["layers"][0]["heads"][0]


CONFIG_CASES = {
    "d_head -1": (
        lambda c: head(c).update(d_head=-1),
        ("the config's layers[0].heads[0].d_head is -1; it needs a whole number ≥ 1 (0 only for a fixed-pattern head)"),
    ),
    "d_head 0": (lambda c: head(c).update(d_head=0), "the config's layers[0].heads[0].d_head is 0"),
    "d_head 1.5": (lambda c: head(c).update(d_head=1.5), "the config's layers[0].heads[0].d_head is 1.5"),
    "d_value -2": (
        lambda c: head(c).update(d_value=-2),
        "the config's layers[0].heads[0].d_value is -2; it needs a whole number ≥ 1",
    ),
    "n_ctx 0": (lambda c: c.update(n_ctx=0), "the config's n_ctx is 0; it needs a whole number ≥ 1 (or null)"),
    "n_ctx -3": (lambda c: c.update(n_ctx=-3), "the config's n_ctx is -3"),
    "window 0": (
        lambda c: head(c).update(window=0),
        "the config's layers[0].heads[0].window is 0; it needs null or a whole number ≥ 1",
    ),
    "scale inf": (
        lambda c: head(c).update(scale=float("inf")),
        "the config's layers[0].heads[0].scale is Infinity; it needs null or a finite number",
    ),
    "qk_multiplier NaN": (lambda c: c.update(qk_multiplier=float("nan")), "the config's qk_multiplier is NaN"),
    "eps 0": (
        lambda c: c.update(ln_final={"eps": 0}),
        "the config's ln_final.eps is 0; it needs a positive number such as 1e-05",
    ),
    "eps text": (
        lambda c: c["layers"][0].update(ln_attn={"eps": "abc"}),
        "the config's layers[0].ln_attn.eps is 'abc'",
    ),
    "W_pos not a flag": (lambda c: c.update(W_pos="yes"), "the config's W_pos is 'yes'; it needs true or false"),
    "tokens not strings": (
        lambda c: c["vocab"].update(tokens=[1, 2]),
        "the config's vocab.tokens is [1, 2]; it needs a list of token strings",
    ),
    "a token twice": (lambda c: c["vocab"].update(tokens=["a", "a"]), "token 'a' is listed twice in the vocabulary"),
    "a head that is a number": (
        lambda c: c["layers"][0].update(heads=[3]),
        "the config has an entry of the wrong kind: layers[0].heads[0] is 3; it needs an object",
    ),
}


@pytest.mark.parametrize("change, message", CONFIG_CASES.values(), ids=CONFIG_CASES.keys())
def test_an_impossible_config_entry(saved, capsys, change, message):
    scan_npz(capsys, with_config(saved, change), message)


def as_version_1(c):
    """A config as circuits wrote it before version 2: the q·k multiplier under its old name, attn_scale."""
    c["version"] = 1
    c["attn_scale"] = c.pop("qk_multiplier")


@pytest.mark.parametrize("multiplier", [0.5, "1/sqrt(d_head)"])
def test_a_version_1_file_loads_as_before(tmp_path, multiplier):
    """Version 1 saved the multiplier as "attn_scale": read as qk_multiplier, the same model; saved again as 2."""
    model = Model(
        Vocab.chars_of("ab"),
        np.eye(2),
        W_pos=np.zeros((2, 4)),
        W_U=np.eye(2),
        qk_multiplier=multiplier,
        layers=[[Head(W_Q=[[1, 0]], W_K=[[0, 1]], W_V=np.eye(2), W_O=np.eye(2))]],
    )
    new = save(model, tmp_path / "model.npz")
    assert json.loads(np.load(new)[CONFIG_KEY].tobytes())["version"] == export.VERSION == 2
    old = with_config(new, as_version_1)
    written = json.loads(np.load(old)[CONFIG_KEY].tobytes())
    assert written["version"] == 1 and "qk_multiplier" not in written and written["attn_scale"] == multiplier
    loaded = load(old)
    assert loaded.qk_multiplier == multiplier and model_config(loaded) == model_config(model)
    ids = [[0, 1, 1, 0]]
    np.testing.assert_array_equal(loaded.run_ids(ids).logits, model.run_ids(ids).logits)


def test_a_version_1_config_names_its_own_key(saved, capsys):
    """A version-1 file with a bad multiplier, or none, is told in the key that file has: attn_scale."""
    scan_npz(
        capsys,
        with_config(saved, lambda c: (as_version_1(c), c.update(attn_scale=float("nan")))),
        "the config's attn_scale is NaN",
    )
    scan_npz(
        capsys,
        with_config(saved, lambda c: (as_version_1(c), c.pop("attn_scale"))),
        "the config has no 'attn_scale' entry",
    )


def test_an_unknown_config_version_is_refused(saved, capsys):
    scan_npz(
        capsys,
        with_config(saved, lambda c: c.update(version=3)),
        "config version 3 is not supported (this circuits reads 1 and 2)",
    )


def test_a_config_that_hides_weights_in_the_padding(tmp_path):
    """d_head 2 in the config for a head whose saved W_Q has 4 columns: the last two would be dropped silently."""
    path = save(gpt_like(), tmp_path / "model.npz")
    path = with_config(path, lambda c: head(c).update(d_head=2))
    with pytest.raises(
        CircuitError,
        match=r"key 'blocks.0.attn.W_Q' has non-zero weights for head 0 beyond the "
        r"d_head 2 its config gives; the config and the arrays disagree",
    ):
        load(path)


def test_a_config_that_is_deeply_nested(saved, capsys):
    deep = ("[" * 100_000 + "]" * 100_000).encode()
    path = with_config(saved, config=np.frombuffer(deep, dtype=np.uint8))
    scan_npz(capsys, path, "the circuits config nests too deeply")


def test_a_config_that_is_not_utf8(saved, capsys):
    path = with_config(saved, config=np.frombuffer(b'{"format": "\xff"}', dtype=np.uint8))
    scan_npz(capsys, path, "the circuits config is not utf-8 text (byte 0xff at position 12)")


# --- 5: no numpy warning before the line ------------------------------------------------------------------------
def test_a_longdouble_config_gives_one_line_and_no_warning(saved):
    path = with_config(saved, config=np.longdouble("1e4000"))
    line = scan_subprocess("--npz", str(path))
    assert f"key {CONFIG_KEY!r} holds float128 values of shape ()" in line or "holds float96" in line, line
    assert "but the config is JSON text as utf-8 bytes (uint8, one dimension)" in line


def test_a_float_array_config_gives_one_line_and_no_warning(saved):
    path = with_config(saved, config=np.array([np.nan, 1.5, 1e300]))
    line = scan_subprocess("--npz", str(path))
    assert line.endswith(
        f"key {CONFIG_KEY!r} holds float64 values of shape (3,), but the config is JSON text as "
        "utf-8 bytes (uint8, one dimension)"
    ), line


def test_a_weight_beyond_float64_gives_one_line_and_no_warning(saved):
    arrays = dict(np.load(saved))
    arrays["embed.W_E"] = np.array([[1, np.longdouble("1e4000")], [0, 1]], dtype=np.longdouble)
    path = saved.with_name("edited.npz")
    np.savez(path, **arrays)
    line = scan_subprocess("--npz", str(path))
    assert line.endswith("key 'embed.W_E' has a value too large for float64 at [0, 1]; every entry must be finite")


def test_a_nan_weight_is_named(saved, capsys):
    arrays = dict(np.load(saved))
    arrays["unembed.W_U"] = np.array([[1, 0], [np.nan, 1]])
    path = saved.with_name("edited.npz")
    np.savez(path, **arrays)
    scan_npz(capsys, path, "key 'unembed.W_U' has nan at [1, 0]; every entry must be finite")


# --- 4, 6: Hugging Face directories whose config.json cannot be a model -------------------------------------------
@pytest.fixture(scope="module")
def hf_dirs(tmp_path_factory):
    """A tiny random GPT-2 and GPT-Neo, saved as a user would save the real ones."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    root = tmp_path_factory.mktemp("hf")
    torch.manual_seed(0)
    common = {"vocab_size": 20, "bos_token_id": 0, "eos_token_id": 0}
    transformers.GPT2LMHeadModel(
        transformers.GPT2Config(n_positions=16, n_embd=8, n_layer=1, n_head=2, **common)
    ).save_pretrained(root / "gpt2")
    transformers.GPTNeoForCausalLM(
        transformers.GPTNeoConfig(
            max_position_embeddings=16,
            hidden_size=8,
            num_layers=2,
            num_heads=2,
            attention_types=[[["global", "local"], 1]],
            window_size=4,
            **common,
        )
    ).save_pretrained(root / "neo")
    return root


def corrupt(hf_dirs, tmp_path, arch: str, change):
    path = tmp_path / arch
    shutil.copytree(hf_dirs / arch, path)
    config = json.loads((path / "config.json").read_text())
    changed = change(config)
    config = changed if isinstance(changed, list) else config  # a change may return a whole new config
    (path / "config.json").write_text(json.dumps(config))
    return path


HF_CASES = {
    "n_head 0": ("gpt2", lambda c: c.update(n_head=0), "config.json: n_head is 0; it needs a whole number ≥ 1"),
    "n_head twelve": ("gpt2", lambda c: c.update(n_head="twelve"), "n_head is 'twelve'; it needs a whole number ≥ 1"),
    "n_head null": ("gpt2", lambda c: c.update(n_head=None), "n_head is null; it needs a whole number ≥ 1"),
    "n_layer -1": ("gpt2", lambda c: c.update(n_layer=-1), "n_layer is -1; it needs a whole number ≥ 1"),
    "vocab_size 0": ("gpt2", lambda c: c.update(vocab_size=0), "vocab_size is 0; it needs a whole number ≥ 1"),
    "n_head missing": ("gpt2", lambda c: c.pop("n_head"), "the gpt2 config has no 'n_head'"),
    "n_embd not divisible": ("gpt2", lambda c: c.update(n_head=3), "hidden size 8 is not divisible by 3 heads"),
    "eps abc": (
        "gpt2",
        lambda c: c.update(layer_norm_epsilon="abc"),
        "layer_norm_epsilon is 'abc'; it needs a positive number such as 1e-05",
    ),
    "eps -1": ("gpt2", lambda c: c.update(layer_norm_epsilon=-1.0), "layer_norm_epsilon is -1.0"),
    "activation a list": (
        "gpt2",
        lambda c: c.update(activation_function=["gelu"]),
        "activation ['gelu'] is not supported",
    ),
    "flag not a bool": (
        "gpt2",
        lambda c: c.update(scale_attn_weights="no"),
        "scale_attn_weights is 'no'; it needs true or false",
    ),
    "a JSON list": (
        "gpt2",
        lambda c: [c],
        (
            "config.json: the config is a JSON list, but it needs to be an object of "
            'settings such as {"model_type": "gpt2", "n_embd": 768, …}'
        ),
    ),
    "bos_token_id text": (
        "gpt2",
        lambda c: c.update(bos_token_id="x"),
        "bos_token_id is 'x'; it needs null or a token id ≥ 0",
    ),
    "eos_token_id -3": ("gpt2", lambda c: c.update(eos_token_id=-3), "eos_token_id is -3"),
    "unknown model_type": ("gpt2", lambda c: c.update(model_type="llama"), "model_type 'llama' is not supported"),
    "neo without window_size": (
        "neo",
        lambda c: c.pop("window_size"),
        "the gpt_neo config has local layers but no window_size; it needs a whole number ≥ 1",
    ),
    "neo window_size 0": ("neo", lambda c: c.update(window_size=0), "window_size is 0; it needs a whole number ≥ 1"),
    "attention_types a string": (
        "neo",
        lambda c: c.update(attention_types="global"),
        ('attention_types is \'global\'; it needs pairs of layer kinds and repeats, e.g. [[["global", "local"], 6]]'),
    ),
    "attention_types flat": (
        "neo",
        lambda c: c.update(attention_types=[["global", 2]]),
        'attention_types is [["global", 2]]; it needs pairs of layer kinds and repeats',
    ),
    "attention_types unknown kind": (
        "neo",
        lambda c: c.update(attention_types=[[["global", "sparse"], 1]]),
        'attention_types is [[["global", "sparse"], 1]]',
    ),
    "attention_types too few": (
        "neo",
        lambda c: c.update(attention_types=[[["global"], 1]], attention_layers=None),
        "attention_types give 1 layer kinds for 2 layers",
    ),
    "attention_layers disagree": (
        "neo",
        lambda c: c.update(attention_layers=["local", "global"]),
        'attention_layers ["local", "global"] disagrees with attention_types',
    ),
    "absurd size": (
        "gpt2",
        lambda c: c.update(n_embd=100_000, n_head=1),
        (
            "the config describes 120,005,100,000 parameters, 894.1 GiB as float64, beyond the 4.0 GiB "
            "circuits holds (circuits.io.sizes.MAX_BYTES)"
        ),
    ),
}


@pytest.mark.parametrize("arch, change, message", HF_CASES.values(), ids=HF_CASES.keys())
def test_a_bad_hf_config_is_one_line_from_scan(hf_dirs, tmp_path, capsys, arch, change, message):
    path = corrupt(hf_dirs, tmp_path, arch, change)
    before = (path / "config.json").read_bytes()
    one_line(*circuits(capsys, "scan", "--hf", str(path)), f"circuits scan: {path / 'config.json'}: ", message)
    assert (path / "config.json").read_bytes() == before


@pytest.mark.parametrize(
    "arch, change, message", [HF_CASES[k] for k in ("n_head null", "neo without window_size")], ids=["gpt2", "neo"]
)
def test_a_bad_hf_config_is_a_circuit_error_from_from_hf(hf_dirs, tmp_path, arch, change, message):
    from circuits.io.hf import from_hf

    path = corrupt(hf_dirs, tmp_path, arch, change)
    with pytest.raises(CircuitError) as e:
        from_hf(path)
    assert message in str(e.value) and "\n" not in str(e.value)


def test_a_bad_config_in_a_model_object_is_one_line(hf_dirs):
    """from_hf(model) reads config.to_dict(): the same checks, naming the model."""
    from circuits.io.hf import from_hf, load_hf

    hf_model = load_hf(hf_dirs / "neo")
    hf_model.config.attention_layers = ["global", "sideways"]
    with pytest.raises(CircuitError, match=r"attention_layers is \[\"global\", \"sideways\"\]; it needs a list of"):
        from_hf(hf_model)


def test_a_config_transformers_refuses_is_still_one_line(hf_dirs, tmp_path, capsys):
    """Settings circuits does not read are left to transformers; its complaint is squashed into the one line."""
    path = corrupt(hf_dirs, tmp_path, "gpt2", lambda c: c.update(resid_pdrop="abc"))
    one_line(
        *circuits(capsys, "scan", "--hf", str(path)),
        f"circuits scan: {path}: transformers cannot build the model "
        "(Validation error for field 'resid_pdrop': TypeError: Field 'resid_pdrop' with value 'abc'",
    )


def test_a_good_hf_directory_scans_with_no_noise_on_stderr(hf_dirs, capsys):
    """No progress bars or transformers warnings; the one line is that no tokenizer was saved with it."""
    code, out, err = circuits(capsys, "scan", "--hf", str(hf_dirs / "neo"), "--seq-len", "5", "--json")
    assert code == 0 and err.splitlines() == [
        f"circuits: warning: the tokenizer at {str(hf_dirs / 'neo')!r} names 1 of "
        "the model's 20 token ids, so it is not this model's: tokens are named "
        "t0, t1, … instead"
    ], err
    assert json.loads(out)["inputs"] == {"batch": 4, "seq": 11}


def test_a_bad_hf_config_gives_one_line_in_a_fresh_interpreter(hf_dirs, tmp_path):
    path = corrupt(hf_dirs, tmp_path, "gpt2", lambda c: c.update(n_head=0))
    assert scan_subprocess("--hf", str(path)).endswith("config.json: n_head is 0; it needs a whole number ≥ 1")
