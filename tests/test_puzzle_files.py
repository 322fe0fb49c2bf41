"""The shipped curriculum: every reference file rebuilds a stub that is not attempted and says what to write
(how much on a one-star puzzle, the shape only beyond).

These tests read the curriculum's own copies (package data), never the learner's puzzles/ folder, so the
suite passes whatever state a learner's puzzles are in."""

import re

import pytest
from helpers import SOLUTIONS, STEMS, shipped, stub

from circuits.checking import curriculum
from circuits.checking.loader import load, puzzle_files
from circuits.explain import check

MARK = "# ── your answer"


def above_the_answer(text: str) -> str:
    return text[: text.index("\n", text.index(MARK)) + 1]


def test_there_are_puzzles_and_each_has_hints():
    assert len(STEMS) >= 22 and STEMS == sorted(STEMS)
    assert all(len(curriculum.hints(stem)) >= 3 for stem in STEMS)


@pytest.mark.parametrize("stem", STEMS)
def test_the_stub_is_the_reference_above_the_answer(stem):
    solution = (SOLUTIONS / f"{stem}.py").read_text(encoding="utf-8")
    assert above_the_answer(stub(stem)) == above_the_answer(solution)
    assert "hints=" not in solution, "hint ladders live in circuits/curriculum/hints.toml, not in a puzzle file"


@pytest.mark.parametrize("stem", STEMS)
def test_a_fresh_puzzle_is_not_attempted_and_says_how_much_to_write(stem, tmp_path):
    path = shipped("puzzles", stem, tmp_path)
    attempt = load(path)
    assert attempt.missing == list(attempt.puzzle.answer) and attempt.edits == []
    stubs = re.findall(r'^\w+ = FILL_ME_IN\("([^"]*)"\)', path.read_text(encoding="utf-8"), flags=re.M)
    assert len(stubs) == len(attempt.puzzle.answer), f"one FILL_ME_IN per answer name: {stubs}"
    for hint in stubs:  # an answer's size only on a first try (★); from ★★ on, its shape alone
        if curriculum.level(stem)[0] == 1:
            assert re.search(r"\broughly \d+\b", hint), f"{stem}: FILL_ME_IN({hint!r}) does not say how much to write"
        else:
            assert re.fullmatch(r"\((d_head|d_mlp|\d+), (d_head|d_mlp|\d+)\)", hint), (
                f"{stem} (★★ or more): FILL_ME_IN({hint!r}) should give the shape only"
            )
    assert check(attempt).status == "not attempted"
    number, _, slug = stem.partition("_")
    assert (attempt.puzzle.number, attempt.puzzle.name) == (int(number), slug)


def test_puzzle_files_lists_a_folder(tmp_path):
    for stem in STEMS[:3]:
        shipped("puzzles", stem, tmp_path / "puzzles")
    assert [p.stem for p in puzzle_files(root=tmp_path)] == STEMS[:3]
