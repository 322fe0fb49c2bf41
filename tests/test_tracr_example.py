"""examples/tracr_side_by_side.py and docs/tracr.md held to what they say: tracr's hist head beside puzzle 18's,
tracr's frac_prevs beside puzzles 03 and 19. The models are compiled and built once per module (~12 s)."""

import importlib.util
import io
import sys
from pathlib import Path

import numpy as np
import pytest

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "tracr_side_by_side.py"
TOL = 1e-6


def load_example():
    spec = importlib.util.spec_from_file_location("tracr_side_by_side", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks its module up
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def ex():
    return load_example()


@pytest.fixture(scope="module")
def m(ex):
    pytest.importorskip("tracr")
    pytest.importorskip("haiku")
    from helpers import tracr_without_random_init

    with tracr_without_random_init():  # the same weights (tests/test_tracr.py), for half the compiles' CPU
        return ex.build()


def picked_evenly(tokens: str) -> np.ndarray:  # [T+1, T+1]: BOS and every copy of the query's token so far, evenly
    ids = ["BOS", *tokens]
    T = len(ids)
    picked = np.array([[k == 0 or (k <= q and ids[k] == ids[q]) for k in range(T)] for q in range(T)], dtype=float)
    picked[0] = np.eye(T)[0]
    return picked / picked.sum(axis=1, keepdims=True)


def prefix_uniform(T: int) -> np.ndarray:  # [T, T]: each query evenly over positions 0..i
    return np.tril(np.ones((T, T))) / np.arange(1, T + 1)[:, None]


# --- hist vs puzzle 18 -------------------------------------------------------------------------------
def test_both_hist_heads_attend_only_to_bos_and_the_copies_of_the_query_token_evenly(ex, m):
    for tokens in ex.HIST_INPUTS:
        expected = picked_evenly(tokens)
        for model in (m["hist"], m["p18"]):
            p = ex.attention(model, tokens)
            assert p.shape == expected.shape
            assert np.abs(p - expected).max() < TOL, (model.name, tokens)


def test_the_hist_heads_read_the_same_things_under_different_names(ex, m):
    tracr, mine = ex.reads(m["hist"]), ex.reads(m["p18"])
    letters = tuple(f"tokens:{t}" for t in "abcd")
    assert set(tracr.query) == {*letters, "one"}  # tracr's query finds BOS through `one`, on every position
    assert set(tracr.key) == {*letters, "tokens:compiler_bos"}
    assert tracr.value == ("tokens:compiler_bos",)  # reads a 1 from BOS only: the result is 1/(n + 1)
    assert len(tracr.writes) == 1 and tracr.writes[0].endswith("_selector_width_attn_output")
    assert set(mine.query) == {f"tok:{t}" for t in "abcd"}  # the puzzle's query finds BOS through the letters
    assert set(mine.key) == {*(f"tok:{t}" for t in "abcd"), "bos"}
    assert mine.value == ("bos",) and mine.writes is None


def test_the_hist_heads_compute_the_same_fraction_at_different_sharpness(ex, m):
    for tokens in ex.HIST_INPUTS:
        want = [1 / (tokens[: i + 1].count(t) + 1) for i, t in enumerate(tokens)]
        for model in (m["hist"], m["p18"]):
            assert np.abs(ex.result(model, tokens) - want).max() < TOL, (model.name, tokens)
    # tracr's scores: 100 (its soft-max coldness) / √d_head (6); the puzzle's: its symbol s = 20
    assert ex.score_gap(m["hist"], "abca") == pytest.approx(100 / np.sqrt(6))
    assert ex.score_gap(m["p18"], "abca") == pytest.approx(20)


# --- frac_prevs vs puzzles 03 and 19 -----------------------------------------------------------------
@pytest.mark.parametrize("key, puzzle, inputs", [("vowels", "p03", "VOWEL_INPUTS"), ("parens", "p19", "PAREN_INPUTS")])
def test_frac_prevs_is_uniform_over_the_tokens_so_far_with_bos_left_out_as_in_the_puzzle(ex, m, key, puzzle, inputs):
    for tokens in getattr(ex, inputs):
        tracr = ex.attention(m[key], tokens, 1, 0)  # [T+1, T+1]: BOS at 0
        mine = ex.attention(m[puzzle], tokens)  # [T, T]: puzzles 03 and 19 have no BOS
        assert ex.bos_share(m[key], tracr) < TOL  # BOS only wins where no key is picked: at BOS itself
        assert ex.bos_share(m[key], tracr) > 0  # … but its half-strength score still leaks a little
        assert np.abs(ex.on_tokens(m[key], tracr) - prefix_uniform(len(tokens))).max() < TOL
        assert np.abs(mine - prefix_uniform(len(tokens))).max() < TOL


def test_frac_prevs_reads_positions_where_puzzle_03_reads_nothing(ex, m):
    tracr, mine = ex.reads(m["vowels"], 1, 0), ex.reads(m["p03"])
    positions = {f"indices:{i}" for i in range(ex.MAX_SEQ_LEN)}
    assert set(tracr.query) == positions | {"one"} and set(tracr.key) == positions | {"tokens:compiler_bos"}
    assert mine.query == mine.key == ()  # W_Q = W_K = 0: every score equal, so the causal mask alone shapes it
    assert ex.score_gap(m["vowels"], "abcce", 1, 0) == pytest.approx(50 / np.sqrt(10))  # picked 100 vs BOS 50
    assert ex.score_gap(m["p03"], "abcce") == 0
    # tracr's value reads what its MLP 0 wrote (token is a vowel, as a number); the puzzle's the embedding's vowel
    (map_name,) = tracr.value
    assert ex.mlp_feeds(m["vowels"], 1) == {0: (map_name,)} and mine.value == ("vowel",)


def test_frac_prevs_of_vowels_is_puzzle_03s_result_and_of_opens_gives_puzzle_19s_balance(ex, m):
    assert 1 - TOL < ex.result(m["vowels"], "abcce", 1, 0)[0] < 1  # BOS's e^−15.8 leak: 0.99999986, not 1
    for tokens in ex.VOWEL_INPUTS:
        assert np.abs(ex.result(m["vowels"], tokens, 1, 0) - ex.result(m["p03"], tokens)).max() < TOL
    for tokens in ex.PAREN_INPUTS:
        opens = ex.result(m["parens"], tokens, 1, 0)  # opens / (i + 1)
        bal = ex.result(m["p19"], tokens)  # (opens − closes) / (i + 1), in one head: W_V reads open − close
        assert np.abs(bal - (2 * opens - 1)).max() < TOL
    assert set(ex.reads(m["p19"]).value) == {"open", "close"} and ex.reads(m["p19"]).writes == ("bal",)


def test_the_two_layer_models_compose_through_their_mlp_not_head_to_head(ex, m):
    from circuits import analysis as A

    assert A.composition_scores(m["parens"]) == []  # one head: no pair to score
    scores = A.composition_scores(m["p19"])
    assert [(c.kind, c.earlier, c.later) for c in scores] == [("V", "0.0", "1.0")]
    assert scores[0].score == 0  # head 1.0 reads neg; head 0.0 writes bal
    assert ex.mlp_feeds(m["p19"], 1) == {0: ("neg",)}
    (map_name,) = ex.reads(m["parens"], 1, 0).value
    assert ex.mlp_feeds(m["parens"], 1) == {0: (map_name,)}


# --- the printed report ------------------------------------------------------------------------------
def test_the_report_fits_80_columns_and_says_what_the_docs_quote(ex, m):
    out = io.StringIO()
    ex.report(out, m)
    text = out.getvalue()
    assert max(len(line) for line in text.splitlines()) <= 80
    for line in (
        "  score gap    40.8 (largest − smallest visible score on 'abca')",
        "  score gap    20.0 (largest − smallest visible score on 'abca')",
        "  result       0.5 0.5 0.5 0.333 (on 'abca', one per token)",
        "  result       1 0.5 0.333 0.25 0.4 (on 'abcce', one per token)",
        "  result       1 0 -0.333 0 (on '())(', one per token)",
        "  head 1.0's value reads neg, which MLP 0 writes",
    ):
        assert line in text.splitlines()
    docs = (EXAMPLE.parents[1] / "docs" / "tracr.md").read_text()
    for line in ("score gap    40.8", "score gap    20.0", "0.5 0.5 0.5 0.333", "1 0 -0.333 0"):
        assert line in docs


def test_without_tracr_the_example_is_one_line(ex, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "tracr", None)  # import tracr now raises ImportError
    assert ex.main([]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err == 'tracr_side_by_side.py: this example needs tracr: pip install -e ".[tracr]"\n'
