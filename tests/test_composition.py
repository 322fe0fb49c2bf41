"""analysis/composition.py: composition kinds are typed (Composed: Q, K, V, virtual), a kind given by its name is
read as its member, and a name of no kind is one line."""

import json

import pytest
from helpers import solution

from circuits import analysis as A
from circuits.analysis import COMPOSITION_KINDS, Composed
from circuits.errors import CircuitError


@pytest.fixture(scope="module")
def model():
    return solution("07_induction_k_composition").model()


def test_scores_carry_typed_kinds_that_print_as_their_names(model):
    scores = A.composition_scores(model, n_samples=5) + A.virtual_strengths(model, n_samples=5)
    assert scores and all(isinstance(c.kind, Composed) for c in scores)
    assert {c.kind for c in scores} <= {*COMPOSITION_KINDS, Composed.VIRTUAL}
    assert json.loads(json.dumps([c.to_dict()["kind"] for c in scores])) == [c.kind.value for c in scores]


def test_a_kind_by_name_or_member_gives_the_same_matrix_and_a_wrong_one_is_refused(model):
    earlier, later = model.head(0, 0), model.head(1, 0)
    for name, member in (("K", Composed.K), ("V", Composed.V)):
        a, b = A.composition_matrix(name, earlier, later), A.composition_matrix(member, earlier, later)
        assert (a[0].AB == b[0].AB).all() and (a[1].AB == b[1].AB).all()
    assert A.exact_composition(model, "K", (0, 0), (1, 0)) == A.exact_composition(model, Composed.K, (0, 0), (1, 0))
    with pytest.raises(CircuitError, match="composition kind 'k' is not one of Q, K, V"):
        A.composition_matrix("k", earlier, later)
