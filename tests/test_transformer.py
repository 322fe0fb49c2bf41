"""model/transformer.py: Model checks what it is given when built: one set of float types for its forward pass and
its q·k (DTYPES), and TransformerLens's attn_scale refused whatever it holds, naming qk_multiplier."""

import numpy as np
import pytest

from circuits import CircuitError, Head, Model, Vocab
from circuits.model.transformer import DTYPES


def model(**kw):
    return Model(Vocab.chars_of("ab"), np.eye(2), layers=[[Head(W_Q=np.eye(2), W_K=np.eye(2), W_V=np.eye(2))]], **kw)


def test_forward_and_qk_take_the_same_float_types():
    assert DTYPES == ("float64", "float32")
    for dtype in DTYPES:
        assert model(dtype=dtype, qk_dtype=dtype).run([["a", "b"]]).pattern(0, 0).shape == (1, 2, 2)
    with pytest.raises(CircuitError, match="^qk_dtype = 'float16'; choose one of 'float64', 'float32'$"):
        model(qk_dtype="float16")
    with pytest.raises(CircuitError, match="^dtype = 'float16'; choose one of 'float64', 'float32'$"):
        model(dtype="float16")


def test_attn_scale_is_refused_by_keyword_only():
    for value in (2.0, None):
        with pytest.raises(CircuitError, match=f"^attn_scale={value!r}: it is now qk_multiplier"):
            model(attn_scale=value)
