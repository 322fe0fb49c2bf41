"""Fuzzing the forward pass: random model shapes and weights, extreme magnitudes included.

Whatever the weights, a run either gives finite numbers or a one-line CircuitError saying what
overflowed, never NaN. Patterns sum to 1 over the keys a query can see and are 0 elsewhere,
nothing flows backwards in time, a padded batch equals its inputs run one by one, and the
trace's pieces add up to the residual stream.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from circuits import MLP, CircuitError, Head, Layer, LayerNorm, Model, Vocab
from circuits.model import functional as F
from circuits.model.weights import MAX_ABS

# Powers of ten a matrix's entries are drawn around: tiny, ordinary, large, and the largest allowed.
EXPONENTS = st.sampled_from([0, 0, 0, -300, -8, 3, 12, 50, 100])
FIXED = st.sampled_from([None, None, None, "previous", "self", "first", "uniform"])


class Weights:
    """Draws matrices of one model from a numpy generator, each at its own magnitude (hypothesis picks those)."""

    def __init__(self, draw, seed: int):
        self.draw, self.rng = draw, np.random.default_rng(seed)

    def __call__(self, *shape: int) -> np.ndarray:
        scale = 10.0 ** self.draw(EXPONENTS)
        out = self.rng.normal(size=shape) * scale
        edge = self.rng.random(shape)  # a few entries exactly 0 or exactly at the limit
        out = np.where(edge < 0.1, 0.0, out)
        out = np.where(edge > 0.95, np.sign(out) * MAX_ABS, out)
        return np.clip(out, -MAX_ABS, MAX_ABS)

    def maybe(self, *shape: int) -> np.ndarray | None:
        return self(*shape) if self.draw(st.booleans()) else None


@st.composite
def models(draw) -> Model:
    w = Weights(draw, draw(st.integers(0, 2**32 - 1)))
    n_vocab, d = draw(st.integers(1, 4)), draw(st.integers(1, 4))
    n_ctx = draw(st.integers(1, 6))
    layers = []
    for _ in range(draw(st.integers(0, 2))):
        heads = []
        for _ in range(draw(st.integers(0, 2))):
            dk, dv = draw(st.integers(1, 3)), draw(st.integers(1, 3))
            heads.append(
                Head(
                    W_Q=w(dk, d),
                    W_K=w(dk, d),
                    W_V=w(dv, d),
                    W_O=w(d, dv),
                    b_Q=w.maybe(dk),
                    b_K=w.maybe(dk),
                    b_V=w.maybe(dv),
                    pattern=(fixed := draw(FIXED)),
                    window=draw(
                        st.sampled_from(
                            [None, None]
                            + ([] if fixed == "first" else [2, 3])
                            + ([] if fixed in ("first", "previous") else [1])
                        )
                    ),
                    scale=draw(st.sampled_from([None, None, 0.0, 1e-3, 1e3])),
                )
            )
        mlp = None
        if draw(st.booleans()):
            m = draw(st.integers(1, 3))
            mlp = MLP(
                w(m, d), w(d, m), w.maybe(m), w.maybe(d), act=draw(st.sampled_from(["relu", "gelu", "gelu_tanh"]))
            )
        ln = lambda: LayerNorm(w.maybe(d), w.maybe(d)) if draw(st.booleans()) else None  # noqa: E731
        layers.append(Layer(heads=heads, b_O=w.maybe(d), mlp=mlp, ln_attn=ln(), ln_mlp=ln()))
    return Model(
        Vocab.numbered(n_vocab),
        w(d, n_vocab),
        W_pos=w.maybe(d, n_ctx),
        n_ctx=n_ctx,
        layers=layers,
        W_U=w.maybe(n_vocab, d),
        ln_final=LayerNorm() if draw(st.booleans()) else None,
        qk_multiplier=draw(st.sampled_from([1.0, "1/sqrt(d_head)"])),
    )


@st.composite
def models_and_inputs(draw):
    model = draw(models())
    seqs = st.lists(st.integers(0, len(model.vocab) - 1), min_size=1, max_size=model.n_ctx)
    return model, draw(st.lists(seqs, min_size=1, max_size=3))


def run(model: Model, inputs):
    """The trace, or None when the run stops with the one clear overflow error."""
    try:
        return model.run(inputs)
    except CircuitError as e:
        assert "overflowed" in str(e) and "\n" not in str(e), str(e)
        return None


def arrays(trace) -> dict[str, np.ndarray]:
    out = {"embed": trace.embed, "pos_embed": trace.pos_embed, "resid_final": trace.resid_final, "final": trace.final}
    if trace.logits is not None:
        out |= {"logits": trace.logits, "logprobs": trace.logprobs}
    for l, layer in enumerate(trace.layers):
        for name in (
            "attn_in",
            "q",
            "k",
            "v",
            "pattern",
            "z",
            "attn_out",
            "resid_mid",
            "mlp_pre",
            "mlp_post",
            "mlp_out",
            "resid_post",
        ):
            if getattr(layer, name) is not None:
                out[f"layer {l} {name}"] = getattr(layer, name)
    return out


# CIRCUITS_FUZZ_EXAMPLES=5000 fuzzes deeper; the default keeps the file at a few seconds.
FUZZ = settings(max_examples=int(os.environ.get("CIRCUITS_FUZZ_EXAMPLES", 120)))


@FUZZ
@given(models_and_inputs())
def test_outputs_are_finite_and_patterns_sum_to_one_over_visible_keys(case):
    model, seqs = case
    trace = run(model, [np.array(s) for s in seqs])
    if trace is None:
        return
    for name, a in arrays(trace).items():
        assert np.isfinite(a).all(), f"{name} is not finite"
    T = trace.ids.shape[1]
    for l, layer in enumerate(trace.layers):
        for h, head in enumerate(model.blocks[l].heads):
            visible = F.causal_mask(T, head.window)[None] & trace.valid[:, None, :]  # [b, query, key]
            p = layer.pattern[:, h]
            assert np.all(p[~visible] == 0), f"head {l}.{h} attends to a key it cannot see"
            assert np.all(p >= 0)
            # A real token's row sums to 1; a padding query's may see nothing (all masked): all 0, never NaN.
            sums = p.sum(-1)
            np.testing.assert_allclose(sums[trace.valid], 1.0, atol=1e-9, err_msg=f"head {l}.{h}")
            assert np.all((np.abs(sums - 1) < 1e-9) | (sums == 0))
            hidden = layer.scores[:, h][~visible]
            assert np.all(hidden == -np.inf)
            if head.pattern is None:  # a fixed pattern's scores are not used
                assert np.isfinite(layer.scores[:, h][visible]).all()


@FUZZ
@given(models_and_inputs(), st.data())
def test_nothing_flows_backwards_in_time(case, data):
    """Changing the tokens after position i changes nothing at positions 0..i, bit for bit."""
    model, seqs = case
    ids = np.array([seqs[0]])
    T = ids.shape[1]
    i = data.draw(st.integers(0, T - 1))
    changed = ids.copy()
    changed[:, i + 1 :] = (changed[:, i + 1 :] + 1) % len(model.vocab)
    a, b = run(model, ids), run(model, changed)
    if a is None or b is None:
        return
    for (name, x), y in zip(arrays(a).items(), arrays(b).values()):
        pos = slice(None, i + 1)
        if x.ndim == 4:  # [b, h, T, ·]: queries on axis 2; a pattern's keys past i are 0 for both
            x, y = x[:, :, pos], y[:, :, pos]
        else:
            x, y = x[:, pos], y[:, pos]
        np.testing.assert_array_equal(x, y, err_msg=name)


def close(a: np.ndarray, b: np.ndarray, size: np.ndarray, what: str) -> None:
    """|a − b| within rounding of the numbers that made them (`size`, elementwise)."""
    bad = ~(np.abs(a - b) <= 1e-9 * size + 1e-300)
    assert not bad.any(), f"{what}: {a[bad][:3]} vs {b[bad][:3]} (sizes {size[bad][:3]})"


@FUZZ
@given(models_and_inputs())
def test_a_padded_batch_equals_its_inputs_one_by_one(case):
    model, seqs = case
    alone = [run(model, np.array([s])) for s in seqs]
    batch = run(model, [np.array(s) for s in seqs])
    if batch is None or any(a is None for a in alone):
        return  # an overflow in one input stops the batch; the inputs that overflow alone are named there too
    for n, (s, one) in enumerate(zip(seqs, alone)):
        T = len(s)
        for l, (lb, l1) in enumerate(zip(batch.layers, one.layers)):
            size = np.abs(l1.resid_pre) + np.abs(l1.attn_out) + (np.abs(l1.mlp_out) if l1.mlp_out is not None else 0)
            close(lb.resid_post[n, :T], l1.resid_post[0], size[0], f"layer {l} resid_post of input {n}")
            if l1.pattern is not None:
                pb, p1 = lb.pattern[n, :, :T, :T], l1.pattern[0]
                assert np.all(lb.pattern[n, :, :T, T:] == 0), "a real token attends to padding"
                ok = np.abs(pb - p1) <= 1e-6
                # Where q·k is huge, one rounding of a score can move the whole row: such rows may differ.
                spread = np.nanmax(np.where(np.isfinite(l1.scores[0]), np.abs(l1.scores[0]), 0), axis=-1)
                assert np.all(ok | (spread[..., None] > 1e6)), f"layer {l} pattern of input {n}"


@FUZZ
@given(models_and_inputs())
def test_the_trace_pieces_add_up_to_the_residual_stream(case):
    model, seqs = case
    trace = run(model, [np.array(seqs[0])])
    if trace is None:
        return
    resid = trace.embed + trace.pos_embed
    for l, (layer, block) in enumerate(zip(trace.layers, model.blocks)):
        np.testing.assert_array_equal(layer.resid_pre, resid)
        b_O = block.b_O if block.b_O is not None else 0.0
        if block.heads:
            parts = layer.head_out  # [b, h, T, d_model]
            size = sum(
                np.abs(layer.z[:, h]) @ np.abs(np.pad(hw.W_O, [(0, 0), (0, layer.z.shape[-1] - hw.W_O.shape[1])])).T
                for h, hw in enumerate(block.heads)
            ) + np.abs(b_O)
            close(parts.sum(1) + b_O, layer.attn_out, size, f"layer {l}: Σ head_out + b_O vs attn_out")
        np.testing.assert_array_equal(layer.resid_mid, layer.resid_pre + layer.attn_out)
        mlp = layer.mlp_out if layer.mlp_out is not None else 0.0
        np.testing.assert_array_equal(layer.resid_post, layer.resid_mid + mlp)
        resid = layer.resid_post
    np.testing.assert_array_equal(trace.resid_final, resid)
    np.testing.assert_array_equal(trace.resid(), resid)


# --- the masked softmax on its own --------------------------------------------------------------------
@settings(max_examples=80)
@given(st.lists(st.floats(allow_nan=True, allow_infinity=True), min_size=1, max_size=6), st.data())
def test_softmax_of_any_row_is_finite_and_sums_to_one_or_zero(row, data):
    x = np.array([row])
    visible = np.array([data.draw(st.lists(st.booleans(), min_size=len(row), max_size=len(row)))])
    with np.errstate(over="raise", invalid="raise", divide="raise"):  # no floating-point warnings either
        p = F.softmax(x, visible)
    assert np.isfinite(p).all() and np.all(p >= 0) and np.all(p[~visible] == 0)
    assert p.sum() == pytest.approx(1.0 if visible.any() else 0.0, abs=1e-12)
