"""Output fits an 80-column terminal: with COLUMNS=80 no line of `circuits check N --solution`, `show`, `analyze`,
`list` or a failing `pytest puzzles/` report is wider than 80 columns, for every puzzle file found (new ones included)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest
from helpers import ROOT
from rich.cells import cell_len

from circuits.checking.checker import _examples, check
from circuits.checking.loader import load
from circuits.checking.mutants import mutants

CIRCUITS = [sys.executable, "-m", "circuits.cli"]
ENV = {**{k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "HYPOTHESIS"))},
       "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]), "COLUMNS": "80"}
STEMS = sorted(p.stem for p in (ROOT / "solutions").glob("[0-9][0-9]_*.py"))
WIDTH = 80

# Appended to a reference solution, this replaces its answer with mutant number K of circuits.mutants: a wrong
# answer for any puzzle, written by the same code that mutation-tests the checker.
WRONG = '''
# ── a wrong edit, for tests/test_width.py
import types as _types
from pathlib import Path as _Path

from circuits.checking.loader import Attempt as _Attempt
from circuits.checking.mutants import mutants as _mutants
from circuits.checking.puzzle import Puzzle as _Puzzle

_puzzle = next(v for v in list(globals().values()) if isinstance(v, _Puzzle))
_answer = _types.SimpleNamespace(**{"params": globals().get("params", {}), **{n: globals()[n] for n in _puzzle.answer}})
_mutant = _mutants(_Attempt(_Path(__file__), _puzzle, _answer))[K]
for _name in [*_puzzle.answer, "params"]:
    globals()[_name] = getattr(_mutant.answer, _name)
'''


def too_wide(text: str) -> list[str]:
    return [line for line in text.splitlines() if cell_len(line) > WIDTH]


def run_all(commands: list[list[str]], cwd, env: dict | None = None) -> list[subprocess.CompletedProcess]:
    """A few side by side (they only read files), as a learner runs them; not all at once, which would starve each
    of them past its import time limit on a small machine."""
    from concurrent.futures import ThreadPoolExecutor

    def one(c):
        return subprocess.run(c, cwd=cwd, env=env or ENV, capture_output=True, text=True, timeout=900, check=False)

    with ThreadPoolExecutor(max_workers=2) as pool:
        return list(pool.map(one, commands))


def _commands(stem: str) -> list[list[str]]:
    attempt = load(ROOT / "solutions" / f"{stem}.py")
    number = str(attempt.puzzle.number)
    out = [[*CIRCUITS, "check", number, "--solution"]]
    if attempt.puzzle.build is not None:
        model = attempt.model()
        text = model.vocab.join(_examples(attempt.puzzle)[0])
        out += [[*CIRCUITS, "show", number, text, "--solution"], [*CIRCUITS, "analyze", number, "--solution"]]
    return out


@pytest.fixture(scope="module")
def reports(tmp_path_factory):
    """Every command of every puzzle, run in a copy of the project with COLUMNS=80."""
    root = tmp_path_factory.mktemp("project")
    shutil.copytree(ROOT / "puzzles", root / "puzzles")
    shutil.copytree(ROOT / "solutions", root / "solutions")
    commands = [c for stem in STEMS for c in _commands(stem)] + [[*CIRCUITS, "list", "--solutions"]]
    return run_all(commands, root)


def test_every_puzzle_is_covered(reports):
    shown = {" ".join(r.args[3:5]) for r in reports}
    assert len(STEMS) >= 9 and all(f"check {int(stem[:2])}" in shown for stem in STEMS)


def test_check_show_and_analyze_fit_80_columns(reports):
    for r in reports:
        shown = " ".join(r.args[3:])
        assert r.returncode == 0 and "Traceback" not in r.stderr, f"{shown}: {r.stderr[-1000:]}"
        assert r.stdout.strip(), shown
        assert not too_wide(r.stdout), f"{shown}:\n" + "\n".join(too_wide(r.stdout))


def test_tables_keep_their_row_labels_and_whole_numbers(reports):
    """No cell cut to "56.…": a table too wide is shown in blocks of columns, each with the row labels."""
    for r in reports:
        assert not re.search(r"\d\.…", r.stdout), " ".join(r.args[3:])
    analyze4 = next(r for r in reports if r.args[3:5] == ["analyze", "4"])
    assert "columns 0 to" in analyze4.stdout and re.search(r"^ +23 +", analyze4.stdout, flags=re.MULTILINE)


def _failing_mutant(stem: str) -> int:
    """The index of a mutant the full check fails with a report (not a one-line error); sharpness params first."""
    attempt = load(ROOT / "solutions" / f"{stem}.py")
    ms = mutants(attempt)
    order = sorted(range(len(ms)), key=lambda k: (" × 10" not in ms[k].name or "whole" in ms[k].name, k))
    for k in order:
        trial = load(ROOT / "solutions" / f"{stem}.py")
        trial.answer = ms[k].answer
        if check(trial, n_random=500, property_examples=10, margins=False).status == "failing":
            return k
    pytest.fail(f"{stem}: no mutant fails with a report")


@pytest.mark.parametrize("ci", [False, True], ids=["terminal", "CI"])
def test_a_failing_pytest_report_fits_80_columns(tmp_path, ci):
    """On CI pytest pastes each failure's message into the short summary untrimmed: it must fit there too."""
    env = {k: v for k, v in ENV.items() if k not in ("CI", "BUILD_NUMBER")} | ({"CI": "true"} if ci else {})
    root = tmp_path / "project"
    (root / "puzzles").mkdir(parents=True)
    for stem in STEMS:
        wrong = WRONG.replace("[K]", f"[{_failing_mutant(stem)}]")
        text = (ROOT / "solutions" / f"{stem}.py").read_text(encoding="utf-8")
        (root / "puzzles" / f"{stem}.py").write_text(text + wrong, encoding="utf-8")
    [r] = run_all([[sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "puzzles/", "--no-margins",
                    "--no-cache"]], root, env)
    assert r.returncode == 1 and "Traceback" not in r.stdout, r.stdout[-3000:]
    for stem in STEMS:
        assert f"FAILED puzzles/{stem}.py" in r.stdout, f"{stem} did not fail:\n{r.stdout[-3000:]}"
    assert "yours vs expected" in r.stdout
    ours = circuits_lines(r.stdout)
    assert "circuits · your puzzles" in ours and not too_wide(ours), "\n".join(too_wide(ours))


def circuits_lines(out: str) -> str:
    """pytest's output less its own header (platform, rootdir, cachedir, plugins: other installed plugins widen
    it): from the first line after "collected N items" on, which is what circuits writes or trims."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if re.match(r"(collected|\d+ workers) \d+ item", line))
    return "\n".join(lines[start + 1:])


def test_circuits_lines_skip_only_pytests_header():
    out = "platform linux -- " + "x" * 100 + "\nplugins: " + "y" * 100 + "\ncollected 3 items\n\nFAILED " + "z" * 90
    assert too_wide(circuits_lines(out)) == ["FAILED " + "z" * 90]
