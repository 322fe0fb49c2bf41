"""The learner's workspace: `circuits init`, the shipped puzzle checked whatever the file says, courses anywhere,
and a test suite that never reads the learner's files."""

import os
import re
from pathlib import Path

import pytest
from conftest import learner_file_recorder
from helpers import STEMS, shipped, stub

from circuits.checking.loader import load
from circuits.cli import main
from circuits.explain import check


def answered(stem: str, tail: str = "", **values: str) -> str:
    """The stub of `stem` with some FILL_ME_IN lines replaced by `name = value`, and `tail` appended."""
    text = stub(stem)
    for name, value in values.items():
        text, n = re.subn(rf"^{name} = FILL_ME_IN\(.*\)$", f"{name} = {value}", text, flags=re.M)
        assert n == 1, name
    return text + tail


# --- circuits init ----------------------------------------------------------------------------------------------------
def test_init_makes_a_workspace_and_never_writes_over_a_file(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["init", "course"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines() == [
        f"created course/: {len(STEMS)} puzzles in course/puzzles, README.md and pytest.ini",
        "next: cd course && circuits watch",
    ]
    course = tmp_path / "course"
    assert sorted(p.stem for p in (course / "puzzles").iterdir()) == STEMS
    assert (course / "puzzles" / "03_uniform.py").read_text(encoding="utf-8") == stub("03_uniform")
    assert "circuits watch" in (course / "README.md").read_text(encoding="utf-8")
    assert "testpaths = puzzles" in (course / "pytest.ini").read_text(encoding="utf-8")

    mine = answered("03_uniform", W_Q="[[0, 0]]", W_K="[[0, 0]]", W_V="[[0, 1]]  # mine")
    (course / "puzzles" / "03_uniform.py").write_text(mine, encoding="utf-8")
    (course / "README.md").write_text("my notes\n", encoding="utf-8")
    (course / "puzzles" / "05_virtual_head.py").unlink()  # e.g. a puzzle new in this release
    assert main(["init", "course"]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[:2] == [
        "added to course/: 05_virtual_head.py",
        f"kept as they are: {len(STEMS) + 1} files already there",
    ]
    assert (course / "puzzles" / "03_uniform.py").read_text(encoding="utf-8") == mine
    assert (course / "README.md").read_text(encoding="utf-8") == "my notes\n"
    assert main(["init", "course"]) == 0
    assert "nothing was written" in capsys.readouterr().out


def test_init_into_a_file_is_one_line(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "course").write_text("not a folder\n")
    assert main(["init", "course"]) == 2
    err = capsys.readouterr().err
    assert err == "circuits: course is a file, not a folder: name a new or existing folder for the workspace\n"
    assert (tmp_path / "course").read_text() == "not a folder\n"


def test_in_a_workspace_pytest_reports_every_puzzle_not_attempted(pytester):
    assert main(["init", str(pytester.path)]) == 0
    result = pytester.runpytest("--no-cache")
    result.assert_outcomes(
        skipped=sum(len(load(shipped("puzzles", s, pytester.path / "x")).puzzle.targets) for s in STEMS)
    )
    result.stdout.fnmatch_lines([f"solved 0 of {len(STEMS)} *", "next: puzzles/00_attention.py (circuits watch 0)"])


def test_every_command_works_in_a_workspace(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert main(["init", "."]) == 0
    assert capsys.readouterr().out.rstrip().endswith("\nnext: circuits watch")  # no `cd .` to a folder one is in
    path = tmp_path / "puzzles" / "03_uniform.py"
    path.write_text(answered("03_uniform", W_Q="[[0, 0]]", W_K="[[0, 0]]", W_V="[[0, 1]]"), encoding="utf-8")
    capsys.readouterr()
    assert main(["check", "3", "--no-margins", "--no-cache"]) == 1
    assert capsys.readouterr().out.startswith("03_uniform · Uniform attention")
    assert main(["check", "3", "--solution", "--no-margins", "--no-cache"]) == 0  # the shipped reference
    assert main(["hint", "3", "--level", "2"]) == 0
    assert "hint 2 of 3" in capsys.readouterr().out
    assert main(["show", "3", "ab"]) == 0
    assert "yours vs expected" in capsys.readouterr().out
    assert main(["list", "--no-cache"]) == 0
    assert f"solved 0 of {len(STEMS)}" in capsys.readouterr().out
    assert main(["reset", "3"]) == 0
    assert path.read_text(encoding="utf-8") == stub("03_uniform")
    path.unlink()
    assert main(["reset", "uniform"]) == 0  # a deleted puzzle file comes back too
    assert path.read_text(encoding="utf-8") == stub("03_uniform")


# --- the shipped puzzle is what is checked ------------------------------------------------------------------------
CHEAT = (
    "\nimport dataclasses\n"
    "puzzle = dataclasses.replace(puzzle, targets=[dataclasses.replace(t, tol=10.0) for t in puzzle.targets])\n"
)


def test_a_file_that_loosens_its_own_targets_is_checked_against_the_shipped_ones(tmp_path):
    text = answered("01_consonants", CHEAT, W_Q="[[0, 0]]", W_K="[[0, 0]]", W_V="[[1, 0], [0, 1]]")
    path = tmp_path / "puzzles" / "01_consonants.py"
    path.parent.mkdir()
    path.write_text(text, encoding="utf-8")
    attempt = load(path)
    line = (
        text.splitlines().index(
            "puzzle = dataclasses.replace(puzzle, targets=[dataclasses.replace(t, tol=10.0) for t in puzzle.targets])"
        )
        + 1
    )
    assert [(e.name, e.line) for e in attempt.edits] == [("puzzle", line)]
    assert attempt.puzzle.targets[0].tol == 0.1
    result = check(attempt, n_random=500, margins=False)
    assert result.status == "failing"


def test_an_edited_given_is_named_with_its_line_and_the_original_is_used(tmp_path, monkeypatch, capsys):
    from helpers import SOLUTIONS

    solution = (SOLUTIONS / "01_consonants.py").read_text(encoding="utf-8")
    text = solution.replace(
        '    W_E["vowel" if letter in VOWELS else "consonant", letter] = 1',
        '    W_E["vowel" if letter in VOWELS else "consonant", letter] = 2',
    )
    assert text != solution
    (tmp_path / "puzzles").mkdir()
    (tmp_path / "puzzles" / "01_consonants.py").write_text(text, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["check", "1", "--no-margins", "--no-cache"]) == 0  # the answer is right for the shipped W_E
    out = capsys.readouterr().out
    line = next(n for n, t in enumerate(text.splitlines(), 1) if "letter] = 2" in t)
    assert f"! puzzles/01_consonants.py line {line}: given `W_E` changed; checked as shipped" in out
    assert "01_consonants · Consonant detection · solved" in out
    assert main(["check", "1", "--no-margins", "--json"]) == 0
    import json

    assert json.loads(capsys.readouterr().out)["edited_givens"] == [{"name": "W_E", "line": line, "removed": False}]


def test_a_file_with_no_shipped_twin_is_its_own_source(tmp_path):
    text = stub("03_uniform").replace("number=3,", "number=93,")
    path = tmp_path / "puzzles" / "93_uniform.py"
    path.parent.mkdir()
    path.write_text(text, encoding="utf-8")
    attempt = load(path)
    assert attempt.reference is None and attempt.puzzle.number == 93 and attempt.edits == []


# --- the suite never reads the learner's files ----------------------------------------------------------------------
def test_the_recorder_that_guards_the_learners_files_sees_opens_and_listings(tmp_path):
    folder = tmp_path / "puzzles"
    folder.mkdir()
    (folder / "01_consonants.py").write_text("x = 1\n")
    seen: list[str] = []
    hook = learner_file_recorder(str(folder), seen)
    hook("open", (str(folder / "01_consonants.py"), "r", 0))
    hook("os.scandir", (str(folder),))
    hook("open", (str(tmp_path / "elsewhere.py"), "r", 0))
    assert [r.split(" (")[0] for r in seen] == [str(folder / "01_consonants.py"), str(folder)]
    assert "test_the_recorder_that_guards_the_learners_files_sees_opens_and_listings" in seen[0]  # which test read


@pytest.mark.parametrize("state", ["solved", "deleted"])
def test_the_projects_puzzle_tests_pass_whatever_the_learners_folder_holds(pytester, state):
    """A copy of the project whose puzzles/ a learner solved or deleted: the curriculum's tests still pass."""
    import shutil

    from helpers import ROOT

    for name in ("conftest.py", "helpers.py", "test_puzzle_files.py"):
        shutil.copy(ROOT / "tests" / name, pytester.path / name)
    puzzles = pytester.path / "puzzles"
    puzzles.mkdir()
    if state == "solved":
        shipped("solutions", "03_uniform", puzzles)
    result = pytester.runpytest_subprocess(
        "-q", "-p", "no:cacheprovider", "test_puzzle_files.py", "-k", "uniform or there_are"
    )
    result.assert_outcomes(passed=3)
    assert os.listdir(puzzles) == (["03_uniform.py"] if state == "solved" else [])


def test_a_helper_module_or_data_file_the_puzzle_reads_is_part_of_its_cached_verdict(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    shipped("puzzles", "03_uniform", tmp_path / "puzzles")
    path = tmp_path / "puzzles" / "03_uniform.py"
    path.write_text(
        answered(
            "03_uniform",
            "\nimport json, os, sys\nsys.path.insert(0, os.path.dirname(__file__))\n"
            "import mylib\nW_Q = W_K = mylib.ZERO\n"
            "W_V = json.load(open(os.path.join(os.path.dirname(__file__), 'v.json')))\n",
            W_Q="None",
            W_K="None",
            W_V="None",
        ),
        encoding="utf-8",
    )
    (tmp_path / "puzzles" / "mylib.py").write_text("ZERO = [[0, 0]]\n", encoding="utf-8")
    (tmp_path / "puzzles" / "v.json").write_text("[[1, 0]]", encoding="utf-8")
    assert main(["check", "3", "--no-margins"]) == 0
    assert main(["check", "3", "--no-margins"]) == 0
    assert "(solved before: this answer and the library are unchanged" in capsys.readouterr().out
    (tmp_path / "puzzles" / "v.json").write_text("[[0, 1]]", encoding="utf-8")  # the data file, edited wrongly
    assert main(["check", "3", "--no-margins"]) == 1
    (tmp_path / "puzzles" / "v.json").write_text("[[1, 0]]", encoding="utf-8")
    (tmp_path / "puzzles" / "mylib.py").write_text("ZERO = [[0, 1]]\n", encoding="utf-8")  # the module, likewise
    capsys.readouterr()
    assert main(["check", "3", "--no-margins"]) != 0
    assert "solved before" not in capsys.readouterr().out
    assert sorted(os.listdir(tmp_path / "puzzles")) == ["03_uniform.py", "mylib.py", "v.json"]  # no __pycache__


def test_every_command_works_in_a_folder_declared_with_circuits_paths(tmp_path, monkeypatch, capsys):
    """A course kept in mycourse/, declared once for pytest: the commands its summary suggests work there too."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "pytest.ini").write_text("[pytest]\ncircuits_paths = mycourse\n", encoding="utf-8")
    course = tmp_path / "mycourse"
    course.mkdir()
    text = (
        stub("03_uniform")
        .replace("number=3,", "number=80,")
        .replace('title="', 'hints=["look at W_V", "x", "y"], title="')
    )
    (course / "80_uniform.py").write_text(text, encoding="utf-8")
    assert main(["list", "--no-cache"]) == 0
    assert "next: mycourse/80_uniform.py (circuits watch 80)" in capsys.readouterr().out
    assert main(["hint", "80"]) == 0
    assert "hint 1 of 3: look at W_V" in capsys.readouterr().out
    assert main(["check", "80", "--no-cache"]) == 1  # not attempted: not solved
    assert "80_uniform · Uniform attention" in capsys.readouterr().out
    (tmp_path / "pytest.ini").write_text("[pytest]\ncircuits_paths = mycourse my_course\n", encoding="utf-8")
    assert main(["list"]) == 2
    assert capsys.readouterr().err == (
        "circuits: pytest.ini: circuits_paths names my_course, which is not there; it lists folders of puzzle files\n"
    )


def test_watch_runs_the_loop_in_a_fresh_workspace(tmp_path):
    """The quick start from an empty folder: `circuits init course`, `cd course`, `circuits watch` (here quit at
    once)."""
    import subprocess
    import sys

    assert main(["init", str(tmp_path / "course")]) == 0
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    done = subprocess.run(
        [sys.executable, "-m", "circuits.cli", "watch"],
        cwd=tmp_path / "course",
        input="q\n",
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    assert "00_attention · Attention by hand · not attempted" in done.stdout
    assert "watching puzzles/00_attention.py" in done.stdout


def test_init_where_puzzles_is_a_file_fails_in_one_line_and_writes_nothing(tmp_path, monkeypatch, capsys):
    """Issue 37: `circuits init` with a file named puzzles reported "30 files kept"."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "puzzles").write_text("mine\n")
    assert main(["init", "."]) == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.strip().splitlines()) == 1, err
    assert err.startswith("circuits: puzzles is a file, not a folder") and "nothing was written" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["puzzles"]
    assert (tmp_path / "puzzles").read_text() == "mine\n"


@pytest.mark.parametrize(
    "name, text",
    [
        ("pyproject.toml", '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n'),
        ("setup.cfg", "[tool:pytest]\ntestpaths = tests\n"),
        ("tox.ini", "[pytest]\ntestpaths = tests\n"),
    ],
)
def test_init_never_adds_a_pytest_ini_that_overrides_the_projects_own_settings(
    tmp_path, monkeypatch, capsys, name, text
):
    """Issue 37: `init .` in a project whose pytest settings live in pyproject.toml added a pytest.ini, which pytest
    reads first: the project's own tests stopped running."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / name).write_text(text)
    assert main(["init", "."]) == 0
    out = capsys.readouterr().out
    assert not (tmp_path / "pytest.ini").exists()
    assert (tmp_path / name).read_text() == text
    assert f"pytest.ini not written: it would override your pytest settings in {name}" in out
    assert 'add "puzzles" to testpaths there' in out and "and pytest.ini" not in out
    assert all(len(line) <= 80 for line in out.splitlines()), out


def test_a_lone_surrogate_in_a_message_cannot_garble_the_summary_table():
    """Issue 37: a learner's exception message with a lone surrogate broke the summary table (a UnicodeEncodeError
    half-way through the table, in a terminal)."""
    from circuits.checking.checker import PuzzleResult
    from circuits.display.render import to_text
    from circuits.display.report import summary_table
    from circuits.errors import CircuitError

    rows = [
        PuzzleResult.unloaded(Path("puzzles/01_consonants.py"), CircuitError("raised ValueError: bad \ud800 x")),
        PuzzleResult.unloaded(Path("puzzles/02_\udcff.py"), CircuitError("cannot load")),
    ]
    text = to_text(summary_table(rows), width=80)
    text.encode("utf-8")  # what a terminal does with it: no surrogate is left to fail on
    assert "bad \\ud800 x" in text and "02_\\udcff" in text
    widths = {len(line) for line in text.splitlines()[1:] if line.strip()}
    assert len(widths) == 1, text  # every row of the table as wide as the others


def test_an_unused_params_key_is_warned_at_the_learners_file(tmp_path):
    """Issue 37: the warning pointed into the shipped solution (circuits/curriculum/solutions/…, the build() the
    checker runs), not at the learner's file and its `params` line."""
    import warnings

    from circuits.errors import CircuitWarning

    path = shipped("solutions", "07_induction_k_composition", tmp_path / "puzzles")
    text = path.read_text(encoding="utf-8").replace('params = {"s": 30}', 'params = {"s": 30, "t": 2}')
    path.write_text(text, encoding="utf-8")
    with warnings.catch_warnings(record=True) as said:
        warnings.simplefilter("always")
        load(path).model()
    ours = [w for w in said if issubclass(w.category, CircuitWarning)]
    assert len(ours) == 1, [str(w.message) for w in said]
    (w,) = ours
    assert w.filename == str(path) and "curriculum" not in w.filename and "solutions" not in str(w.message)
    assert text.splitlines()[w.lineno - 1].startswith("params = ")
    assert "parameter 't' is bound in params but no matrix uses it" in str(w.message)
