"""Circuit analysis: factored circuits, QK/OV tables, composition beside baselines, virtual heads, paths, the report."""

import io
import json
import re
from pathlib import Path

import numpy as np
import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

import circuits as C
from circuits import MLP, CircuitError, Head, Layer, LayerNorm, Model, Vocab
from circuits import analysis as A
from circuits.analysis.factored import FactoredMatrix
from circuits.cli import analyze_command
from circuits.display import render as R


# --- models that mirror the puzzles --------------------------------------------------------------
def virtual_head_model(read_from_head1=8, beta=None):
    """Seed 003, exercise 1: 16-dim residual, 4-dim heads, two previous-token heads.

    Head 0.0 copies dims 0-3 to 8-11; head 1.0 copies dims 4, 5, 6 and `read_from_head1`
    (8: a dimension head 0.0 writes) to 12-15. `beta` replaces that last 1 by a symbol.
    """
    d = 16
    W_E = np.zeros((d, 7))
    W_E[:7] = np.eye(7)
    W_V1, W_O1 = np.zeros((4, d)), np.zeros((d, 4))
    W_V1[range(4), range(4)] = 1
    W_O1[range(8, 12), range(4)] = 1
    W_V2, W_O2 = np.zeros((4, d), dtype=object), np.zeros((d, 4))
    W_V2[range(4), [4, 5, 6, read_from_head1]] = 1
    params = None
    if beta is not None:
        W_V2[3, read_from_head1] = sympy.Symbol("beta")
        params = {"beta": beta}
    W_O2[range(12, 16), range(4)] = 1
    W_U = np.zeros((7, d))
    W_U[:, 12:16] = np.arange(28).reshape(7, 4) % 3 - 1
    return Model(
        Vocab.chars_of("abcdefg"),
        W_E,
        layers=[[Head(W_V=W_V1, W_O=W_O1, pattern="previous")], [Head(W_V=W_V2, W_O=W_O2, pattern="previous")]],
        W_U=W_U,
        residual=[f"d{i}" for i in range(d)],
        n_ctx=10,
        params=params,
        name="virtual head",
    )


FREQS, MAGS = (0.3, 0.9), (1.0, 0.5)


def induction_model(n_ctx=12, key_reads="prev", query_rotation=True, scale=60.0):
    """Seed 003, exercises 2(c) and 3: a previous-token head from sinusoidal positions (W_Q a rotation of W_K)
    writes the previous token's content into prev:*, and an induction head whose W_K reads prev:*."""
    resid = C.Basis(C.names("tok", 6) + C.sinusoidal_names(2) + C.names("prev", 6) + C.names("out", 6))
    d = len(resid)
    W_E = C.blank(resid, list("abcdef"))
    W_E["tok", :] = np.eye(6)
    W_pos = np.zeros((d, n_ctx))
    W_pos[6:10] = C.sinusoidal(n_ctx, FREQS, MAGS)
    rows = lambda group: np.eye(d)[resid.index(group)]  # noqa: E731  [k, d_model] projection onto a group
    R = np.zeros((4, 4))
    R[:2, :2], R[2:, 2:] = C.rotation(-FREQS[0]), C.rotation(-FREQS[1])
    pos = np.vstack([rows("cos:0"), rows("sin:0"), rows("cos:1"), rows("sin:1")])
    previous = Head(
        W_Q=(R if query_rotation else np.eye(4)) @ pos, W_K=pos, W_V=rows("tok"), W_O=rows("prev").T, scale=scale
    )
    induction = Head(W_Q=rows("tok"), W_K=rows(key_reads), W_V=rows("tok"), W_O=rows("out").T, scale=scale)
    return Model(
        Vocab.chars_of("abcdef"),
        W_E,
        W_pos=W_pos,
        layers=[[previous], [induction]],
        W_U=rows("out"),
        residual=resid,
        name="induction",
    )


def random_model(seed=0, d=12, n_vocab=7, n_heads=(2, 2), d_head=3, n_ctx=10, bias=False, mlp=False, ln=False):
    rng = np.random.default_rng(seed)
    r = lambda *s: rng.normal(size=s)  # noqa: E731
    layers = [
        Layer(
            heads=[
                Head(
                    W_Q=r(d_head, d),
                    W_K=r(d_head, d),
                    W_V=r(d_head, d),
                    W_O=r(d, d_head),
                    b_V=r(d_head) if bias else None,
                )
                for _ in range(n)
            ],
            b_O=r(d) if bias else None,
            mlp=MLP(r(2 * d, d), r(d, 2 * d)) if mlp else None,
            ln_attn=LayerNorm() if ln else None,
        )
        for n in n_heads
    ]
    return Model(
        Vocab.numbered(n_vocab),
        r(d, n_vocab),
        W_pos=r(d, n_ctx),
        layers=layers,
        W_U=r(n_vocab, d),
        b_U=r(n_vocab) if bias else None,
        qk_multiplier="1/sqrt(d_head)",
        name=f"random {seed}",
    )


# --- FactoredMatrix equals its dense product -----------------------------------------------------
def factors(draw, m=None, n=None):
    m = draw(st.integers(1, 7)) if m is None else m
    r = draw(st.integers(0, 5))
    n = draw(st.integers(1, 7)) if n is None else n
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    return FactoredMatrix(rng.normal(size=(m, r)), rng.normal(size=(r, n)))


@st.composite
def factored(draw, square=False):
    m = draw(st.integers(1, 7))
    return factors(draw, m, m if square else None)


@given(factored())
def test_factored_results_equal_the_dense_ones(f):
    dense = f.A @ f.B
    np.testing.assert_allclose(f.AB, dense)
    np.testing.assert_allclose(np.asarray(f), dense)
    np.testing.assert_allclose(f.T.AB, dense.T)
    U, S, Vh = f.svd()
    np.testing.assert_allclose(U @ np.diag(S) @ Vh, dense, atol=1e-10)
    np.testing.assert_allclose(U.T @ U, np.eye(len(S)), atol=1e-10)
    dense_S = np.linalg.svd(dense, compute_uv=False)
    np.testing.assert_allclose(S, dense_S[: len(S)], atol=1e-10)
    assert np.all(dense_S[len(S) :] < 1e-10)
    assert f.norm() == pytest.approx(np.linalg.norm(dense), abs=1e-10)
    assert f.rank() == np.linalg.matrix_rank(dense)


@given(factored(), st.integers(1, 5), st.integers(0, 2**16))
def test_factored_products_equal_the_dense_ones(f, p, seed):
    rng = np.random.default_rng(seed)
    m, n = f.shape
    right, left = rng.normal(size=(n, p)), rng.normal(size=(p, m))
    other = FactoredMatrix(rng.normal(size=(n, 2)), rng.normal(size=(2, p)))
    np.testing.assert_allclose((f @ right).AB, f.AB @ right, atol=1e-10)
    np.testing.assert_allclose((left @ f).AB, left @ f.AB, atol=1e-10)
    np.testing.assert_allclose((f @ other).AB, f.AB @ other.AB, atol=1e-10)
    np.testing.assert_allclose(f @ right[:, 0], f.AB @ right[:, 0], atol=1e-10)
    np.testing.assert_allclose((f + f * 2.0 - f).AB, 2 * f.AB, atol=1e-10)


@given(factored(square=True))
def test_eigenvalues_from_the_small_product_match_the_dense_ones(f):
    lam, dense = f.eigenvalues(), np.linalg.eigvals(f.AB)
    assert len(lam) == f.mdim
    for k in (1, 2, 3):  # equal power sums: the same non-zero eigenvalues, only zeros added or dropped
        assert np.sum(lam**k) == pytest.approx(np.sum(dense**k), abs=1e-6 * (1 + np.sum(np.abs(dense)) ** k))


def test_eigenvalues_of_a_known_rotation_and_projection():
    f = FactoredMatrix(np.eye(4)[:, :2], C.rotation(0.5) @ np.eye(4)[:2])  # a rotation in the first plane of R^4
    np.testing.assert_allclose(sorted(f.eigenvalues(), key=lambda z: z.imag), [np.exp(-0.5j), np.exp(0.5j)])
    assert f.rank() == 2 and f.norm() == pytest.approx(np.sqrt(2))


def test_factored_shape_errors_name_both_shapes():
    with pytest.raises(CircuitError, match=r"A has shape \(3, 2\) but B has shape \(3, 4\)"):
        FactoredMatrix(np.zeros((3, 2)), np.zeros((3, 4)))
    f = FactoredMatrix(np.ones((3, 2)), np.ones((2, 4)))
    with pytest.raises(CircuitError, match=r"3 × 4 factored matrix by one with 3 rows"):
        f @ np.ones((3, 3))
    with pytest.raises(CircuitError, match="BA needs a square product; this one is 3 × 4"):
        f.eigenvalues()
    with pytest.raises(CircuitError, match="cannot add"):
        f + f.T


def test_a_zero_rank_factorisation_is_the_zero_matrix():
    f = FactoredMatrix(np.zeros((5, 0)), np.zeros((0, 5)))
    assert f.norm() == 0 and f.rank() == 0 and f.eigenvalues().size == 0 and f.AB.shape == (5, 5)


# --- per-head circuits and tables ----------------------------------------------------------------
def test_circuits_and_tables_equal_the_dense_formulas():
    model = random_model(1)
    for h in model.heads():
        np.testing.assert_allclose(A.qk_circuit(h).AB, h.W_QK)
        np.testing.assert_allclose(A.ov_circuit(h).AB, h.W_OV)
        np.testing.assert_allclose(A.token_table(model, h), model.W_E.T @ h.W_QK @ model.W_E, atol=1e-10)
        np.testing.assert_allclose(A.position_table(model, h), model.W_pos.T @ h.W_QK @ model.W_pos, atol=1e-10)
        np.testing.assert_allclose(A.full_ov(model, h).AB, model.W_U @ h.W_OV @ model.W_E, atol=1e-10)
        lam = np.linalg.eigvals(model.W_U @ h.W_OV @ model.W_E)
        assert A.copying_score(model, h) == pytest.approx(np.sum(lam.real) / np.sum(np.abs(lam)))


def test_heads_are_found_by_tuple_name_or_weights():
    model = random_model(1)
    h = model.head(1, 0)
    assert A.get_head(model, (1, 0)) is h and A.get_head(model, "1.0") is h and A.get_head(model, h) is h
    with pytest.raises(CircuitError, match="there is no layer 2"):
        A.get_head(model, "2.0")
    with pytest.raises(CircuitError, match="'one' is not of the form 'layer.index'"):
        A.get_head(model, "one")


def test_previous_token_head_position_table_peaks_at_i_minus_1():
    model = induction_model()
    table = A.position_table(model, (0, 0))
    np.testing.assert_array_equal(A.position_peaks(table)[1:], np.arange(model.n_ctx - 1))
    assert A.peak_offset(table) == -1


def test_position_peak_check_rejects_a_current_token_head():
    """Exercise 2(b)'s head (W_Q = W_K, no rotation) attends to itself: the same check finds offset 0."""
    table = A.position_table(induction_model(query_rotation=False), (0, 0))
    assert A.peak_offset(table) == 0
    assert not np.array_equal(A.position_peaks(table)[1:], np.arange(table.shape[0] - 1))


def test_a_flat_position_table_has_no_peak():
    assert A.peak_offset(np.zeros((6, 6))) is None


def test_copying_score_is_plus_one_for_copying_minus_one_for_suppressing():
    model = induction_model()
    assert A.copying_score(model, (1, 0)) == pytest.approx(1.0)
    flipped = Model(
        model.vocab,
        model.W_E,
        W_pos=model.W_pos,
        layers=[[h.source for h in b.heads] for b in model.blocks],
        W_U=-model.W_U,
        residual=model.residual,
    )
    assert A.copying_score(flipped, (1, 0)) == pytest.approx(-1.0)
    assert A.copying_score(model, (0, 0)) == 0.0  # writes prev:*, which W_U never reads: neither copies nor suppresses


def test_tables_say_what_is_missing():
    model = virtual_head_model()
    with pytest.raises(CircuitError, match="position table of head 0.0 needs W_pos"):
        A.position_table(model, (0, 0))
    bare = Model(model.vocab, model.W_E, layers=[[h.source for h in b.heads] for b in model.blocks])
    with pytest.raises(CircuitError, match="full OV circuit of head 1.0 needs W_U"):
        A.full_ov(bare, (1, 0))
    wide = Model(
        model.vocab, model.W_E, layers=[[h.source for h in b.heads] for b in model.blocks], W_U=np.ones((3, 16))
    )
    with pytest.raises(CircuitError, match="W_U has 3 rows but the vocabulary has 7 tokens"):
        A.copying_score(wide, (1, 0))


# --- composition beside its baseline -------------------------------------------------------------
def scores_by_kind(model):
    return {(c.kind, c.earlier, c.later): c for c in A.composition_scores(model)}


def test_k_composition_of_the_induction_pair_is_far_above_its_baseline():
    scores = scores_by_kind(induction_model())
    k = scores["K", "0.0", "1.0"]
    assert k.score == pytest.approx(1 / np.sqrt(6))  # a rank-6 isometry chain: the most a rank-6 pair can score
    assert k.z > 4 and k.score > 1.5 * k.baseline
    for kind in "QV":  # unrelated: head 1.0's query and value read tok:*, head 0.0 writes prev:*
        c = scores[kind, "0.0", "1.0"]
        assert c.score < c.baseline and c.z < 0


def test_k_composition_check_rejects_an_induction_head_that_keys_on_the_token():
    k = scores_by_kind(induction_model(key_reads="tok"))["K", "0.0", "1.0"]
    assert k.score == pytest.approx(0.0) and k.z < 0


def mixed_model() -> Model:
    """Heads of different d_head (some wider than d_model), a head that writes nothing, three layers."""
    rng = np.random.default_rng(5)
    r = lambda *s: rng.normal(size=s)  # noqa: E731
    d = 6
    layers = [
        [Head(W_Q=r(2, d), W_K=r(2, d), W_V=r(3, d), W_O=r(d, 3)), Head(W_Q=r(8, d), W_K=r(8, d), W_V=r(1, d))],
        [Head(W_Q=r(4, d), W_K=r(4, d), W_V=r(9, d), W_O=r(d, 9))],
        [Head(W_Q=r(1, d), W_K=r(1, d), W_V=r(2, d), W_O=r(d, 2)), Head(W_V=r(2, d), W_O=r(d, 2), pattern="first")],
    ]
    return Model(Vocab.numbered(4), r(d, 4), layers=layers)


@pytest.mark.parametrize("model", [random_model(2), mixed_model()], ids=["random", "mixed d_head"])
def test_composition_scores_equal_the_dense_formula_and_use_matched_baselines(model):
    """TransformerLens's formula on the dense d_model × d_model matrices, to 1e-12."""
    scores = A.composition_scores(model)
    expected = set()
    for h1 in model.heads():
        for h2 in model.heads():
            for kind in "QKV":
                left = {"Q": h2.W_QK.T, "K": h2.W_QK, "V": h2.W_OV}[kind]
                if (
                    h2.layer > h1.layer
                    and (kind == "V" or h2.pattern is None)
                    and np.linalg.norm(left) * np.linalg.norm(h1.W_OV) > 0
                ):
                    expected.add((kind, A.head_name(h1), A.head_name(h2)))
    assert {(c.kind, c.earlier, c.later) for c in scores} == expected
    for c in scores:
        h1, h2 = A.get_head(model, c.earlier), A.get_head(model, c.later)
        left = {"Q": h2.W_QK.T, "K": h2.W_QK, "V": h2.W_OV}[c.kind]
        dense = np.linalg.norm(left @ h1.W_OV) / (np.linalg.norm(left) * np.linalg.norm(h1.W_OV))
        assert abs(c.score - dense) < 1e-12
        ranks = (np.linalg.matrix_rank(left), np.linalg.matrix_rank(h1.W_OV))
        assert (c.baseline, c.baseline_std) == A.random_baseline(model.d_model, *ranks)


def test_random_heads_compose_near_the_baseline():
    """The baseline is calibrated: Gaussian heads of the same rank score within a few sd of it."""
    zs = [c.z for seed in range(6) for c in A.composition_scores(random_model(seed, d=16, d_head=4))]
    assert len(zs) == 6 * 4 * 3
    assert max(abs(z) for z in zs) < 3.5
    assert abs(np.mean(zs)) < 0.5


def test_the_baseline_is_fixed_by_its_seed():
    a = A.random_baseline.__wrapped__(16, 4, 4, 50)
    assert a == A.random_baseline.__wrapped__(16, 4, 4, 50)
    assert a != A.random_baseline.__wrapped__(16, 4, 4, 50, seed=1)
    assert 0.15 < a[0] < 0.35  # ≈ 1/sqrt(d_model) for random directions


def test_a_virtual_head_through_one_of_many_dimensions_stands_out_where_composition_cannot_tell():
    """Puzzle 05's shape: each head moves 4 directions, one of which the next head passes on in full."""
    model = virtual_head_model()
    (v,) = [c for c in A.composition_scores(model) if c.kind == "V"]
    (strength,) = A.virtual_strengths(model)
    assert strength.kind == "virtual" and strength.verdict == "above" and strength.score == pytest.approx(1.0)
    assert v.verdict == "near" or v.score < strength.score
    rng = np.random.default_rng(0)  # random heads of the same ranks sit near the baseline
    r = lambda *s: rng.normal(size=s)  # noqa: E731
    d = model.d_model
    random = Model(
        model.vocab, model.W_E, layers=[[Head(W_V=r(4, d), W_O=r(d, 4), pattern="previous")] for _ in range(2)]
    )
    assert A.virtual_strengths(random)[0].verdict == "near"
    summary = A.analyze(model)
    assert {"kind": "virtual", "earlier": "0.0", "later": "1.0"}.items() <= summary["composition"][-1].items()


def test_fixed_pattern_heads_have_no_q_or_k_composition():
    assert {c.kind for c in A.composition_scores(virtual_head_model())} == {"V"}
    with pytest.raises(CircuitError, match="head 1.0 has a fixed pattern, so it has no K-composition"):
        A.exact_composition(virtual_head_model(), "K", "0.0", "1.0")
    with pytest.raises(CircuitError, match="composition kind 'X' is not one of Q, K, V"):
        A.exact_composition(induction_model(), "X", "0.0", "1.0")


def test_exact_k_composition_of_the_induction_pair():
    m = A.exact_composition(induction_model(), "K", "0.0", "1.0")
    expected = sympy.zeros(22, 22)
    for i in range(6):
        expected[i, i] = 1  # query tok:i keys on a position whose previous token was tok:i
    assert m == expected


# --- virtual heads (seed 003, exercise 1) -------------------------------------------------------
def unit(i, j, d=16):
    m = sympy.zeros(d, d)
    m[i, j] = 1
    return m


def test_virtual_head_product_equals_its_exact_expected_matrix():
    model = virtual_head_model()
    W_net1, W_net2 = model.head(0, 0).exact("W_OV"), model.head(1, 0).exact("W_OV")
    assert W_net1 == sum((unit(8 + i, i) for i in range(4)), sympy.zeros(16, 16))
    assert W_net2 == unit(12, 4) + unit(13, 5) + unit(14, 6) + unit(15, 8)
    two_token_copy = A.exact_virtual_ov(model, "0.0", "1.0")
    assert two_token_copy == unit(15, 0)  # dim 0 of the token two back lands in dim 15
    one_token_copy = W_net2 * sympy.eye(16) + sympy.eye(16) * W_net1
    assert one_token_copy == W_net1 + W_net2 and sum(one_token_copy) == 8
    np.testing.assert_allclose(A.virtual_ov(model, (0, 0), (1, 0)).AB, np.array(two_token_copy, dtype=float))


def test_virtual_head_check_rejects_a_head_reading_an_untouched_dimension():
    model = virtual_head_model(read_from_head1=7)
    assert A.exact_virtual_ov(model, "0.0", "1.0") != unit(15, 0)
    assert A.virtual_ov(model, "0.0", "1.0").norm() == 0


def test_virtual_head_stays_symbolic():
    model = virtual_head_model(beta=2)
    beta = sympy.Symbol("beta")
    assert A.exact_virtual_ov(model, "0.0", "1.0") == beta * unit(15, 0)
    assert A.exact_virtual_ov(model, "0.0", "1.0", bind=True) == 2 * unit(15, 0)
    text = R.to_text(
        R.exact_table(A.exact_virtual_ov(model, "0.0", "1.0"), model.residual.labels, model.residual.labels)
    )
    assert "beta" in text and "d15" in text and "d3" not in text  # zero rows and columns hidden


def test_virtual_pattern_of_two_previous_token_heads_looks_two_back():
    trace = virtual_head_model().run("abcdefg")
    pattern = A.virtual_pattern(trace, "0.0", "1.0")[0]  # [query, key]
    assert [int(np.argmax(row)) for row in pattern] == [0, 0, 0, 1, 2, 3, 4]
    with pytest.raises(CircuitError, match="head 0.0 is not after head 1.0"):
        A.virtual_pattern(trace, "1.0", "0.0")


# --- exact tables ----------------------------------------------------------------------------------
def test_exact_tables_equal_the_numbers():
    model = induction_model()
    np.testing.assert_allclose(np.array(A.exact_full_ov(model, (1, 0)), dtype=float), A.full_ov(model, (1, 0)).AB)
    assert A.exact_full_ov(model, (1, 0)) == sympy.eye(6)
    assert A.exact_token_table(model, (1, 0)) == sympy.zeros(6, 6)  # keys read prev:*, which no token embeds
    assert A.is_exact(model.head(1, 0)) and not A.is_exact(model.head(0, 0))  # cos(0.3) is not a short decimal


# --- the path view ---------------------------------------------------------------------------------
@settings(max_examples=15)
@given(st.integers(0, 1000), st.lists(st.integers(0, 3), min_size=1, max_size=3), st.booleans())
def test_paths_add_back_up_to_the_logits(seed, n_heads, bias):
    model = random_model(seed, n_heads=tuple(n_heads), bias=bias)
    trace = model.run_ids(np.random.default_rng(seed).integers(0, 7, size=(2, 6)))
    paths = A.path_decomposition(trace)
    np.testing.assert_allclose(sum(paths.values()), trace.logits, atol=1e-9)
    n_bias = (len(n_heads) + 1) * bias  # "bias l" per layer and b_U; each bias also runs through later heads
    assert len(paths) >= A.path_count(model) + n_bias


def test_each_path_is_the_product_it_names():
    model = virtual_head_model()
    trace = model.run(["abcdefg", "gfedcba"])
    paths = A.path_decomposition(trace)
    assert list(paths) == ["direct", "0.0", "1.0", "0.0 → 1.0"]
    x = trace.embed + trace.pos_embed
    A1, A2 = trace.pattern(0, 0), trace.pattern(1, 0)
    h1, h2 = model.head(0, 0), model.head(1, 0)
    np.testing.assert_allclose(paths["0.0 → 1.0"], A2 @ A1 @ x @ (h2.W_OV @ h1.W_OV).T @ model.W_U.T)
    np.testing.assert_allclose(paths["1.0"], A2 @ x @ h2.W_OV.T @ model.W_U.T)
    with pytest.raises(AssertionError):  # leaving a path out does not add up
        np.testing.assert_allclose(sum(v for k, v in paths.items() if k != "1.0"), trace.logits)


def test_the_path_view_refuses_mlps_and_layernorm():
    with pytest.raises(CircuitError, match="attention-only model, but layer 0 has an MLP"):
        A.path_decomposition(random_model(mlp=True).run_ids(np.zeros((1, 3), dtype=int)))
    with pytest.raises(CircuitError, match="without LayerNorm, but layer 0 has one"):
        A.path_decomposition(random_model(ln=True).run_ids(np.zeros((1, 3), dtype=int)))


# --- the summary, the report, the command -----------------------------------------------------------
@pytest.mark.parametrize(
    "make", [virtual_head_model, induction_model, lambda: random_model(3, bias=True), lambda: random_model(4, mlp=True)]
)
def test_the_summary_round_trips_through_json(make):
    model = make()
    summary = A.analyze(model)
    text = json.dumps(summary, allow_nan=False)
    assert json.loads(text) == summary
    assert [h["name"] for h in summary["heads"]] == [A.head_name(h) for h in model.heads()]


def test_the_summary_holds_the_known_structure():
    s = A.analyze(induction_model())
    prev, ind = s["heads"]
    assert prev["position_offset"] == -1 and ind["copying_score"] == pytest.approx(1.0)
    assert ind["exact"]["W_QK"]["rows"] == [f"tok:{i}" for i in range(6)]
    assert ind["exact"]["W_QK"]["cols"] == [f"prev:{i}" for i in range(6)]
    k = next(c for c in s["composition"] if c["kind"] == "K")
    assert k["z"] > 4
    assert set(s["paths"]) == {"direct", "0.0", "1.0", "0.0 → 1.0"}
    assert A.analyze(random_model(4, mlp=True))["paths"] is None


def test_the_report_reads_without_colour():
    text = R.to_text(R.analysis_report(A.analyze(induction_model())))
    assert "\x1b" not in text
    for needle in (
        "head 0.0",
        "position table peaks at i-1",
        "copying score +1.000",
        "prev:5",
        "above",
        "below",
        "query ↓ key →",
        "0.0 → 1.0",
    ):
        assert needle in text, needle
    assert re.search(r"\n K +0\.0 → 1\.0 +0\.408", text)
    rows = {line.split()[0]: line for line in text.splitlines() if line.strip().startswith("tok:")}
    assert rows["tok:2"].split()[3] == "1"  # exact W_QK of head 1.0: tok:2 keys on prev:2


def test_circuit_table_marks_each_row_peak_and_hides_the_future():
    text = R.to_text(
        R.circuit_table(
            [[1, 0, 0], [2, 5, 0], [0, 3, 1]], ["q0", "q1", "q2"], ["k0", "k1", "k2"], title="t", causal=True
        )
    )
    lines = {l.split()[0]: l.split()[1:] for l in text.splitlines() if l.strip().startswith("q")}
    assert lines == {"q0": ["1", "·", "·"], "q1": ["2", "5*", "·"], "q2": ["0", "3*", "1"]}
    sparse = R.to_text(R.circuit_table(np.diag([0.0, 2.0, 0.0]), ["a", "b", "c"], ["x", "y", "z"]))
    assert "2 zero row(s), 2 zero column(s) hidden" in sparse and " a " not in sparse


def test_exact_table_prints_fractions_and_roots_exactly():
    M = sympy.Matrix([[sympy.Rational(1, 2), 0], [0, sympy.sqrt(2) / 2]])
    text = R.to_text(R.exact_table(M, ["u", "v"], ["x", "y"]))
    assert "1/2" in text and "sqrt(2)/2" in text and "0.5" not in text


def test_analyze_command_prints_json_or_the_report_and_writes_html(tmp_path):
    model = induction_model()
    out = io.StringIO()
    assert analyze_command(model, as_json=True, out=out) == 0
    assert json.loads(out.getvalue())["heads"][1]["copying_score"] == pytest.approx(1.0)
    out = io.StringIO()
    assert analyze_command(model, out=out) == 0
    assert "position table peaks at i-1" in " ".join(out.getvalue().split())  # wrapped to the width
    out, page = io.StringIO(), tmp_path / "a.html"
    assert analyze_command(model, html=str(page), out=out) == 0
    assert out.getvalue() == f"wrote {page}\n"  # the page is the report: one line says where it is
    html = page.read_text()
    assert html.startswith("<!DOCTYPE html>") and "http" not in html.lower()


# --- the reference solutions, through the loader -----------------------------------------------------
ROOT = Path(__file__).resolve().parent.parent


def reference_solutions():
    try:
        from circuits.checking.loader import puzzle_files
    except ImportError:
        return []
    from circuits.checking.loader import load

    return [p for p in puzzle_files(solutions=True, root=ROOT) if load(p).puzzle.build is not None]  # not code puzzles


def solution_model(slug):
    """The model of a reference solution and its example inputs; skipped while that solution is not written yet."""
    from circuits.checking import loader, pipeline

    try:
        attempt = pipeline.load_puzzle(str(loader.find(slug, solutions=True, root=ROOT)), solution=True)
    except CircuitError as e:
        pytest.skip(str(e))
    return attempt.model(), list(getattr(attempt.puzzle, "examples", None) or [])[:2] or None


@pytest.mark.parametrize("path", reference_solutions(), ids=lambda p: p.stem)
def test_the_analysis_runs_on_every_reference_solution(path):
    from circuits.display.html import analysis_html

    model, inputs = solution_model(str(path))
    summary = A.analyze(model, inputs=inputs)
    assert json.loads(json.dumps(summary, allow_nan=False)) == summary
    assert "\x1b" not in R.to_text(R.analysis_report(summary))
    assert "http" not in analysis_html(model, summary=summary).lower()


def test_reference_previous_token_head_peaks_at_i_minus_1():
    model, inputs = solution_model("previous_token")
    heads = A.analyze(model, inputs=inputs)["heads"]
    assert any(h["position_offset"] == -1 or h["fixed_pattern"] == "previous" for h in heads)


def test_reference_k_composition_pair_is_far_above_its_baseline():
    model, _ = solution_model("induction_k_composition")
    scores = A.composition_scores(model)
    best = max(scores, key=lambda c: c.z)
    assert best.kind == "K" and best.z > 3


def test_reference_virtual_head_product_is_exact():
    model, _ = solution_model("virtual_head")
    pairs = [(h1, h2) for h1 in model.heads() for h2 in model.heads() if h2.layer > h1.layer]
    products = {(A.head_name(h1), A.head_name(h2)): A.virtual_ov(model, h1, h2) for h1, h2 in pairs}
    assert any(m.norm() > 0 for m in products.values())
    for (a, b), m in products.items():
        if A.is_exact(model.head(*map(int, a.split(".")))) and A.is_exact(model.head(*map(int, b.split(".")))):
            np.testing.assert_allclose(
                np.array(A.exact_virtual_ov(model, a, b, bind=True), dtype=float), m.AB, atol=1e-12
            )


def test_the_worksheets_claims_about_composition_hold_for_the_reference_solutions():
    """07 says its K-composition sits above random (0.500 vs 0.264 ± 0.062); 05's virtual head stands out."""
    from circuits.checking.loader import load

    seven = load(ROOT / "solutions" / "07_induction_k_composition.py")
    (k,) = [c for c in A.composition_scores(seven.model()) if c.kind == "K"]
    assert (round(k.score, 3), round(k.baseline, 3), round(k.baseline_std, 3)) == (0.5, 0.264, 0.062)
    assert k.verdict == "above" and round(k.z, 1) == 3.8
    five = load(ROOT / "solutions" / "05_virtual_head.py")
    (v,) = A.virtual_strengths(five.model())
    assert v.verdict == "above" and v.score == pytest.approx(1.0)
