"""targets/depends.py: a mechanism target names who writes ("head L.H", "mlp L", "embed") and where; a
writer in any other form is one line."""

import pytest

from circuits.errors import CircuitError
from circuits.targets import Depends, Kind
from circuits.targets.depends import writer_at


def test_a_writer_is_read_as_its_layer_part_and_head():
    assert writer_at("head 1.0") == (1, "attn", (1, 0))
    assert writer_at("mlp 2") == (2, "mlp", None)
    assert writer_at("embed") == (-1, "attn", None)
    for bad in ("head 1", "mlp x", "heads 1.0", "layer 0"):
        with pytest.raises(CircuitError, match='it needs "head L.H", "mlp L" or "embed"'):
            writer_at(bad)


def test_a_mechanism_says_its_dependency_and_is_checked_as_one():
    t = Depends(reader=(1, 0), writer="head 0.0", into=["dup"], follows=lambda base, source: [None] * len(base))
    assert t.kind is Kind.MECHANISM
    assert t.label == "head 1.0 depends on head 0.0's write into dup (by intervention)"
    with pytest.raises(CircuitError, match="reader is 3"):
        Depends(reader=3, writer="head 0.0", into=["dup"], follows=lambda b, s: [])
