"""The puzzle files and their solutions stay in step, and every fresh puzzle is a stub."""

import re

import pytest
from helpers import ROOT

from circuits.checking.checker import check
from circuits.checking.loader import load, puzzle_files

MARK = "# ── your answer"
PUZZLES = sorted(p.name for p in (ROOT / "puzzles").glob("[0-9][0-9]_*.py"))


def above_the_answer(text: str) -> str:
    return text[: text.index("\n", text.index(MARK)) + 1]


def test_there_are_puzzles():
    assert len(PUZZLES) >= 6
    assert PUZZLES == sorted(p.name for p in (ROOT / "solutions").glob("[0-9][0-9]_*.py"))


@pytest.mark.parametrize("name", PUZZLES)
def test_puzzle_and_solution_are_identical_above_the_answer(name):
    puzzle = (ROOT / "puzzles" / name).read_text(encoding="utf-8")
    solution = (ROOT / "solutions" / name).read_text(encoding="utf-8")
    assert above_the_answer(puzzle) == above_the_answer(solution)


@pytest.mark.parametrize("name", PUZZLES)
def test_a_fresh_puzzle_is_not_attempted_and_says_how_much_to_write(name):
    path = ROOT / "puzzles" / name
    attempt = load(path)
    assert attempt.missing == list(attempt.puzzle.answer)
    stubs = re.findall(r'^\w+ = FILL_ME_IN\("([^"]*)"\)', path.read_text(encoding="utf-8"), flags=re.M)
    assert len(stubs) == len(attempt.puzzle.answer), f"one FILL_ME_IN per answer name: {stubs}"
    for stub in stubs:
        assert re.search(r"\broughly \d+\b", stub), f"{name}: FILL_ME_IN({stub!r}) does not say how much to write"
    assert check(attempt).status == "not attempted"
    number, _, slug = name.removesuffix(".py").partition("_")
    assert (attempt.puzzle.number, attempt.puzzle.name) == (int(number), slug)


def test_puzzle_files_lists_both_folders():
    assert [p.name for p in puzzle_files(root=ROOT)] == PUZZLES
