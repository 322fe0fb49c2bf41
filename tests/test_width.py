"""Output fits an 80-column terminal: with COLUMNS=80 no line of `circuits check N --solution`, `show`, `analyze`,
`list` or a failing `pytest puzzles/` report is wider than 80 columns, for every puzzle file found (new ones included).

Every command of every puzzle runs in-process (circuits.cli.main, as the console script calls it); one of each
kind also runs in a real process, which must print the same lines. The project is a copy of solutions/ with
stubs rebuilt from them in puzzles/ (tests never read the learner's own files)."""

from __future__ import annotations

import contextlib
import copy
import io
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass

import pytest
from helpers import ROOT
from rich.cells import cell_len

from circuits.audit.mutants import mutants
from circuits.checking.loader import load
from circuits.checking.plan import worked_examples
from circuits.cli import main
from circuits.explain import check
from circuits.workspace.reset import stub_text

CIRCUITS = [sys.executable, "-m", "circuits.cli"]
ENV = {
    **{k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "HYPOTHESIS"))},
    "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    "COLUMNS": "80",
}
STEMS = sorted(p.stem for p in (ROOT / "solutions").glob("[0-9][0-9]_*.py"))
WIDTH = 80

# Appended to a reference solution, this replaces its answer with mutant number K of circuits.mutants: a wrong
# answer for any puzzle, written by the same code that mutation-tests the checker.
WRONG = """
# ── a wrong edit, for tests/test_width.py
import types as _types
from pathlib import Path as _Path

from circuits.checking.loader import Attempt as _Attempt
from circuits.audit.mutants import mutants as _mutants
from circuits.checking.puzzle import Puzzle as _Puzzle

_puzzle = next(v for v in list(globals().values()) if isinstance(v, _Puzzle))
_answer = _types.SimpleNamespace(**{"params": globals().get("params", {}), **{n: globals()[n] for n in _puzzle.answer}})
_mutant = _mutants(_Attempt(_Path(__file__), _puzzle, _answer))[K]
for _name in [*_puzzle.answer, "params"]:
    globals()[_name] = getattr(_mutant.answer, _name)
"""


@dataclass
class Run:
    """What one command printed and its exit code, in a process of its own or in this one."""

    args: list[str]  # as a learner types them after `circuits`
    returncode: int
    stdout: str
    stderr: str
    process: bool = False

    @property
    def shown(self) -> str:
        return "circuits " + " ".join(self.args) + (" (a process)" if self.process else "")


def too_wide(text: str) -> list[str]:
    return [line for line in text.splitlines() if cell_len(line) > WIDTH]


def in_process(args: list[str]) -> Run:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return Run(list(args), code, out.getvalue(), err.getvalue())


def in_a_process(args: list[str], cwd, env: dict | None = None) -> Run:
    done = subprocess.run(
        [*CIRCUITS, *args], cwd=cwd, env=env or ENV, capture_output=True, text=True, timeout=900, check=False
    )
    return Run(list(args), done.returncode, done.stdout, done.stderr, process=True)


def _commands(stem: str) -> list[list[str]]:
    attempt = load(ROOT / "solutions" / f"{stem}.py")
    number = str(attempt.puzzle.number)
    out = [["check", number, "--solution"]]
    if attempt.puzzle.build is not None:
        text = attempt.model().vocab.join(worked_examples(attempt.puzzle)[0])
        out += [["show", number, text, "--solution"], ["analyze", number, "--solution"]]
    return out


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """solutions/ as shipped, and puzzles/ as a learner first gets it: the stubs rebuilt from the solutions."""
    root = tmp_path_factory.mktemp("project")
    (root / "puzzles").mkdir()
    shutil.copytree(ROOT / "solutions", root / "solutions")
    for stem in STEMS:
        (root / "puzzles" / f"{stem}.py").write_text(stub_text(ROOT / "solutions" / f"{stem}.py"), encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def reports(project):
    """Every command of every puzzle, in-process in the project with COLUMNS=80; then `check`, `show`, `analyze`
    and `list` once each in a real process."""
    commands = [c for stem in STEMS for c in _commands(stem)] + [["list", "--solutions"]]
    show = next(c for c in reversed(commands) if c[0] == "show")
    # one of each kind in a process too (a check that could read the verdict the in-process one stored is
    # run with --no-cache both ways, so both print a fresh report; analyze 4's tables need blocks of columns)
    kinds = [["check", "1", "--solution", "--no-cache"], show, ["analyze", "4", "--solution"], ["list", "--solutions"]]
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(project)
        mp.setenv("COLUMNS", "80")
        runs = [in_process(c) for c in commands + kinds[:1]]
    return runs + [in_a_process(args, project) for args in kinds]


def test_every_puzzle_is_covered(reports):
    shown = {" ".join(r.args[:2]) for r in reports}
    assert len(STEMS) >= 9 and all(f"check {int(stem[:2])}" in shown for stem in STEMS)
    assert {r.args[0] for r in reports if r.process} == {"check", "show", "analyze", "list"}


def test_check_show_and_analyze_fit_80_columns(reports):
    for r in reports:
        assert r.returncode == 0 and "Traceback" not in r.stderr, f"{r.shown}: {r.stderr[-1000:]}"
        assert r.stdout.strip(), r.shown
        assert not too_wide(r.stdout), f"{r.shown}:\n" + "\n".join(too_wide(r.stdout))


def test_a_real_process_prints_what_the_command_prints_in_process(reports):
    """What the in-process runs above show is what a learner's terminal shows (timings aside)."""
    by_args = {tuple(r.args): r for r in reports if not r.process}
    for r in (r for r in reports if r.process):
        same = by_args[tuple(r.args)]
        assert r.returncode == same.returncode, r.shown
        assert re.sub(r"\d+\.\d s\b", "", r.stdout) == re.sub(r"\d+\.\d s\b", "", same.stdout), r.shown


def test_tables_keep_their_row_labels_and_whole_numbers(reports):
    """No cell cut to "56.…": a table too wide is shown in blocks of columns, each with the row labels."""
    for r in reports:
        assert not re.search(r"\d\.…", r.stdout), r.shown
    for analyze4 in (r for r in reports if r.args[:2] == ["analyze", "4"]):
        assert "columns 0 to" in analyze4.stdout and re.search(r"^ +23 +", analyze4.stdout, flags=re.MULTILINE)


def _failing_mutant(stem: str) -> int:
    """The index of the first mutant the full check fails with a report (not a one-line error): mutants come
    cheapest first (an entry's sign flipped before a whole answer scaled, whose report sizes a sharpening).

    The mutants tried run on one worker thread (limits.session) under one checker.context(), as an audit's do: the
    puzzle's specs are computed once per input for all of them (a spec depends on the input alone)."""
    from circuits import limits
    from circuits.checking.checker import context

    attempt = load(ROOT / "solutions" / f"{stem}.py")
    ms = mutants(attempt)

    def first() -> int | None:
        with context():
            for k in range(len(ms)):
                trial = copy.copy(attempt)
                trial.answer = ms[k].answer
                if check(trial, n_random=500, property_examples=10, margins=False).status == "failing":
                    return k
        return None

    k = limits.session(first, stem)
    if k is None:
        pytest.fail(f"{stem}: no mutant fails with a report")
    return k


@pytest.fixture(scope="module")
def wrong_project(tmp_path_factory):
    """puzzles/ holding every reference solution with one wrong edit that fails with a report."""
    root = tmp_path_factory.mktemp("wrong")
    (root / "puzzles").mkdir()
    for stem in STEMS:
        wrong = WRONG.replace("[K]", f"[{_failing_mutant(stem)}]")
        text = (ROOT / "solutions" / f"{stem}.py").read_text(encoding="utf-8")
        (root / "puzzles" / f"{stem}.py").write_text(text + wrong, encoding="utf-8")
    return root


# In a terminal as on CI: circuits writes the same lines (it reads no CI variable) and pytest trims its short summary
# only in a terminal, so the CI run, every puzzle, is the strict one; the terminal run takes a puzzle of each kind.
TERMINAL_STEMS = [s for s in STEMS if s[:2] in ("00", "01", "16", "21")]


@pytest.mark.parametrize("ci", [False, True], ids=["terminal", "CI"])
def test_a_failing_pytest_report_fits_80_columns(wrong_project, ci):
    """On CI pytest pastes each failure's message into the short summary untrimmed: it must fit there too."""
    env = {k: v for k, v in ENV.items() if k not in ("CI", "BUILD_NUMBER")} | ({"CI": "true"} if ci else {})
    stems = STEMS if ci else TERMINAL_STEMS
    files = ["puzzles/"] if ci else [f"puzzles/{stem}.py" for stem in stems]
    r = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *files, "--no-margins", "--no-cache"],
        cwd=wrong_project,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert r.returncode == 1 and "Traceback" not in r.stdout, r.stdout[-3000:]
    for stem in stems:
        assert f"FAILED puzzles/{stem}.py" in r.stdout, f"{stem} did not fail:\n{r.stdout[-3000:]}"
    assert "yours vs expected" in r.stdout
    ours = circuits_lines(r.stdout)
    assert "circuits · your puzzles" in ours and not too_wide(ours), "\n".join(too_wide(ours))


def circuits_lines(out: str) -> str:
    """pytest's output less its own header (platform, rootdir, cachedir, plugins: other installed plugins widen
    it): from the first line after "collected N items" on, which is what circuits writes or trims."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if re.match(r"(collected|\d+ workers) \d+ item", line))
    return "\n".join(lines[start + 1 :])


def test_circuits_lines_skip_only_pytests_header():
    out = "platform linux -- " + "x" * 100 + "\nplugins: " + "y" * 100 + "\ncollected 3 items\n\nFAILED " + "z" * 90
    assert too_wide(circuits_lines(out)) == ["FAILED " + "z" * 90]


# --- the summary table (pytest puzzles/, circuits list) at 80 columns --------------------------------------------
def _summary_results(tmp_path):
    """Solved (with its margins), failing and not-attempted rows, the longest puzzle name among them."""
    from helpers import solution

    results = [check(solution("04_previous_token"), n_random=200, property_examples=10)]  # a long margin note
    failing = solution("09_duplicate_token")
    failing.answer.params = {"s": 3}
    results.append(check(failing, n_random=200, property_examples=10, margins=False))
    for stem in ("07_induction_k_composition", "19_balanced_parens", "29_smaller_by_value"):
        path = tmp_path / f"{stem}.py"
        path.write_text(stub_text(ROOT / "solutions" / f"{stem}.py"), encoding="utf-8")
        results.append(check(load(path), n_random=200, property_examples=10, margins=False))
    assert [r.status for r in results] == ["solved", "failing", "not attempted", "not attempted", "not attempted"]
    return results


def _cells(text: str) -> list[list[str]]:
    """The table's body lines, split into their cells (the box's vertical lines are │)."""
    return [[c.strip() for c in line.split("│")[1:-1]] for line in text.splitlines() if line.startswith("│")]


def _note_width(text: str) -> int:
    """The narrowest line of the table's last column, its padding taken off."""
    return min(cell_len(line.split("│")[-2]) for line in text.splitlines() if line.startswith("│")) - 2


def test_the_summary_table_fits_80_columns_and_keeps_what_to_do_readable(tmp_path):
    from circuits.display.render import to_text
    from circuits.display.report import summary_table
    from circuits.display.words import small_short

    results = _summary_results(tmp_path)
    text = to_text(summary_table(results), width=WIDTH)
    assert too_wide(text) == []
    assert _note_width(text) >= 24, text  # not a few characters a line
    rows: list[list[list[str]]] = []
    for cells in _cells(text):  # a row starts where the puzzle cell names a puzzle
        if re.match(r"\d\d_\w+$", cells[0]):
            rows.append([])
        rows[-1].append(cells)
    assert [row[0][0] for row in rows] == [r.name for r in results]
    for row, result in zip(rows, results):
        first, second = row[0], row[1]
        assert first[1] == result.status  # name, status and the start of the note share the row's first line
        passed = sum(t.status == "passed" for t in result.targets)
        assert second[0].startswith("★") and second[1].startswith(f"{passed}/{len(result.targets)} target")
        note = " ".join(cells[2] for cells in row if cells[2])
        if result.status == "not attempted":  # read back whole: every answer name, none cut
            assert note == "fill in " + ", ".join(result.attempt.missing)
        elif result.status == "failing":
            bad = next(t for t in result.targets if t.status == "failed")
            assert note == f"fails: {bad.label}"
        else:
            assert note.startswith(small_short(result.coverage))


def test_the_old_layout_fails_the_width_check():
    """Level and targets in columns of their own (the layout before) leave the last column 11 characters at 80."""
    from rich.table import Table

    from circuits.display.render import to_text

    old = Table(title="circuits puzzles", title_justify="left", header_style="bold")
    for name in ("puzzle", "level", "status", "targets"):
        old.add_column(name, no_wrap=True)
    old.add_column("margin / what to do", overflow="fold")
    old.add_row("07_induction_k_composition", "★★☆ 30m", "not attempted", "0/2", "fill in W_Q1, W_K1, W_V1, W_O1")
    text = to_text(old, width=WIDTH)
    assert too_wide(text) == [] and _note_width(text) < 24
