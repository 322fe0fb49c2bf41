"""tracr's compiled programs loaded by circuits.from_tracr: the same numbers as tracr's own forward pass.

Each program of tracr.compiler.lib is compiled once per module (jax starts once), causally and
bidirectionally where the lib says it works so, and run by circuits and by `assembled.apply` on the
same random inputs. Tolerance: tracr runs in float32, circuits in float64 on tracr's weights, so the
final residual streams agree to float32 rounding of values up to tracr's MLP constants (~100):
ATOL = 1e-4 (the largest difference measured is printed in the README). Categorical outputs must be
identical; numerical ones agree within ATOL. A program tracr cannot compile, or that circuits cannot
load, is skipped with the reason, never compared loosely.
"""

import numpy as np
import pytest
from helpers import tracr_without_random_init

tracr = pytest.importorskip("tracr")
pytest.importorskip("haiku")

from tracr.compiler import compiling, lib  # noqa: E402
from tracr.rasp import rasp  # noqa: E402

import circuits  # noqa: E402
from circuits import CircuitError  # noqa: E402

ATOL = 1e-4
MAX_SEQ_LEN = 5
LETTERS = {"a", "b", "c"}
DIGITS = {1, 2, 3, 4}
PARENS = {"(", ")", "{", "}", "x"}

# name -> (program, vocabulary); each compiled in the modes listed in MODES
PROGRAMS = {
    "length": (lambda: lib.make_length(), LETTERS),
    "reverse": (lambda: lib.make_reverse(rasp.tokens), LETTERS),
    "hist": (lambda: lib.make_hist(), LETTERS),
    "sort_unique": (lambda: lib.make_sort_unique(rasp.tokens, rasp.tokens), DIGITS),
    "sort": (lambda: lib.make_sort(rasp.tokens, rasp.tokens, max_seq_len=MAX_SEQ_LEN, min_key=1), DIGITS),
    "sort_freq": (lambda: lib.make_sort_freq(max_seq_len=MAX_SEQ_LEN), LETTERS),
    "pair_balance": (lambda: lib.make_pair_balance(rasp.tokens, "(", ")"), PARENS),
    "shuffle_dyck2": (lambda: lib.make_shuffle_dyck(["()", "{}"]), PARENS),
    "frac_prevs": (lambda: lib.make_frac_prevs(rasp.tokens == "a"), LETTERS),
    "shift_by": (lambda: lib.shift_by(1, rasp.tokens), LETTERS),
    "detect_pattern": (lambda: lib.detect_pattern(rasp.tokens, "ab"), LETTERS),
    "count_less_freq": (lambda: lib.make_count_less_freq(2), LETTERS),
    "count": (lambda: lib.make_count(rasp.tokens, "a"), LETTERS),
    "nary_sequencemap": (lambda: lib.make_nary_sequencemap(lambda x, y: x + y, rasp.tokens, rasp.indices), DIGITS),
}
# tracr's lib: length … shuffle_dyck, hist, count_less_freq work only bidirectionally (as RASP means them); the
# others under both. Parity with tracr's forward holds either way, so a few are compiled causally too.
CAUSAL = {"frac_prevs", "shift_by", "hist"}
UNIQUE = {"sort_unique"}  # its precondition: keys (here the tokens) are distinct, else its attention ties
MODES = [(name, False) for name in PROGRAMS] + [(name, True) for name in PROGRAMS if name in CAUSAL]


@pytest.fixture(scope="module")
def compiled():
    """(name, causal) -> (assembled, model, error), each compiled and loaded at most once per module."""
    cache = {}

    def get(name, causal):
        if (name, causal) not in cache:
            make, vocab = PROGRAMS[name]
            try:
                with tracr_without_random_init():  # the same weights, for half the CPU
                    assembled = compiling.compile_rasp_to_model(make(), vocab, MAX_SEQ_LEN, causal=causal)
            except Exception as e:  # noqa: BLE001 - tracr's own refusal is the skip reason
                cache[name, causal] = (None, None, f"tracr cannot compile {name}: {type(e).__name__}: {e}")
                return cache[name, causal]
            try:
                cache[name, causal] = (assembled, circuits.from_tracr(assembled, name=name), None)
            except CircuitError as e:
                cache[name, causal] = (assembled, None, f"circuits cannot load {name}: {e}")
        return cache[name, causal]

    return get


def inputs_for(vocab, seed: int, unique: bool = False) -> list[list]:
    """Random inputs of two lengths (sorted() so the draw does not depend on set order). Two, because jax compiles
    every operation of tracr's forward again for each new shape: that, not tracr's compiler, is the test's cost."""
    rng = np.random.default_rng(seed)
    values = sorted(vocab, key=str)
    if unique:
        return [[values[i] for i in rng.permutation(len(values))[:n]] for n in (2, 2, 2, 4, 4, 4, 4)]
    return [[values[i] for i in rng.integers(len(values), size=n)] for n in (2, 2, 2, 5, 5, 5, 5)]


def parity(assembled, model, inputs):
    """Largest |circuits − tracr| of the final residual stream and of the attention logits, and both decodings."""
    bos = assembled.input_encoder.bos_token
    trace = model.run([[str(t) for t in x] for x in inputs])  # one padded batch
    mine = circuits.tracr_output(model, trace)
    resid, logits, theirs = 0.0, 0.0, []
    for n, x in enumerate(inputs):
        out = assembled.apply([bos, *x])
        T = len(x) + 1
        ref = np.asarray(out.transformer_output[0], dtype=np.float64)  # [T, d_model]
        resid = max(resid, float(np.abs(trace.resid_final[n, :T] - ref).max()))
        logits = max(logits, attention_gap(model, trace, out, n, T))
        theirs.append(out.decoded[1:])
    return resid, logits, mine, theirs


def attention_gap(model, trace, out, n, T) -> float:
    """tracr's attention logits (scaled, masked with −1e30) against circuits' scores where a key is visible."""
    gap = 0.0
    for l in range(model.n_layers):
        for h in range(model.n_heads(l)):
            ours = trace.layers[l].held("scores")[n, h, :T, :T]
            theirs = np.asarray(out.attn_logits[l][0, h], dtype=np.float64)  # [T, T]
            seen = np.isfinite(ours)
            gap = max(gap, float(np.abs(ours[seen] - theirs[seen]).max()))
    return gap


@pytest.mark.parametrize("name,causal", MODES, ids=[f"{n}-{'causal' if c else 'bidirectional'}" for n, c in MODES])
def test_parity_with_tracr(compiled, name, causal):
    assembled, model, missing = compiled(name, causal)
    if missing:
        pytest.skip(missing)
    assert all(h.mask == ("causal" if causal else "bidirectional") for h in model.heads())
    inputs = inputs_for(PROGRAMS[name][1], seed=len(name), unique=name in UNIQUE)
    resid, logits, mine, theirs = parity(assembled, model, inputs)
    print(f"{name} {'causal' if causal else 'bidirectional'}: max |Δ resid| = {resid:.2e}, |Δ logits| = {logits:.2e}")
    assert resid <= ATOL, f"{name}: final residual differs from tracr's by {resid}"
    if model.tracr.categorical:
        assert mine == theirs
    else:
        assert [len(r) for r in mine] == [len(r) for r in theirs]

        def flat(rows):
            return np.array([v for r in rows for v in r], dtype=float)

        assert np.allclose(flat(mine), flat(theirs), atol=ATOL, rtol=0)
    assert logits <= ATOL * 1e3  # scores are tracr's: q·k / sqrt(key_size), of size up to ~1e4


def test_compiling_without_tracrs_random_init_gives_the_same_weights(compiled):
    """The fixture compiles without haiku's random initial weights (helpers.tracr_without_random_init): tracr
    overwrites them all, so a compile with them gives the same weights, bit for bit. An initial weight it kept would
    differ: the zeros stand for draws of a truncated normal."""
    import jax

    assembled, _, missing = compiled("frac_prevs", True)
    if missing:
        pytest.skip(missing)
    make, vocab = PROGRAMS["frac_prevs"]
    plain = compiling.compile_rasp_to_model(make(), vocab, MAX_SEQ_LEN, causal=True)
    ours, theirs = (jax.tree_util.tree_leaves_with_path(a.params) for a in (assembled, plain))
    assert [p for p, _ in ours] == [p for p, _ in theirs] and len(ours) >= 4
    for (path, a), (_, b) in zip(ours, theirs):
        assert a.dtype == b.dtype and np.array_equal(np.asarray(a), np.asarray(b)), jax.tree_util.keystr(path)


def test_the_model_names_tracrs_directions(compiled):
    assembled, model, missing = compiled("frac_prevs", True)
    if missing:
        pytest.skip(missing)
    assert list(model.residual.labels) == list(assembled.residual_labels)
    enc = assembled.input_encoder
    assert model.vocab.bos == "compiler_bos" and model.vocab.ids["compiler_bos"] == enc.bos_encoding
    assert [model.vocab.ids[str(t)] for t in enc.encoding_map] == list(enc.encoding_map.values())
    assert model.n_ctx == MAX_SEQ_LEN + 1  # BOS's position too
    assert len(model.tracr.directions) == 1 and model.tracr.directions[0].startswith("frac_prevs")
    trace = model.run([list("abca"), ["a"]])  # no BOS given: the model adds it, as every circuits model does
    got = circuits.tracr_output(model, trace)
    assert [len(r) for r in got] == [4, 1]
    assert np.allclose(got[0], [1, 0.5, 1 / 3, 0.5], atol=ATOL) and np.allclose(got[1], [1], atol=ATOL)


def test_bad_input_is_one_line():
    with pytest.raises(CircuitError, match=r"from_tracr needs a tracr AssembledTransformerModel .* not a dict"):
        circuits.from_tracr({"params": {}})
    model = circuits.Model(circuits.Vocab.chars_of("ab"), np.eye(2))
    with pytest.raises(CircuitError, match="tracr_output needs a model from circuits.from_tracr"):
        circuits.tracr_output(model, model.run("ab"))


def test_replacing_a_head_names_it(compiled):
    assembled, model, missing = compiled("hist", False)
    if missing:
        pytest.skip(missing)
    with pytest.raises(CircuitError, match="head 0.5"):
        circuits.from_tracr(assembled, heads={(0, 5): {"W_Q": None}})
    with pytest.raises(CircuitError, match="'W_X'"):
        circuits.from_tracr(assembled, heads={(0, 0): {"W_X": 1}})


# --- a compiled model held to a puzzle: the checker certifies it, and a mutant of its weights fails -------------
PUZZLE = '''"""Puzzle 92 · tracr's histogram

tracr compiles RASP's hist (how often each token occurs in the input) bidirectionally. Its first
head attends from each token to every copy of it, and to BOS; the MLP turns the share of BOS
into the count. Write that head's W_Q and W_K: the output directions hist:1 … hist:5 must hold
the count, one-hot, at every position of every input of 1 to 5 tokens.
"""

from tracr.compiler import compiling, lib

from circuits import Inputs, Output, Puzzle, Residual, from_tracr
from circuits import FILL_ME_IN  # noqa: F401

# ── givens ──
assembled = compiling.compile_rasp_to_model(lib.make_hist(), {"a", "b", "c"}, max_seq_len=5)
compiled = from_tracr(assembled, name="hist")
OUT = list(compiled.tracr.directions)  # hist:0 … hist:5, in tracr's order (values 0 … 5)


def hist(tokens):
    return [[float(tokens.count(t) == v) for v in compiled.tracr.values] for t in tokens]


def build(answer):
    return from_tracr(assembled, name="hist", heads={(0, 0): {"W_Q": answer.W_Q, "W_K": answer.W_K}})


puzzle = Puzzle(
    number=92, name="tracr_hist", title="tracr's histogram",
    answer=["W_Q", "W_K"], build=build,
    targets=[Output(Residual(OUT), hist, tol=0.01, description="the count of each token, one-hot")],
    inputs=Inputs(["a", "b", "c"], min_len=1, max_len=5),
    examples=[["a", "b", "a", "c"], ["c", "c", "c"]],
)

# ── your answer ──
W_Q = compiled.head(0, 0).W_Q
W_K = compiled.head(0, 0).W_K
'''


def test_the_checker_certifies_a_compiled_model_and_fails_a_mutant(tmp_path, monkeypatch):
    import dataclasses
    import types

    from circuits.checking import checker, pipeline

    monkeypatch.setenv("CIRCUITS_IMPORT_SECONDS", "600")  # the file compiles tracr's hist (seconds on a busy box)
    path = tmp_path / "92_tracr_hist.py"
    path.write_text(PUZZLE)
    attempt = pipeline.load(path)
    result = checker.check(attempt)
    assert result.status == "solved", result.error
    assert (result.coverage.small, result.coverage.small_max_len) == (3 + 9 + 27 + 81 + 243, 5)  # every input there is
    W_K = np.array(attempt.answer.W_K)
    W_K[:, attempt.names["compiled"].residual.index("tokens:a")] *= -1  # the query a no longer finds its copies
    mutant = dataclasses.replace(attempt, answer=types.SimpleNamespace(W_Q=attempt.answer.W_Q, W_K=W_K, params={}))
    result = checker.check(mutant)
    assert result.status == "failing"
    failed = next(r for r in result.targets if r.status == "failed")
    assert failed.failure is not None and failed.failure.tokens == ["a"]  # the shortest input already fails


def test_analysis_pages_and_saving_work_on_a_compiled_model(compiled, tmp_path):
    from circuits.analysis import summary
    from circuits.display import html
    from circuits.io import export

    assembled, model, missing = compiled("sort_unique", False)
    if missing:
        pytest.skip(missing)
    inputs = [["3", "1", "2"]]
    s = summary.analyze(model, inputs=inputs)
    assert [h["mask"] for h in s["heads"]] == ["bidirectional"] * model.n_layers
    assert "tokens:1" in s["heads"][0]["qk"]["matrix"]["rows"]  # the QK table, by tracr's names
    assert "<svg" in html.trace_html(model.run(inputs)) or "<table" in html.trace_html(model.run(inputs))
    export.save(model, tmp_path / "sort.npz")
    again = export.load(tmp_path / "sort.npz")
    assert [h.mask for h in again.heads()] == [h.mask for h in model.heads()]
    assert np.array_equal(again.run(inputs).resid_final, model.run(inputs).resid_final)
