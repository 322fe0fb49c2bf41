"""circuits/model/decompose.py: who writes what into which residual direction, on a small hand-built model."""

from __future__ import annotations

import numpy as np

from circuits import Basis, Head, Model, Vocab, blank
from circuits.model import MLP, Layer
from circuits.model.decompose import Writes, before, decompose_resid, parts, written_before

RESID = Basis(["tok:a", "tok:b", "pos:0", "pos:1", "h", "bias", "v", "m", "free"])


def model(W_O_silent=None):
    """Layer 0: head 0.0 copies tok:a into h (×2); head 0.1 reads tok:b but its W_O is zero (or `W_O_silent`);
    b_O puts 0.5 into bias. Layer 1: head 1.0 reads nothing, its value bias 3 reaches v through W_O; an MLP
    writes m (W_out) and free (b_out). Layer 2: a head that reads h."""
    vocab = Vocab.chars_of("ab")
    W_E, W_pos = blank(RESID, vocab.tokens), blank(RESID, 2)
    W_E["tok:a", "a"] = W_E["tok:b", "b"] = 1
    W_pos["pos:0", 0] = W_pos["pos:1", 1] = 1
    copy_V, copy_O = blank(1, RESID), blank(RESID, 1)
    copy_V[0, "tok:a"], copy_O["h", 0] = 1, 2
    quiet_V = blank(1, RESID)
    quiet_V[0, "tok:b"] = 1
    quiet_O = blank(RESID, 1) if W_O_silent is None else W_O_silent
    bias_O = blank(RESID, 1)
    bias_O["v", 0] = 1
    b_O = np.zeros(len(RESID))
    b_O[RESID.labels.index("bias")] = 0.5
    W_in, W_out, b_out = blank(1, RESID), blank(RESID, 1), np.zeros(len(RESID))
    W_in[0, "h"], W_out["m", 0] = 1, 4
    b_out[RESID.labels.index("free")] = -1
    zero = blank(1, RESID)
    reader_K = blank(1, RESID)
    reader_K[0, "h"] = 1
    return Model(
        vocab,
        W_E,
        W_pos,
        residual=RESID,
        layers=[
            Layer(
                heads=[
                    Head(W_Q=zero, W_K=zero, W_V=copy_V, W_O=copy_O),
                    Head(W_Q=zero, W_K=zero, W_V=quiet_V, W_O=quiet_O),
                ],
                b_O=b_O,
            ),
            Layer(heads=[Head(W_Q=zero, W_K=zero, W_V=zero, W_O=bias_O, b_V=[3])], mlp=MLP(W_in, W_out, b_out=b_out)),
            Layer(heads=[Head(W_Q=zero, W_K=reader_K, W_V=zero, W_O=blank(RESID, 1))]),
        ],
    )


def written(part) -> dict[str, float]:
    size = part.size()
    return {RESID.labels[r]: float(size[r]) for r in np.flatnonzero(size)}


def test_each_part_writes_its_own_directions_and_how_much():
    found = {p.name: p for p in parts(model())}
    assert list(found) == ["embedding", "position", "head 0.0", "head 0.1", "b_O 0", "head 1.0", "mlp 1", "head 2.0"]
    assert written(found["embedding"]) == {"tok:a": 1.0, "tok:b": 1.0}
    assert written(found["position"]) == {"pos:0": 1.0, "pos:1": 1.0}
    assert written(found["head 0.0"]) == {"h": 2.0}
    assert written(found["b_O 0"]) == {"bias": 0.5}
    assert written(found["mlp 1"]) == {"m": 4.0, "free": 1.0}
    assert [found[n].matrix for n in ("embedding", "position", "head 0.0", "b_O 0", "mlp 1")] == [
        "W_E",
        "W_pos",
        "W_O",
        "b_O",
        "W_out",
    ]
    assert [found[n].stage for n in ("embedding", "head 0.0", "b_O 0", "mlp 1", "head 1.0")] == [-1, 0, 0, 1.5, 1]


def test_a_head_whose_W_O_is_zero_writes_nothing():
    quiet = {p.name: p for p in parts(model())}["head 0.1"]
    assert quiet.kind is Writes.HEAD and written(quiet) == {}  # it reads tok:b, but nothing leaves through W_O
    assert not quiet.writes([RESID.labels.index("tok:b")])
    W_O = blank(RESID, 1)
    W_O["free", 0] = 1
    loud = {p.name: p for p in parts(model(W_O))}["head 0.1"]
    assert written(loud) == {"free": 1.0} and loud.writes([RESID.labels.index("free")])


def test_a_value_bias_reaches_through_W_O():
    head = {p.name: p for p in parts(model())}["head 1.0"]
    assert written(head) == {"v": 3.0}  # W_V reads nothing: only b_V = 3, through W_O's 1, writes v


def test_what_anything_before_a_layer_can_write():
    def names(layer):
        return [RESID.labels[i] for i in np.flatnonzero(written_before(model(), layer))]

    assert names(0) == ["tok:a", "tok:b", "pos:0", "pos:1"]  # the embeddings only
    assert names(1) == ["tok:a", "tok:b", "pos:0", "pos:1", "h", "bias"]
    assert names(2) == ["tok:a", "tok:b", "pos:0", "pos:1", "h", "bias", "v", "m", "free"]
    assert [p.name for p in before(model(), 1)] == ["embedding", "position", "head 0.0", "head 0.1", "b_O 0"]


def test_a_model_without_positions_has_no_position_part():
    vocab = Vocab.chars_of("ab")
    resid = Basis(["tok:a", "tok:b"])
    W_E = blank(resid, vocab.tokens)
    W_E["tok:a", "a"] = 1
    found = parts(Model(vocab, W_E, residual=resid))
    assert [p.name for p in found] == ["embedding"]
    assert list(written_before(Model(vocab, W_E, residual=resid), 0)) == [True, False]


def test_a_zero_b_O_writes_nothing_and_a_missing_one_is_no_part():
    found = {p.name: p for p in parts(model())}
    assert "b_O 1" not in found and "b_O 2" not in found  # layers 1 and 2 have none
    m = model()
    m.blocks[0].b_O = np.zeros(len(RESID))
    assert written({p.name: p for p in parts(m)}["b_O 0"]) == {}
    assert not written_before(m, 1)[RESID.labels.index("bias")]


def test_the_residual_stream_is_the_sum_of_what_each_part_added():
    trace = model().run(["ab", "ba"])
    added = decompose_resid(trace)
    assert list(added) == [("embedding",), ("head", 0, 0), ("head", 0, 1), ("head", 1, 0), ("mlp", 1), ("head", 2, 0)]
    b_O = trace.model.blocks[0].b_O  # the one bias no part carries
    assert np.allclose(sum(added.values()) + b_O, trace.resid(None))
    h = RESID.labels.index("h")
    assert added[("head", 0, 0)][0, :, h].tolist() == [2.0, 1.0]  # "a" then the mean of a, b: copied ×2
    assert not added[("head", 0, 1)].any()  # W_O is zero
    assert list(decompose_resid(trace, 1)) == [("embedding",), ("head", 0, 0), ("head", 0, 1)]
