"""targets/base.py: the base of every target. Kinds are typed (Kind: how a target is checked; Shows: what
`circuits show` prints of it), and a metric's direction is the one its kind declares."""

import json

import pytest

from circuits import targets
from circuits.targets.base import Kind, Shows, Target, higher_is_worse


def test_every_target_class_has_a_typed_kind():
    classes, todo = set(), [Target]
    while todo:
        cls = todo.pop()
        classes.add(cls)
        todo += cls.__subclasses__()
    kinds = {c.kind for c in classes if isinstance(c.__dict__.get("kind"), Kind)}
    kinds |= {f.default for c in classes for f in getattr(c, "__dataclass_fields__", {}).values() if f.name == "kind"}
    assert kinds == {Kind.BEHAVIOUR, Kind.CODE, Kind.STRUCTURE, Kind.MECHANISM}
    assert targets.OVCircuit("ov", layer=0, head=0, min_score=0.5).kind is Kind.STRUCTURE  # a structure's subclass


def test_a_kind_is_its_name_in_json_and_a_misspelt_one_is_refused():
    assert (
        json.dumps({"kind": Kind.MECHANISM, "shows": Shows.NEXT_TOKEN})
        == '{"kind": "mechanism", "shows": "next-token"}'
    )
    with pytest.raises(ValueError):
        Kind("behavior")


def test_a_metrics_direction_and_the_bases_defaults():
    assert higher_is_worse(targets.Output.metric) and not higher_is_worse(targets.Attention.metric)
    assert higher_is_worse("a metric no kind declares")
    t = Target()
    assert t.kind is Kind.BEHAVIOUR and t.shown(None, ["a"]) is None and t.tolerance is None
    with pytest.raises(NotImplementedError, match="Target does not state its bound"):
        t.bound()
