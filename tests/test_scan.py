"""Head scan: finds the heads of a hand-built induction circuit and a previous-token head planted in a random model."""

import dataclasses
import json
import sys

import numpy as np
import pytest
from helpers import cli_scan

from circuits import MLP, CircuitError, Head, Layer, LayerNorm, Model, Vocab, blank, names
from circuits.analysis.scan import repeated_inputs, scan, targets_for
from circuits.display.render import to_text
from circuits.display.tables import scan_table
from circuits.io.export import save
from circuits.model import functional as F
from circuits.model.basis import Basis
from circuits.targets.behaviours import mass_on_target

N_TOKENS, SEQ_LEN = 16, 8
STRENGTH = 20.0  # q·k for a match: e^20 outweighs every other key


def induction_model() -> Model:
    """Two layers: 0.0 copies the previous token into prev:*, 1.1 matches current tok:* against prev:* (induction).

    Also 0.1 (random, writes nothing), 1.0 (fixed "first" pattern) and 1.2 (duplicate-token:
    same token, minus its own position), so each behaviour has one right head and several wrong ones.
    """
    vocab = Vocab.numbered(N_TOKENS, bos="BOS")
    V, n_ctx = len(vocab), 2 * SEQ_LEN + 1
    tok, pos, prev = names("tok", V), names("pos", n_ctx), names("prev", V)
    resid = Basis(tok + pos + prev)
    W_E, W_pos = blank(resid, V), blank(resid, n_ctx)
    for t in range(V):
        W_E[f"tok:{t}", t] = 1
    for i in range(n_ctx):
        W_pos[f"pos:{i}", i] = 1

    prev_q, prev_k = blank(n_ctx, resid), blank(n_ctx, resid)  # q at i is e_{i−1}; k at j is e_j
    for i in range(n_ctx):
        prev_k[i, f"pos:{i}"] = 1
        if i:
            prev_q[i - 1, f"pos:{i}"] = STRENGTH
    copy_v, copy_o = blank(V, resid), blank(resid, V)  # read the token, write it to prev:*
    for t in range(V):
        copy_v[t, f"tok:{t}"] = 1
        copy_o[f"prev:{t}", t] = 1
    rng = np.random.default_rng(0)
    noise = Head(
        W_Q=rng.normal(0, 0.1, (4, len(resid))),
        W_K=rng.normal(0, 0.1, (4, len(resid))),
        W_V=rng.normal(0, 0.1, (4, len(resid))),
    )

    ind_q, ind_k = blank(V, resid), blank(V, resid)  # current token against the previous token's copy
    dup_q, dup_k = blank(V + n_ctx, resid), blank(V + n_ctx, resid)  # same token, not the same position
    for t in range(V):
        ind_q[t, f"tok:{t}"], ind_k[t, f"prev:{t}"] = STRENGTH, 1
        dup_q[t, f"tok:{t}"], dup_k[t, f"tok:{t}"] = STRENGTH, 1
    for i in range(n_ctx):
        dup_q[V + i, f"pos:{i}"], dup_k[V + i, f"pos:{i}"] = -STRENGTH, 1
    layers = [
        [Head(W_Q=prev_q, W_K=prev_k, W_V=copy_v, W_O=copy_o), noise],
        [
            Head(W_V=copy_v, pattern="first"),
            Head(W_Q=ind_q, W_K=ind_k, W_V=copy_v),
            Head(W_Q=dup_q, W_K=dup_k, W_V=copy_v),
        ],
    ]
    return Model(vocab, W_E, W_pos, layers=layers, residual=resid, name="hand-made induction")


@pytest.fixture(scope="module")
def induction():
    return induction_model()


def test_scan_ranks_the_hand_built_heads_top(induction):
    result = scan(induction, seq_len=SEQ_LEN, batch=8)
    expected = {"previous-token": (0, 0), "induction": (1, 1), "duplicate-token": (1, 2), "first-token": (1, 0)}
    for behaviour, (layer, head) in expected.items():
        best = result.top(behaviour)[0]
        assert (best.layer, best.head) == (layer, head), f"{behaviour}: {result.top(behaviour, 3)}"
        assert best.score > 0.9
        assert [(s.layer, s.head) for s in result.found(behaviour)] == [(layer, head)], behaviour


def test_scores_count_only_rows_with_a_target(induction):
    """A perfect induction head scores ~1; TransformerLens's "mul" (mean over every row) would give ~0.5."""
    ids = repeated_inputs(induction, seq_len=SEQ_LEN, batch=8)
    score = scan(induction, ids, behaviours="induction").top("induction")[0]
    mass = mass_on_target(induction.run_ids(ids).pattern(1, 1), targets_for("induction", ids))  # [b, T]
    diluted = np.nan_to_num(mass).mean()
    assert score.score > 0.95 and diluted < 0.6
    assert score.rows == int((~np.isnan(mass)).sum())


def test_first_token_ignores_position_0(induction):
    """Position 0 attends to itself in every head; counting it would credit a "self" head with 1/T."""
    model = Model(Vocab.numbered(4), np.eye(4), layers=[[Head(W_V=np.eye(4), pattern="self")]])
    ids = np.array([[0, 1, 2, 3, 1, 2]])
    best = scan(model, ids, behaviours="first-token").top("first-token")[0]
    assert best.score == 0.0 and best.rows == 5


def test_padding_rows_are_not_scored():
    model = Model(Vocab.numbered(4), np.eye(4), layers=[[Head(W_V=np.eye(4), pattern="previous")]])
    ids = np.array([[0, 1, 2, 3], [0, 1, 0, 0]])
    valid = np.array([[1, 1, 1, 1], [1, 1, 0, 0]], dtype=bool)
    best = scan(model, ids, behaviours="previous-token", valid=valid).top("previous-token")[0]
    assert best.rows == 3 + 1 and best.score == 1.0


def random_gpt(rng, V=50, d=64, n_heads=2, n_layers=2, n_ctx=32) -> Model:
    """A GPT-2-shaped model with random weights (LayerNorms, tanh-GELU MLPs, 1/sqrt(d_head)) and large W_pos."""
    dh = d // n_heads
    w = lambda *shape: rng.normal(0, 0.02, shape)  # noqa: E731
    ln = lambda: LayerNorm(w=1 + w(d), b=w(d))  # noqa: E731
    layers = [
        Layer(
            heads=[Head(W_Q=w(dh, d), W_K=w(dh, d), W_V=w(dh, d), W_O=w(d, dh), b_Q=w(dh)) for _ in range(n_heads)],
            b_O=w(d),
            mlp=MLP(W_in=w(4 * d, d), W_out=w(d, 4 * d), b_in=w(4 * d), act="gelu_tanh"),
            ln_attn=ln(),
            ln_mlp=ln(),
        )
        for _ in range(n_layers)
    ]
    return Model(
        Vocab.numbered(V - 1, bos="BOS"),
        w(d, V),
        rng.normal(0, 1.0, (d, n_ctx)),
        layers=layers,
        W_U=w(V, d),
        ln_final=ln(),
        qk_multiplier="1/sqrt(d_head)",
        name="random",
    )


def previous_token_qk(X: np.ndarray, d_head: int, strength: float) -> tuple[np.ndarray, np.ndarray]:
    """W_Q, W_K [d_head, d_model] with q_i·k_j = strength·[j = i−1] for the rows x_i of X [T, d_model]."""
    T = X.shape[0]
    M = np.linalg.pinv(X.T)  # [T, d_model]: M x_i = e_i
    shift = np.eye(T, k=1)  # e_i -> e_{i−1}
    pad = lambda A: np.pad(A, [(0, d_head - T), (0, 0)])  # noqa: E731
    return pad(strength * shift @ M), pad(M)


def plant_previous_token(model: Model, layer: int, head: int, T: int) -> Model:
    """The same model with head layer.head replaced by one that attends from each position to the one before."""
    w, b, eps = model.blocks[layer].ln_attn
    X = F.layer_norm(model.W_pos.T[:T], w, b, eps)  # [T, d_model]: what the head sees, if positions dominate
    h = model.head(layer, head)
    W_Q, W_K = previous_token_qk(X, h.W_Q.shape[0], 30.0 / h.scale)
    layers = [dataclasses.replace(lay, heads=list(lay.heads)) for lay in model.layers]
    layers[layer].heads[head] = Head(W_Q=W_Q, W_K=W_K, W_V=h.W_V, W_O=h.W_O)
    return Model(
        model.vocab,
        model.W_E,
        model.W_pos,
        layers=layers,
        W_U=model.W_U,
        ln_final=LayerNorm(*model.ln_final),
        qk_multiplier=model.qk_multiplier,
    )


def test_scan_finds_a_previous_token_head_planted_in_a_random_model():
    rng = np.random.default_rng(7)
    model = random_gpt(rng)
    seq_len = 10
    before = scan(model, seq_len=seq_len, behaviours="previous-token")
    assert before.found("previous-token") == []
    planted = plant_previous_token(model, layer=1, head=1, T=2 * seq_len + 1)
    result = scan(planted, seq_len=seq_len, batch=4)
    best = result.top("previous-token")[0]
    assert (best.layer, best.head) == (1, 1) and best.score > 0.9
    assert [s.name for s in result.found("previous-token")] == ["head 1.1"]


def test_scan_table_names_the_heads(induction):
    text = to_text(scan_table(scan(induction, seq_len=SEQ_LEN), top=2))
    assert "head 1.1" in text and "induction" in text and "✓ ≥ 0.5" in text


def test_unknown_behaviour_and_bad_inputs_fail_clearly(induction):
    with pytest.raises(CircuitError, match="unknown behaviour 'inductoin'"):
        scan(induction, behaviours=["inductoin"])
    with pytest.raises(CircuitError, match="threshold 2"):
        scan(induction, threshold=2)
    with pytest.raises(CircuitError, match="n_ctx is 17"):
        scan(induction, seq_len=20)
    with pytest.raises(CircuitError, match="no query row of these inputs has a induction target"):
        scan(induction, np.array([[0, 1, 2, 3]]), behaviours="induction")


# --- command line -----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def saved(tmp_path_factory, induction):
    return save(induction, tmp_path_factory.mktemp("scan") / "induction.npz")


def test_cli_prints_a_table(saved, capsys):
    assert cli_scan(["--npz", str(saved), "--seq-len", "8", "--top", "2"]) == 0
    out = capsys.readouterr().out
    assert "head 0.0" in out and "head 1.1" in out and "previous-token" in out


def test_cli_json(saved, capsys):
    assert cli_scan(["--npz", str(saved), "--seq-len", "8", "--json", "--behaviour", "induction,previous-token"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert list(data["behaviours"]) == ["induction", "previous-token"]
    best = data["behaviours"]["induction"][0]
    assert (best["layer"], best["head"]) == (1, 1) and best["score"] > 0.9 and data["threshold"] == 0.5


@pytest.mark.parametrize(
    "argv, message",
    [
        ([], "give --hf or --npz (see circuits scan --help)"),
        (["--npz", "nowhere.npz"], "nowhere.npz: no such file"),
        (["--npz", "x.npz", "--behaviour", "copying"], "--behaviour 'copying' is unknown (see circuits scan --help)"),
        (["--npz", "x.npz", "--behaviour", "inductoin"], "--behaviour 'inductoin': did you mean 'induction'?\n"),
        (["--npz", "x.npz", "--threshold", "lots"], "--threshold 'lots' is not a number"),
        (["--npz", "x.npz", "--hf", "gpt2"], "not allowed with argument"),
    ],
)
def test_cli_errors_are_one_line_and_exit_2(argv, message, capsys):
    assert cli_scan(argv) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err
    assert len(err.rstrip("\n")) <= 80, err  # the line fits the terminal


def test_cli_seq_len_too_long_is_one_line(saved, capsys):
    assert cli_scan(["--npz", str(saved), "--seq-len", "50"]) == 2
    err = capsys.readouterr().err
    assert "n_ctx is 17" in err and err.count("\n") == 1


def test_cli_hf_without_the_extra_says_how_to_install(monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "torch", None)  # as if torch were not installed
    monkeypatch.setitem(sys.modules, "transformers", None)
    assert cli_scan(["--hf", "gpt2"]) == 2
    err = capsys.readouterr().err
    assert 'pip install "circuits-workbench[hf]"' in err and err.count("\n") == 1


def test_cli_help_returns_0(capsys):
    assert cli_scan(["--help"]) == 0
    assert "--seq-len" in capsys.readouterr().out
