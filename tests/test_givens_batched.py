"""A reference that gains a batched spec (Output(..., batched=...), for speed) leaves a learner's file made from the
older stub, without it, checking as before: no given is flagged, the verdict and report are the same. A file that
edits the batched spec, or hands the puzzle one of its own, is flagged as for any given, and the reference's runs."""

import re

import pytest
from helpers import SOLUTIONS

from circuits.checking import givens
from circuits.checking.loader import load
from circuits.display.notebook import result_text
from circuits.explain import check

HELPERS = {"13_copy_suppression": "suppressed_batched", "29_smaller_by_value": "spec_batched"}
WRONG = {  # an answer line and a wrong one in its place: the check fails
    "13_copy_suppression": ('    W_O[f"pred:{t}", k] = -1', '    W_O[f"pred:{t}", k] = -0.5'),
    "29_smaller_by_value": ("       [   0,   0,  1,    0,     0,     0,     0,     0]]", "       [0] * 8]"),
}


def reference(stem: str) -> str:
    return (SOLUTIONS / f"{stem}.py").read_text(encoding="utf-8")


def before_batched(text: str, helper: str) -> str:
    """The file as it was before the reference gained `helper`: no such function, no `batched=` on the puzzle."""
    text, n = re.subn(rf"\ndef {helper}\(.*?\n\n\n", "\n", text, flags=re.S)
    text, m = re.subn(rf", batched={helper}", "", text)
    assert n == m == 1
    return text


def learner_file(folder, stem: str, text: str):
    path = folder / "puzzles" / f"{stem}.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def report(path, folder) -> tuple[str, str]:
    result = check(load(path), n_random=500, property_examples=20, margins=False)
    for r in (result, *result.targets):
        r.seconds = 0.0
    return result.status, result_text(result, width=80).replace(str(folder), "<here>")


@pytest.mark.parametrize("stem", sorted(HELPERS))
def test_the_batched_helpers_are_the_givens_a_file_may_lack(stem):
    shipped = load(SOLUTIONS / f"{stem}.py").names
    assert givens.speed_only(shipped) == {HELPERS[stem]}
    assert len(givens.accepted(shipped, "puzzle")) == 2  # as shipped, and as before the batched spec
    assert givens.accepted(shipped, HELPERS[stem]) == [shipped[HELPERS[stem]]]


@pytest.mark.parametrize("stem", sorted(HELPERS))
@pytest.mark.parametrize("answer", ["solved", "failing"])
def test_a_file_from_before_the_batched_spec_checks_as_before(stem, answer, tmp_path):
    text = reference(stem) if answer == "solved" else reference(stem).replace(*WRONG[stem])
    old = learner_file(tmp_path / "old", stem, before_batched(text, HELPERS[stem]))
    new = learner_file(tmp_path / "new", stem, text)
    assert load(old).edits == [] and load(new).edits == []
    assert report(old, tmp_path / "old") == report(new, tmp_path / "new")
    assert report(old, tmp_path / "old")[0] == answer


@pytest.mark.parametrize("stem", sorted(HELPERS))
def test_an_edited_batched_spec_is_flagged_and_the_reference_s_is_checked(stem, tmp_path):
    helper = HELPERS[stem]
    text = reference(stem).replace(f"def {helper}(", f"def {helper}(*_):\n    return 0\n\n\ndef _was(")
    path = learner_file(tmp_path, stem, text)
    attempt = load(path)
    line = next(n for n, t in enumerate(text.splitlines(), 1) if t.startswith(f"def {helper}("))
    assert {e.name: e.line for e in attempt.edits}[helper] == line
    assert {e.name for e in attempt.edits} == {helper, "puzzle"}  # the puzzle holds the edited helper
    [target] = [t for t in attempt.puzzle.targets if getattr(t, "batched", None) is not None]
    assert target.batched is load(SOLUTIONS / f"{stem}.py").names[helper]
    assert check(attempt, n_random=500, property_examples=20, margins=False).status == "solved"


@pytest.mark.parametrize("stem", sorted(HELPERS))
def test_a_puzzle_given_a_batched_spec_of_the_file_s_own_is_flagged(stem, tmp_path):
    helper = HELPERS[stem]
    text = reference(stem).replace(f", batched={helper}", ", batched=lambda tokens: np.zeros(tokens.shape + (1,))")
    assert "import numpy as np" in text
    attempt = load(learner_file(tmp_path, stem, text))
    assert [e.name for e in attempt.edits] == ["puzzle"]
    assert check(attempt, n_random=500, property_examples=20, margins=False).status == "solved"


def test_a_deleted_given_is_flagged_unless_it_is_a_batched_spec(tmp_path):
    stem = "13_copy_suppression"
    attempt = load(learner_file(tmp_path, stem, reference(stem) + "\ndel W_U, suppressed_batched\n"))
    assert [(e.name, e.removed) for e in attempt.edits] == [("W_U", True)]
