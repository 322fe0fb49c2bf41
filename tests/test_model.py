"""The model: the seeds' worked tables, seed 001's factored attention, properties, and validation."""

import warnings

import numpy as np
import pytest
import sympy
from hypothesis import given
from hypothesis import strategies as st

import circuits as C
from circuits import MLP, CircuitError, CircuitWarning, Head, Layer, LayerNorm, Model, Vocab

ALPHABET = "abcdefghijklmnopqrstuvwxyz"
VOWELS = set("aeiou")


def vowel_consonant_embedding(extra_rows=0):
    W_E = np.zeros((2 + extra_rows, 26))
    for i, ch in enumerate(ALPHABET):
        W_E[0 if ch in VOWELS else 1, i] = 1
    return W_E


# --- seed 002, problem 1: "abcce" with W_q = [1 1], W_k = [0 5], W_V = I --------------------------------
SEED_ABCCE_PATTERN = [
    [1, 0, 0, 0, 0],
    [0.0067, 0.9933, 0, 0, 0],
    [0.0034, 0.4983, 0.4983, 0, 0],
    [0.0022, 0.3326, 0.3326, 0.3326, 0],
    [0.0022, 0.3318, 0.3318, 0.3318, 0.0022],
]
SEED_ABCCE_OUTPUT = [[1, 0], [0.0067, 0.9933], [0.0034, 0.9966], [0.0022, 0.9978], [0.0045, 0.9955]]

# --- seed 002, problem 2: "cbcce" with W_q = [1 1 0], W_k = [0 0 5], W_V = [[0 1 0], [0 0 0]] --------------
SEED_CBCCE_PATTERN = [
    [1, 0, 0, 0, 0],
    [0.9933, 0.0067, 0, 0, 0],
    [0.9867, 0.0066, 0.0066, 0, 0],
    [0.9802, 0.0066, 0.0066, 0.0066, 0],
    [0.9738, 0.0066, 0.0066, 0.0066, 0.0066],
]
SEED_CBCCE_OUTPUT = [[1, 0], [1, 0], [1, 0], [1, 0], [0.9934, 0]]


def test_seed_002_consonant_table():
    vocab = Vocab.chars_of(ALPHABET)
    model = Model(vocab, vowel_consonant_embedding(), layers=[[Head(W_Q=[[1, 1]], W_K=[[0, 5]], W_V=np.eye(2))]])
    trace = model.run("abcce")
    np.testing.assert_allclose(trace.pattern(0, 0)[0], SEED_ABCCE_PATTERN, atol=5e-5)
    np.testing.assert_allclose(trace.z(0, 0)[0], SEED_ABCCE_OUTPUT, atol=5e-5)


def test_seed_002_first_position_table():
    vocab = Vocab.chars_of(ALPHABET)
    W_P = np.zeros((3, 8))
    W_P[2, 0] = 1
    model = Model(
        vocab,
        vowel_consonant_embedding(1),
        W_pos=W_P,
        layers=[[Head(W_Q=[[1, 1, 0]], W_K=[[0, 0, 5]], W_V=[[0, 1, 0], [0, 0, 0]])]],
    )
    trace = model.run("cbcce")
    np.testing.assert_allclose(trace.pattern(0, 0)[0], SEED_CBCCE_PATTERN, atol=5e-5)
    np.testing.assert_allclose(trace.z(0, 0)[0], SEED_CBCCE_OUTPUT, atol=5e-5)


def test_seed_002_uniform_part_e():
    vocab = Vocab.chars_of(ALPHABET)
    model = Model(vocab, vowel_consonant_embedding(), layers=[[Head(W_Q=[[1, 1]], W_K=[[1, 1]], W_V=np.eye(2))]])
    out = model.run("abcce").z(0, 0)[0]
    np.testing.assert_allclose(out, [[1, 0], [0.5, 0.5], [1 / 3, 2 / 3], [0.25, 0.75], [0.4, 0.6]], atol=1e-12)


# --- a random model to compare against ----------------------------------------------------------------
def random_model(
    seed=0,
    d=8,
    n_vocab=6,
    n_layers=2,
    n_heads=2,
    d_head=3,
    n_ctx=12,
    mlp=True,
    ln=True,
    bias=True,
    scale="1/sqrt(d_head)",
    window=None,
):
    rng = np.random.default_rng(seed)
    r = lambda *s: rng.normal(size=s)  # noqa: E731
    layers = []
    for l in range(n_layers):
        heads = [
            Head(
                W_Q=r(d_head, d),
                W_K=r(d_head, d),
                W_V=r(d_head, d),
                W_O=r(d, d_head),
                b_Q=r(d_head) if bias else None,
                b_K=r(d_head) if bias else None,
                b_V=r(d_head) if bias else None,
                window=window if l % 2 else None,
            )
            for _ in range(n_heads)
        ]
        layers.append(
            Layer(
                heads=heads,
                b_O=r(d) if bias else None,
                mlp=MLP(r(2 * d, d), r(d, 2 * d), r(2 * d), r(d), act="gelu_tanh") if mlp else None,
                ln_attn=LayerNorm(1 + 0.1 * r(d), 0.1 * r(d)) if ln else None,
                ln_mlp=LayerNorm(1 + 0.1 * r(d), 0.1 * r(d)) if ln else None,
            )
        )
    return Model(
        Vocab.numbered(n_vocab),
        r(d, n_vocab),
        W_pos=r(d, n_ctx),
        layers=layers,
        W_U=r(n_vocab, d),
        ln_final=LayerNorm() if ln else None,
        qk_multiplier=scale,
    )


def test_seed_001_factored_attention_and_ov():
    """Attention from x_i^T W_Q^T W_K x_j equals q·k; Σ_h A_h X W_OV,h^T + b_O equals the layer's attention output."""
    model = random_model(seed=1, bias=False, ln=False, mlp=False)
    trace = model.run_ids(np.random.default_rng(2).integers(0, 6, size=(3, 10)))
    for l, block in enumerate(model.blocks):
        X = trace.layers[l].attn_in  # [b, T, d]
        total = 0.0
        for h in block.heads:
            scores = np.einsum("bid,de,bje->bij", X, h.W_QK, X) * h.scale
            A = C.functional.softmax(scores, C.functional.causal_mask(X.shape[1])[None])
            np.testing.assert_allclose(A, trace.pattern(l, h.index), atol=1e-12)
            total = total + A @ X @ h.W_OV.T
        np.testing.assert_allclose(total, trace.layers[l].attn_out, atol=1e-10)


def test_head_out_and_attn_out_add_up():
    model = random_model(seed=3)
    trace = model.run_ids(np.random.default_rng(4).integers(0, 6, size=(2, 7)))
    for l, layer in enumerate(trace.layers):
        summed = sum(trace.head_out(l, h) for h in range(2)) + model.blocks[l].b_O
        np.testing.assert_allclose(summed, layer.attn_out, atol=1e-10)
        np.testing.assert_allclose(layer.head_out.sum(1) + model.blocks[l].b_O, layer.attn_out, atol=1e-10)
        np.testing.assert_allclose(layer.resid_pre + layer.attn_out + layer.mlp_out, layer.resid_post, atol=1e-10)


ids_batches = st.integers(1, 10).flatmap(
    lambda T: st.lists(st.lists(st.integers(0, 5), min_size=T, max_size=T), min_size=1, max_size=4)
)


@given(ids_batches, st.integers(0, 3), st.sampled_from([None, 1, 3]))
def test_pattern_rows_sum_to_one_and_are_causal(batch, seed, window):
    model = random_model(seed=seed, window=window)
    trace = model.run_ids(np.array(batch))
    T = len(batch[0])
    for layer in trace.layers:
        np.testing.assert_allclose(layer.pattern.sum(-1), 1.0, atol=1e-12)
        assert np.all(layer.pattern[..., np.triu_indices(T, 1)[0], np.triu_indices(T, 1)[1]] == 0)
        assert np.isfinite(layer.resid_post).all()


def test_a_large_softmax_computed_in_blocks_equals_it_row_by_row():
    """A pattern too large for one pass is computed a block of rows at a time, in its own array: every number equal
    to the small path's, the careful path's rows (inf, NaN, nothing visible) included."""
    from circuits.model import functional as F

    rng = np.random.default_rng(0)
    T = 40
    x = rng.normal(size=(F._BLOCKED // (T * T) + 7, 2, T, T)) * 30  # [b, h, T, T]: past _BLOCKED numbers
    x[3, 0, 5, 2], x[9, 1, 7, 0], x[20, 0, 11, 4] = np.inf, np.nan, -np.inf
    visible = np.broadcast_to(F.causal_mask(T), x.shape).copy()
    visible[30, 1, 12] = False  # a query that sees nothing: all 0
    visible &= rng.random(x.shape) > 0.2
    whole = F.softmax(x, visible)
    rows = np.concatenate([F.softmax(x[i : i + 1], visible[i : i + 1]) for i in range(len(x))])
    assert whole.tobytes() == rows.tobytes()
    assert np.all(whole[~visible] == 0) and np.all(whole[30, 1, 12] == 0)
    assert (
        whole.tobytes()
        == np.concatenate([F.softmax(x[:, h : h + 1], visible[:, h : h + 1]) for h in (0, 1)], 1).tobytes()
    )


@given(ids_batches, st.integers(0, 9), st.integers(0, 3))
def test_changing_later_tokens_changes_nothing_before(batch, where, seed):
    model = random_model(seed=seed)
    ids = np.array(batch)
    T = ids.shape[1]
    i = where % T
    changed = ids.copy()
    changed[:, i + 1 :] = (changed[:, i + 1 :] + 1) % 6
    a, b = model.run_ids(ids), model.run_ids(changed)
    np.testing.assert_allclose(a.logits[:, : i + 1], b.logits[:, : i + 1], atol=1e-12)


@given(st.lists(st.lists(st.integers(0, 5), min_size=1, max_size=9), min_size=1, max_size=5), st.integers(0, 3))
def test_a_padded_batch_equals_its_strings_one_by_one(seqs, seed):
    model = random_model(seed=seed)
    trace = model.run([np.array(s) for s in seqs])
    for n, s in enumerate(seqs):
        alone = model.run_ids(np.array([s]))
        np.testing.assert_allclose(trace.logits[n, : len(s)], alone.logits[0], atol=1e-10)
        for l in range(model.n_layers):
            np.testing.assert_allclose(
                trace.layers[l].pattern[n, :, : len(s), : len(s)], alone.layers[l].pattern[0], atol=1e-12
            )


@given(st.floats(0.1, 10), st.floats(-3, 3), st.text("abcde", min_size=1, max_size=8))
def test_sympy_weights_give_the_same_numbers(beta, gamma, text):
    b, g = sympy.symbols("beta gamma")
    vocab = Vocab.chars_of("abcde")
    W_E = np.eye(5)[:3] + 0.5
    symbolic = Model(
        vocab,
        W_E,
        layers=[
            [
                Head(
                    W_Q=sympy.Matrix([[b, 0, 1], [0, g, 0]]),
                    W_K=[[1, 0, 0], [0, 1, b]],
                    W_V=[[g, 0, 0]],
                    W_O=sympy.Matrix([[1], [b], [0]]),
                )
            ]
        ],
        params={"beta": beta, g: gamma},
    )
    numeric = Model(
        vocab,
        W_E,
        layers=[
            [
                Head(
                    W_Q=[[beta, 0, 1], [0, gamma, 0]],
                    W_K=[[1, 0, 0], [0, 1, beta]],
                    W_V=[[gamma, 0, 0]],
                    W_O=[[1], [beta], [0]],
                )
            ]
        ],
    )
    a, c = symbolic.run(text), numeric.run(text)
    np.testing.assert_allclose(a.layers[0].pattern, c.layers[0].pattern, atol=1e-12)
    np.testing.assert_allclose(a.resid(), c.resid(), atol=1e-12)


def test_exact_products_stay_symbolic():
    b = sympy.Symbol("beta")
    vocab = Vocab.chars_of("ab")
    model = Model(
        vocab,
        np.eye(2),
        layers=[[Head(W_Q=[[b, 0]], W_K=[[1, 0]], W_V=[[1, 0]], W_O=sympy.Matrix([[0], [b]]))]],
        params={"beta": 2},
    )
    head = model.head(0, 0)
    assert head.exact("W_OV") == sympy.Matrix([[0, 0], [b, 0]])
    assert head.exact("W_QK") == sympy.Matrix([[b, 0], [0, 0]])
    assert head.exact("W_OV", bind=True) == sympy.Matrix([[0, 0], [2, 0]])


def test_named_directions_write_weights_by_name():
    resid = C.Basis(["vowel", "consonant"] + C.names("pos", 3))
    W_Q = C.blank(1, resid)
    W_Q[0, "consonant"] = 1
    W_Q[0, "pos"] = [1, 2, 3]
    assert W_Q[0, 1] == 1 and list(np.asarray(W_Q)[0]) == [0, 1, 1, 2, 3]
    with pytest.raises(CircuitError, match="no direction named 'consonnant'.*did you mean 'consonant'"):
        W_Q[0, "consonnant"] = 1


def test_fixed_patterns():
    vocab = Vocab.chars_of("abc")
    model = Model(
        vocab,
        np.eye(3),
        layers=[[Head(W_V=np.eye(3), W_O=np.eye(3), pattern=p) for p in ("previous", "self", "first", "uniform")]],
    )
    t = model.run("abca")
    assert t.pattern(0, 0)[0].tolist() == [[1, 0, 0, 0], [1, 0, 0, 0], [0, 1, 0, 0], [0, 0, 1, 0]]
    assert t.pattern(0, 1)[0].tolist() == np.eye(4).tolist()
    assert t.pattern(0, 2)[0][:, 0].tolist() == [1, 1, 1, 1]
    np.testing.assert_allclose(t.pattern(0, 3)[0][3], [0.25] * 4)


def test_local_window():
    model = random_model(seed=5, window=2)
    p = model.run_ids(np.zeros((1, 6), dtype=int)).pattern(1, 0)[0]
    assert np.all(p[4, :3] == 0) and p[4, 3] > 0 and p[4, 4] > 0


def test_bos_is_prepended_and_only_allowed_first():
    vocab = Vocab.chars_of("ab", bos="^")
    assert vocab.decode(vocab.encode("ab")) == ["^", "a", "b"]
    with pytest.raises(CircuitError, match=r"BOS token '\^' may only stand at position 0.*position 2"):
        vocab.encode("ab^")


# --- validation: one line, naming the culprit ---------------------------------------------------------
def build(**head):
    vocab = Vocab.chars_of("ab")
    base = dict(W_Q=[[1, 0]], W_K=[[0, 1]], W_V=np.eye(2), W_O=np.eye(2))
    base.update(head)
    return Model(vocab, np.eye(2), W_pos=np.zeros((2, 4)), layers=[[Head(**base)]])


@pytest.mark.parametrize(
    "head, message",
    [
        (dict(W_Q=[[1, 0, 0]]), r"^W_Q of head 0\.0 has shape \(1, 3\) but needs \(d_head, d_model\) = \(\?, 2\)$"),
        (
            dict(W_K=[[1, 0], [0, 1]]),
            r"^W_Q of head 0\.0 has 1 row and W_K of head 0\.0 has 2: they need the same number "
            r"of rows \(d_head\)",
        ),  # neither is blamed alone: either may be the wrong one
        (dict(W_O=np.ones((2, 3))), r"W_O of head 0\.0 has shape \(2, 3\) but needs \(d_model, d_head\) = \(2, 2\)"),
        (dict(W_Q=[1, 0]), r"W_Q of head 0\.0 has shape \(2,\) but needs .*nested lists"),
        (dict(W_V=np.ones((2, 3))), r"W_V of head 0\.0 has shape \(2, 3\) but needs \(d_head, d_model\) = \(\?, 2\)"),
        (dict(W_O=np.ones((1, 2))), r"W_O of head 0\.0 has shape \(1, 2\) but needs \(d_model, d_head\) = \(2, 2\)"),
        (
            dict(W_K=[[0], [1]]),
            r"W_K of head 0\.0 has shape \(2, 1\) but needs \(d_head, d_model\) = \(1, 2\); it looks transposed",
        ),
        (dict(W_Q=[[1, 0], [1]]), r"W_Q of head 0\.0 is ragged"),
        (dict(W_Q=[[np.nan, 0]]), r"W_Q of head 0\.0 has nan at \[0, 0\]; every entry must be finite"),
        (dict(W_K=[[0, np.inf]]), r"W_K of head 0\.0 has inf at \[0, 1\]"),
        (dict(W_V=[["1", 0], [0, 1]]), r"W_V of head 0\.0 has the string '1' at \[0, 0\]"),
        (dict(W_V=[[None, 0], [0, 1]]), r"W_V of head 0\.0 has None at \[0, 0\]"),
        (dict(W_Q=[[10**400, 0]]), r"W_Q of head 0\.0 has an entry too large for float64 at \[0, 0\]"),
        (dict(W_Q=[[1e300, 0]]), r"W_Q of head 0\.0 has 1e\+300 at \[0, 0\]; entries above 1e\+100"),
        (dict(W_Q=[[sympy.Symbol("beta"), 0]]), r"W_Q of head 0\.0 uses symbol beta at \[0, 0\] with no value"),
        (dict(W_Q=None), r"W_Q of head 0\.0 is missing"),
        (dict(pattern="prev"), r"^a Head has pattern='prev'; choose one of previous, self"),
        (dict(window=0), r"^a Head has window = 0; a local window must be a whole number ≥ 1$"),
    ],
)
def test_validation_names_the_culprit(head, message):
    with pytest.raises(CircuitError, match=message) as err:
        build(**head)
    assert "\n" not in str(err.value)


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda: Head(window=2.5), r"^a Head has window = 2\.5; a local window must be a whole number ≥ 1$"),
        (lambda: Head(window=True), r"^a Head has window = True"),
        (
            lambda: Head(pattern="previous", window=1),
            r"^a Head has pattern='previous' with window = 1: the window hides "
            r"the previous position",
        ),
        (lambda: LayerNorm(eps=0), r"^a LayerNorm has eps = 0; it must be a positive number$"),
        (lambda: LayerNorm(eps="1e-5"), r"^a LayerNorm has eps = '1e-5'"),
        (
            lambda: MLP(W_in=[[1]], W_out=[[1]], act="tanh"),
            r"^an MLP has act='tanh'; choose one of relu, gelu, gelu_tanh",
        ),
    ],
)
def test_specs_check_their_own_fields_when_made(make, message):
    with pytest.raises(CircuitError, match=message):
        make()


def test_a_spec_is_frozen_once_checked():
    """Specs check their fields once, when made, and cannot change after: a model never meets an unchecked one.
    A changed head is a new one (dataclasses.replace), checked as it is made."""
    import dataclasses

    head, ln, mlp = Head(W_V=np.eye(2), pattern="self"), LayerNorm(), MLP(W_in=np.eye(2), W_out=np.eye(2))
    layer = Layer(heads=[head])
    for spec, field, value in ((head, "window", 0), (ln, "eps", -1.0), (mlp, "act", "swish"), (layer, "mlp", mlp)):
        with pytest.raises(dataclasses.FrozenInstanceError, match=f"cannot assign to field '{field}'"):
            setattr(spec, field, value)
    assert (head.window, ln.eps, mlp.act, layer.mlp) == (None, 1e-5, "relu", None)
    with pytest.raises(CircuitError, match=r"^a Head has window = 0; a local window"):
        dataclasses.replace(head, window=0)
    with pytest.raises(CircuitError, match=r"^a LayerNorm has eps = -1\.0; it must be a positive number$"):
        dataclasses.replace(ln, eps=-1.0)
    local = dataclasses.replace(head, pattern=None, W_Q=[[1, 0]], W_K=[[0, 1]], window=2)
    model = Model(Vocab.chars_of("ab"), np.eye(2), layers=[[local]])
    assert model.head(0, 0).window == 2 and head.window is None


def test_the_activation_names_specs_accept_are_the_ones_the_forward_pass_has():
    from circuits.model.specs import ACTIVATION_NAMES

    assert set(ACTIVATION_NAMES) == set(C.functional.ACTIVATIONS)


def test_mismatched_d_model_between_parts():
    with pytest.raises(CircuitError, match=r"W_pos has shape \(3, 4\) but needs \(d_model, n_ctx\) = \(2, \?\)"):
        Model(Vocab.chars_of("ab"), np.eye(2), W_pos=np.zeros((3, 4)))
    with pytest.raises(CircuitError, match=r"W_U has shape \(2, 3\) but needs \(n_vocab, d_model\) = \(\?, 2\)"):
        Model(Vocab.chars_of("ab"), np.eye(2), W_U=np.zeros((2, 3)))
    with pytest.raises(CircuitError, match=r"W_E has shape \(2, 3\) but needs \(d_model, n_vocab\) = \(\?, 2\)"):
        Model(Vocab.chars_of("ab"), np.ones((2, 3)))


def test_symbol_bound_to_a_non_number_and_unused_parameter():
    b = sympy.Symbol("beta")
    with pytest.raises(CircuitError, match=r"parameter 'beta' is bound to x \+ y, which is not a number"):
        Model(
            Vocab.chars_of("ab"),
            np.eye(2),
            layers=[[Head(W_Q=[[b, 0]], W_K=[[1, 0]], W_V=np.eye(2))]],
            params={"beta": sympy.Symbol("x") + sympy.Symbol("y")},
        )
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        Model(
            Vocab.chars_of("ab"),
            np.eye(2),
            layers=[[Head(W_Q=[[b, 0]], W_K=[[1, 0]], W_V=np.eye(2))]],
            params={"beta": 1, "gamma": 2},
        )
    assert any(
        issubclass(w.category, CircuitWarning) and "'gamma' is bound in params but no matrix uses it" in str(w.message)
        for w in caught
    )


def test_a_symbolic_entry_bound_before_is_bound_again_under_each_params_as_it_first_was():
    """weights.matrix remembers each entry's number under the params it was bound with: other params, a number of
    another type, or a symbol of the same name with other assumptions get their own binding."""
    from circuits.model.weights import matrix

    s, positive = sympy.Symbol("s"), sympy.Symbol("s", positive=True)
    m = [[s, s / 3], [0, sympy.sqrt(s)]]
    for params, want in (({"s": 30}, 30), ({"s": 12}, 12), ({"s": 30}, 30), ({"s": 2}, 2), ({"s": 2.0}, 2.0)):
        got = matrix(m, "W", (None, None), params=params)
        assert got.tolist() == [[float(want), want / 3], [0.0, float(sympy.sqrt(sympy.sympify(want)).evalf())]]
    with pytest.raises(CircuitError, match="W uses symbol s at"):  # s was bound under {"s": 30}; not by this s
        matrix(m, "W", (None, None), params={positive: 30})
    assert matrix([[positive, 0]], "W", (None, None), params={positive: 30}).tolist() == [[30.0, 0.0]]


def test_input_errors():
    model = build()
    with pytest.raises(CircuitError, match=r"unknown token 'z' at position 1 of 'az'; the vocabulary is 'a' 'b'"):
        model.run("az")
    with pytest.raises(CircuitError, match="input 0 is empty"):
        model.run([""])
    with pytest.raises(CircuitError, match=r"input 1 has 5 tokens but n_ctx is 4 \(W_pos has 4 columns\)"):
        model.run(["ab", "ababa"])


def test_extreme_but_allowed_weights_stay_finite_or_fail_clearly():
    vocab = Vocab.chars_of("ab")
    model = Model(
        vocab, np.eye(2), layers=[[Head(W_Q=[[1e90, 1e90]], W_K=[[1e90, 0]], W_V=np.eye(2) * 1e90, W_O=np.eye(2))]]
    )
    try:
        trace = model.run("abab")
    except CircuitError as e:
        assert "overflowed" in str(e)
    else:
        assert np.isfinite(trace.layers[0].pattern).all()


def test_built_weights_are_read_only_and_c_contiguous():
    """Editing a built weight would leave W_QK and the fused forward pass disagreeing: it must raise.
    C order makes BLAS take one kernel path whatever layout the weights came in (a transposed view here)."""
    W = np.arange(4.0).reshape(2, 2)
    model = Model(Vocab.chars_of("ab"), W.T, layers=[[Head(W_Q=W.T, W_K=W, W_V=W, W_O=W.T)]])
    head = model.head(0, 0)
    arrays = [model.W_E, head.W_Q, head.W_K, head.W_V, head.W_O, head.b_Q, model.blocks[0].W_QKV]
    for a in arrays:
        assert a.flags.c_contiguous and not a.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        head.W_K[0, 1] = 0
    W[0, 0] = 99  # the user's own array stays theirs: building copied it
    assert head.W_K[0, 0] == 0 and W.flags.writeable


@pytest.mark.parametrize(
    "ids, message",
    [
        ([[0, -1]], "token id -1 of input 0 at position 1 is outside the vocabulary (ids 0..1)"),
        ([[0, 1], [2, 0]], "token id 2 of input 1 at position 0 is outside the vocabulary (ids 0..1)"),
        ([[0, 1, 0]], "input 0 has 3 tokens but n_ctx is 2 (W_pos has 2 columns)"),
        ([[0.0, 1.0]], "token ids must be integers; got an array of float64"),
        ([0, 1], "token ids must be [batch, seq]; got shape (2,)"),
        (np.zeros((1, 0), dtype=int), "the input is empty; give at least one token"),
    ],
)
def test_run_ids_makes_the_checks_run_makes(ids, message):
    """Id −1 once ran silently as the last token, id = V raised IndexError, a long input a broadcasting error."""
    model = Model(
        Vocab.chars_of("ab"), np.eye(2), np.eye(2), layers=[[Head(W_Q=np.eye(2), W_K=np.eye(2), W_V=np.eye(2))]]
    )
    with pytest.raises(CircuitError) as e:
        model.run_ids(np.array(ids))
    assert str(e.value) == message


def test_run_ids_refuses_a_valid_mask_of_another_shape():
    model = Model(Vocab.chars_of("ab"), np.eye(2), layers=[[Head(W_Q=np.eye(2), W_K=np.eye(2), W_V=np.eye(2))]])
    with pytest.raises(CircuitError, match=r"valid has shape \(1, 3\) but the ids have \(1, 2\)"):
        model.run_ids(np.array([[0, 1]]), np.ones((1, 3), dtype=bool))


def test_the_old_attn_scale_keyword_is_refused_in_one_line_naming_the_new_one():
    vocab = Vocab(list("ab"))
    with pytest.raises(
        CircuitError,
        match=r"^attn_scale=2\.0: it is now qk_multiplier \(it multiplies q·k; "
        r"TransformerLens's attn_scale divides\)",
    ):
        Model(vocab, np.eye(2), attn_scale=2.0)
    with pytest.raises(CircuitError, match=r"^attn_scale=None: it is now qk_multiplier"):
        Model(vocab, np.eye(2), attn_scale=None)  # the old keyword is refused whatever it holds
    assert "attn_scale" not in Model.__init__.__code__.co_varnames[: Model.__init__.__code__.co_argcount]
    assert Model(vocab, np.eye(2), qk_multiplier=2.0).qk_multiplier == 2.0


def test_built_mlp_and_layernorm_are_named_and_read_only():
    vocab = Vocab(list("ab"))
    model = Model(
        vocab,
        np.eye(2),
        layers=[Layer(heads=[], mlp=MLP(W_in=np.ones((3, 2)), W_out=np.ones((2, 3))), ln_attn=LayerNorm(eps=1e-3))],
    )
    block = model.blocks[0]
    assert block.mlp.W_in.shape == (3, 2) and block.mlp.b_out.shape == (2,) and block.mlp.act == "relu"
    assert block.ln_attn.eps == 1e-3 and block.ln_attn.w.shape == (2,)
    with pytest.raises(ValueError):
        block.mlp.W_in[0, 0] = 5.0


# --- the forward pass as functions, keep=, dtype= ---------------------------------------------------------------
def test_the_block_is_attention_and_mlp_as_the_functions_compute_them():
    """The model's layer is functional.attention + functional.mlp on its built weights, nothing hidden."""
    F = C.functional
    model = random_model(seed=5)
    trace = model.run_ids(np.random.default_rng(6).integers(0, 6, size=(2, 9)))
    for l, block in enumerate(model.blocks):
        t = trace.layers[l]
        for h in block.heads:
            q = t.attn_in @ h.W_Q.T + h.b_Q  # [b, T, d_head]
            k, v = t.attn_in @ h.W_K.T + h.b_K, t.attn_in @ h.W_V.T + h.b_V
            scores, pattern, z = F.attention(q, k, v, F.causal_mask(9)[None], h.scale)
            np.testing.assert_allclose(pattern, trace.pattern(l, h.index), atol=1e-12)
            np.testing.assert_allclose(z, trace.z(l, h.index), atol=1e-12)
        pre, post, out = F.mlp(t.mlp_in, *block.mlp)
        np.testing.assert_allclose(out, t.mlp_out, atol=1e-12)
        np.testing.assert_allclose(post, F.gelu_tanh(t.mlp_in @ block.mlp.W_in.T + block.mlp.b_in), atol=1e-12)


def test_keep_holds_only_what_is_asked_and_the_rest_says_how_to_get_it():
    model = random_model(seed=7)
    ids = np.random.default_rng(8).integers(0, 6, size=(3, 8))
    full, lean = model.run_ids(ids), model.run_ids(ids, keep=("pattern",))
    for a, b in zip(full.layers, lean.layers):
        assert np.array_equal(a.pattern, b.pattern)  # the same code on the same arrays: bit for bit
        assert b.q is None and b.z is None and b.mlp_pre is None and b.resid_post is None
    assert np.array_equal(full.logits, lean.logits) and np.array_equal(full.logprobs, lean.logprobs)
    with pytest.raises(
        CircuitError,
        match=r"^the trace holds no z: it was run with keep=\('pattern',\); "
        r"run again with keep including 'z'$",
    ):
        lean.z(0, 1)
    with pytest.raises(CircuitError, match=r"^the trace holds no residual stream after layer 0: .*'resid_post'"):
        lean.resid(0)
    with pytest.raises(CircuitError, match="the trace holds no embedding"):
        model.run_ids(ids, keep=()).resid(-1)
    with pytest.raises(
        CircuitError, match=r"^keep names 'patterns', which a trace does not hold; choose \"all\" or among"
    ):
        model.run_ids(ids, keep=("patterns",))


def test_logprobs_are_computed_when_first_read():
    model = random_model(seed=9)
    trace = model.run_ids(np.random.default_rng(1).integers(0, 6, size=(2, 5)))
    assert trace._logprobs is None
    np.testing.assert_array_equal(trace.logprobs, C.functional.log_softmax(trace.logits))
    assert trace.logprobs is trace.logprobs


def test_head_out_of_a_trace_and_of_a_layer_are_one_computation():
    model = random_model(seed=11)
    trace = model.run_ids(np.random.default_rng(2).integers(0, 6, size=(2, 6)))
    for l, layer in enumerate(trace.layers):
        for h in range(2):
            assert np.array_equal(trace.head_out(l, h), layer.head_out[:, h])


def test_float32_forward_agrees_with_float64_within_its_tolerance():
    """dtype="float32" computes every activation in float32; logits agree with float64 to 1e-4 here."""
    F64 = random_model(seed=12, d=16)
    layers = F64.layers
    F32 = Model(
        F64.vocab,
        F64.W_E,
        W_pos=F64.W_pos,
        layers=layers,
        W_U=F64.W_U,
        ln_final=LayerNorm(),
        qk_multiplier=F64.qk_multiplier,
        dtype="float32",
    )
    F64 = Model(
        F64.vocab,
        F64.W_E,
        W_pos=F64.W_pos,
        layers=layers,
        W_U=F64.W_U,
        ln_final=LayerNorm(),
        qk_multiplier=F64.qk_multiplier,
    )
    ids = np.random.default_rng(3).integers(0, 6, size=(4, 12))
    t32, t64 = F32.run_ids(ids), F64.run_ids(ids)
    assert t32.logits.dtype == np.float32 and t32.layers[1].pattern.dtype == np.float32
    assert F32.head(0, 0).W_Q.dtype == np.float64  # built weights stay float64 for analysis
    np.testing.assert_allclose(t32.logits, t64.logits, atol=1e-4, rtol=1e-4)
    np.testing.assert_allclose(t32.layers[1].pattern, t64.layers[1].pattern, atol=1e-5)
    assert np.abs(t32.logits - t64.logits).max() > 0  # it really ran in float32
    with pytest.raises(CircuitError, match=r"^dtype = 'float16'; choose one of 'float64', 'float32'$"):
        Model(F64.vocab, F64.W_E, dtype="float16")


def test_a_bidirectional_mask_shows_every_key_and_still_hides_padding():
    vocab = Vocab.chars_of("ab", bos="^")
    head = dict(W_Q=np.eye(3), W_K=np.eye(3), W_V=np.eye(3), W_O=np.eye(3))
    both = Model(vocab, np.eye(3), layers=[[Head(**head)]], mask="bidirectional")
    one = Model(vocab, np.eye(3), layers=[[Head(**head), Head(**head, mask="bidirectional")]])
    assert [h.mask for h in one.heads()] == ["causal", "bidirectional"]
    trace = both.run(["ab", "a"])  # the second input is padded: its pad key stays hidden
    assert (trace.pattern(0, 0)[0] > 0).all()
    assert trace.pattern(0, 0)[1, :2, 2].tolist() == [0.0, 0.0]
    np.testing.assert_array_equal(one.run(["ab"]).pattern(0, 1), both.run(["ab"]).pattern(0, 0))
    assert one.run(["ab"]).pattern(0, 0)[0, 0, 1] == 0.0  # the causal head beside it


def test_a_mask_is_checked_when_made():
    with pytest.raises(CircuitError, match=r"^a Head has mask='both'; choose one of 'causal', 'bidirectional'$"):
        Head(mask="both")
    with pytest.raises(CircuitError, match=r"^a Head has mask='bidirectional' with window = 2; a local window"):
        Head(W_Q=[[1]], W_K=[[1]], W_V=[[1]], window=2, mask="bidirectional")
    with pytest.raises(CircuitError, match=r"^the model has mask=None; choose one of"):
        Model(Vocab.chars_of("ab"), np.eye(2), mask=None)
    with pytest.raises(CircuitError, match=r"^head 0.0 has mask='bidirectional' with window = 2"):
        Model(
            Vocab.chars_of("ab"),
            np.eye(2),
            layers=[[Head(W_Q=np.eye(2), W_K=np.eye(2), W_V=np.eye(2), window=2)]],
            mask="bidirectional",
        )


def test_a_bidirectional_model_is_not_written_as_gpt2():
    from circuits.io import gpt

    m = random_model(seed=5, d=6, d_head=3)
    both = Model(
        m.vocab,
        m.W_E,
        W_pos=m.W_pos,
        layers=m.layers,
        W_U=m.W_U,
        ln_final=LayerNorm(),
        qk_multiplier=m.qk_multiplier,
        mask="bidirectional",
    )
    with pytest.raises(CircuitError, match=r"^head 0.0 has mask='bidirectional'; gpt2 is causal$"):
        gpt.to_hf_state_dict(both, "gpt2")
