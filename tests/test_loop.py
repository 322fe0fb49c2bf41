"""The learning loop through the command line: watch, hint, reset (with its backup), progress and the verdict cache.

Each command runs in a copy of part of the project as its working directory: `watch` as a learner runs it, in a
subprocess (its tests are about a process: its keys, Ctrl-C, its exit); the other commands by circuits.cli.main in
this process (helpers.circuits_here), which prints and exits as the console script does, and `pytest` inline
(pytester). The cache and the backups go to the temporary XDG folders tests/conftest.py sets for the session.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from helpers import ROOT, SOLUTIONS, STEMS, circuits_here, ctrl_c_default, shipped, stub

from circuits.checking.loader import load
from circuits.workspace.reset import MARK, backup

CIRCUITS = [sys.executable, "-m", "circuits.cli"]
ENV = {
    **{k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "HYPOTHESIS"))},
    "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
    "COLUMNS": "100",
}
PUZZLES = STEMS
WAIT = 300  # seconds: a bound that only a hung watch reaches (even at load 8), not a timing requirement


def answer(stem: str, **values: str) -> str:
    """puzzles/<stem>.py with some FILL_ME_IN lines replaced by `name = value`."""
    text = stub(stem)
    for name, value in values.items():
        text, n = re.subn(rf"^{name} = FILL_ME_IN\(.*\)$", f"{name} = {value}", text, flags=re.MULTILINE)
        assert n == 1, name
    return text


@pytest.fixture
def project(tmp_path):
    """puzzles/ and solutions/ with puzzles 03 and 04, puzzles/ as shipped (not attempted); a cache of its own beside
    it."""
    root = tmp_path / "project"
    for folder in ("puzzles", "solutions"):
        for stem in ("03_uniform", "04_previous_token"):
            shipped(folder, stem, root / folder)
    return root


def env(cwd: Path) -> dict:
    """The environment of a command run in a project: its own verdict cache, next to the project."""
    return {**ENV, "XDG_CACHE_HOME": str(Path(cwd).parent / "cache")}


def run(args, cwd, **kw):
    return subprocess.run(args, cwd=cwd, env=env(cwd), capture_output=True, text=True, timeout=300, check=False, **kw)


def here(args: list[str], cwd):
    """`circuits ARGS` in `cwd` with run's cache and width, in this process."""
    return circuits_here(args, cwd, {"XDG_CACHE_HOME": str(Path(cwd).parent / "cache"), "COLUMNS": ENV["COLUMNS"]})


def pytest_here(pytester, monkeypatch, cwd, *args: str) -> subprocess.CompletedProcess:
    """`pytest ARGS` in `cwd` with run's cache and width, inline (pytester): what the plugin prints and the exit."""
    monkeypatch.chdir(cwd)
    monkeypatch.setenv("XDG_CACHE_HOME", str(Path(cwd).parent / "cache"))
    monkeypatch.setenv("COLUMNS", ENV["COLUMNS"])
    result = pytester.runpytest("-p", "no:cacheprovider", *args)
    return subprocess.CompletedProcess(["pytest", *args], result.ret, result.stdout.str(), result.stderr.str())


class Watch:
    """`circuits watch` in a subprocess, its output collected line by line as it comes."""

    def __init__(self, cwd, *args):
        self.proc = subprocess.Popen(
            [*CIRCUITS, "watch", *args],
            cwd=cwd,
            env=env(cwd),
            text=True,
            bufsize=1,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            preexec_fn=ctrl_c_default,
        )
        self.lines: list[str] = []
        self.ended = False  # the output is closed: no more lines will come
        self.changed = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stdout:
            with self.changed:
                self.lines.append(line)
                self.changed.notify_all()
        with self.changed:
            self.ended = True
            self.changed.notify_all()

    def until(self, pattern: str, after: int = 0) -> int:
        """Wait for a line matching `pattern` from line `after` on (each new line wakes this up, no sleeping);
        return the index just past that line. WAIT only bounds a hung watch."""

        def hit():
            return next((n for n in range(after, len(self.lines)) if re.search(pattern, self.lines[n])), None)

        with self.changed:
            self.changed.wait_for(lambda: hit() is not None or self.ended, timeout=WAIT)
            found = hit()
        if found is not None:
            return found + 1
        self.proc.kill()
        pytest.fail(f"watch never printed {pattern!r}; it printed:\n{''.join(self.lines)}\n{self.proc.stderr.read()}")

    def type(self, key: str):
        self.proc.stdin.write(key + "\n")
        self.proc.stdin.flush()

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait(10)


def save(path: Path, text: str):
    """Write as an editor does, and make sure the modification time moves even on a coarse clock."""
    before = path.stat().st_mtime_ns
    path.write_text(text, encoding="utf-8")
    if path.stat().st_mtime_ns == before:
        os.utime(path, ns=(before + 1_000_000, before + 1_000_000))


def test_watch_sees_a_wrong_answer_then_a_right_one_and_moves_on(project):
    w = Watch(project)
    try:
        seen = w.until(r"watching puzzles/03_uniform\.py")  # the first puzzle not solved
        assert any("03_uniform" in line and "not attempted" in line for line in w.lines)
        wrong = answer("03_uniform", W_Q="[[0, 0]]", W_K="[[0, 0]]", W_V="[[0, 1]]")  # counts consonants
        save(project / "puzzles" / "03_uniform.py", wrong.replace("W_V = [[0, 1]]", "W_V = [[0, 1]"))
        seen = w.until(
            r"^! puzzles/03_uniform\.py line \d+: syntax error", seen
        )  # half-typed: one line, still watching
        save(project / "puzzles" / "03_uniform.py", wrong)
        seen = w.until(r"03_uniform .* failing", seen)
        seen = w.until(r"shortest failing input", seen)
        w.type("h")
        seen = w.until(r"hint 1 of \d+: ", seen)
        save(project / "puzzles" / "03_uniform.py", wrong.replace("W_V = [[0, 1]]", "W_V = [[1, 0]]"))
        seen = w.until(r"✓ 03_uniform solved: every target holds on .*worked example", seen)
        w.until(r"next: puzzles/04_previous_token\.py", seen)
        w.until(r"04_previous_token .* not attempted", seen)
        w.type("q")
        assert w.proc.wait(WAIT) == 0
    finally:
        w.close()


def test_watch_opens_a_solved_puzzle_it_is_asked_for_and_wraps_to_the_first_unsolved(project):
    """`watch 3` on a solved 03 stays on it (to experiment); `n` goes on to 04, then past the last puzzle back to
    the first unsolved one; and watch's solved verdict answers `circuits check` from the cache."""
    shipped("solutions", "03_uniform", project / "puzzles")  # 03 solved; 04 not attempted
    w = Watch(project, "3")
    try:
        seen = w.until(r"03_uniform .* solved")
        seen = w.until(r"watching puzzles/03_uniform\.py", seen)
        assert not any("stuck?" in line for line in w.lines[:seen]), "".join(w.lines)  # solved: no hint offered
        w.type("n")
        seen = w.until(r"watching puzzles/04_previous_token\.py", seen)
        w.type("n")
        seen = w.until(r"watching puzzles/04_previous_token\.py", seen)  # the only unsolved puzzle, again
        w.type("q")
        assert w.proc.wait(WAIT) == 0
    finally:
        w.close()
    r = here(["check", "3"], project)
    assert r.returncode == 0 and "(solved before: this answer and the library are unchanged" in r.stdout, r.stdout


def test_watch_ends_on_ctrl_c_without_a_traceback(project):
    w = Watch(project, "4")
    try:
        w.until(r"watching puzzles/04_previous_token\.py")
        w.proc.send_signal(signal.SIGINT)
        assert w.proc.wait(WAIT) == 130
        err = w.proc.stderr.read()
        assert "Traceback" not in err and "interrupted" in err
    finally:
        w.close()


def test_watch_refuses_an_unknown_puzzle_in_one_line(project):
    r = run([*CIRCUITS, "watch", "nosuch"], project, stdin=subprocess.DEVNULL)
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "no puzzle named 'nosuch'" in r.stderr


@pytest.mark.parametrize("stem", PUZZLES)
def test_every_puzzle_has_staged_hints_that_never_give_the_answer(stem, tmp_path):
    puzzle = load(shipped("puzzles", stem, tmp_path)).puzzle
    assert len(puzzle.hints) >= 3
    solution = (SOLUTIONS / f"{stem}.py").read_text(encoding="utf-8")
    assert not any(hint in stub(stem) for hint in puzzle.hints), f"{stem}: the worksheet shows its hint ladder"
    answer_lines = [
        line.strip()
        for line in solution[solution.index(MARK) :].splitlines()[1:]
        if "=" in line and not line.lstrip().startswith("#") and len(line.strip()) >= 12
    ]
    assert answer_lines
    for hint in puzzle.hints:
        for line in answer_lines:
            assert line not in hint, f"{stem}: a hint gives the answer's line {line!r}"


def test_hint_shows_the_levels_asked_for(project):
    one = here(["hint", "3"], project)
    assert one.returncode == 0 and "hint 1 of 3" in one.stdout and "hint 2 of 3" not in one.stdout
    assert "circuits hint 3 --level 2" in one.stdout
    three = here(["hint", "uniform", "--level", "3"], project)
    assert three.returncode == 0 and all(f"hint {n} of 3" in three.stdout for n in (1, 2, 3))
    bad = here(["hint", "3", "--level", "4"], project)
    assert bad.returncode == 2 and bad.stderr.strip() == "circuits: --level 4: 03_uniform has hints 1 to 3"


def test_a_puzzle_with_a_bad_hints_list_is_refused_when_built():
    from circuits.checking.puzzle import Puzzle
    from circuits.errors import CircuitError

    good = load(SOLUTIONS / "03_uniform.py").puzzle
    with pytest.raises(CircuitError, match="hints= must be a list of non-empty strings"):
        Puzzle(
            good.number, good.name, good.title, good.answer, good.targets, good.build, good.inputs, hints="look at W_V"
        )
    with pytest.raises(CircuitError, match="hints="):
        Puzzle(good.number, good.name, good.title, good.answer, good.targets, good.build, good.inputs, hints=["", "x"])


@pytest.mark.parametrize("stem", PUZZLES)
def test_the_stub_rebuilt_from_the_solution_loads_as_the_same_puzzle(stem, tmp_path):
    fresh = load(shipped("puzzles", stem, tmp_path))
    assert fresh.reference == SOLUTIONS / f"{stem}.py"  # the shipped puzzle is checked, not the stub's copy
    assert fresh.puzzle.id == stem and len(fresh.puzzle.hints) >= 3
    assert fresh.missing and not fresh.edits


def test_reset_keeps_the_learners_answer_in_a_backup_and_restores_the_stub(project):
    path = project / "puzzles" / "03_uniform.py"
    mine = answer("03_uniform", W_Q="[[0, 0]]", W_K="[[0, 0]]", W_V="[[0, 1]]  # my own try")
    save(path, mine)
    r = here(["reset", "3"], project)
    assert r.returncode == 0, r.stderr
    saved = Path(re.search(r"saved your puzzles/03_uniform\.py to (\S+)", r.stdout).group(1))
    assert saved.is_absolute() and saved.read_text(encoding="utf-8") == mine
    assert saved.is_relative_to(os.environ["XDG_DATA_HOME"])
    assert path.read_text(encoding="utf-8") == stub("03_uniform")
    again = mine.replace("my own try", "my second try")
    save(path, again)
    r2 = here(["reset", "uniform"], project)
    saved2 = Path(re.search(r" to (\S+)", r2.stdout).group(1))
    assert saved2 != saved and saved2.read_text(encoding="utf-8") == again
    assert saved.read_text(encoding="utf-8") == mine  # the first backup is untouched
    r3 = here(["reset", "3"], project)  # the stub already: nothing to save
    assert r3.returncode == 0 and "nothing to back up" in r3.stdout
    path.unlink()  # a deleted puzzle file comes back too
    assert here(["reset", "3"], project).returncode == 0 and path.exists()


def test_backups_made_in_the_same_second_never_overwrite_each_other(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    monkeypatch.setattr(time, "gmtime", lambda *a: time.struct_time((2026, 1, 2, 3, 4, 5, 4, 2, 0)))
    f = tmp_path / "puzzles" / "03_uniform.py"
    f.parent.mkdir()
    made = []
    for n in range(3):
        f.write_text(f"answer {n}\n")
        made.append(backup(f, tmp_path))
    assert len(set(made)) == 3 and [m.read_text() for m in made] == [f"answer {n}\n" for n in range(3)]


def test_a_reset_without_a_stub_block_changes_nothing(project):
    """A course's own puzzle (83: no shipped twin) whose solution lost its stub block."""
    text = (SOLUTIONS / "03_uniform.py").read_text(encoding="utf-8").replace("number=3,", "number=83,")
    (project / "solutions" / "83_uniform.py").write_text(text[: text.index("# ── stub")], encoding="utf-8")
    mine = answer("03_uniform", W_Q="[[0, 0]]", W_K="[[0, 0]]", W_V="[[1, 0]]").replace("number=3,", "number=83,")
    (project / "puzzles" / "83_uniform.py").write_text(mine, encoding="utf-8")
    r = here(["reset", "83"], project)
    assert r.returncode == 2 and "no stub block" in r.stderr and "Traceback" not in r.stderr
    assert (project / "puzzles" / "83_uniform.py").read_text(encoding="utf-8") == mine


def _files(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*")}


def test_a_solved_verdict_is_cached_outside_the_project_until_the_answer_changes(project):
    path = project / "puzzles" / "03_uniform.py"
    save(path, answer("03_uniform", W_Q="[[0, 0]]", W_K="[[0, 0]]", W_V="[[1, 0]]"))
    before = _files(project)
    first = here(["check", "3"], project)
    assert first.returncode == 0 and "solved before" not in first.stdout
    second = here(["check", "3"], project)
    assert second.returncode == 0 and "solved before: this answer and the library are unchanged" in second.stdout
    assert "checked on:" in second.stdout  # the cached report still says what was certified
    fresh = here(["check", "3", "--no-cache"], project)
    assert fresh.returncode == 0 and "solved before" not in fresh.stdout
    save(path, path.read_text(encoding="utf-8") + "# an edit\n")  # the same answer: its verdict stands
    commented = here(["check", "3"], project)
    assert commented.returncode == 0 and "solved before" in commented.stdout
    save(path, answer("03_uniform", W_Q="[[0, 0]]", W_K="[[1, 0]]", W_V="[[1, 0]]"))  # another answer: checked
    edited = here(["check", "3"], project)
    assert edited.returncode == 0 and "solved before" not in edited.stdout
    assert _files(project) == before  # nothing written inside the project
    verdicts = project.parent / "cache" / "circuits" / "verdicts"
    assert len(list(verdicts.glob("*.json"))) == 2  # the answer as first solved, and as edited


def test_a_failing_verdict_is_never_cached(project):
    path = project / "puzzles" / "03_uniform.py"
    save(path, answer("03_uniform", W_Q="[[0, 0]]", W_K="[[0, 0]]", W_V="[[0, 1]]"))
    for _ in range(2):
        r = here(["check", "3", "--no-margins"], project)
        assert r.returncode == 1 and "failing" in r.stdout and "solved before" not in r.stdout


def test_a_lighter_check_does_not_stand_for_a_full_one(project):
    save(project / "puzzles" / "03_uniform.py", answer("03_uniform", W_Q="[[0, 0]]", W_K="[[0, 0]]", W_V="[[1, 0]]"))
    assert here(["list", "--no-cache"], project).returncode == 0
    assert here(["list"], project).returncode == 0  # caches list's light verdict (2,000 random inputs)
    full = here(["check", "3"], project)
    assert "solved before" not in full.stdout and "margins:" in full.stdout


def test_list_and_pytest_show_progress_and_the_next_puzzle(project, pytester, monkeypatch):
    save(project / "puzzles" / "03_uniform.py", answer("03_uniform", W_Q="[[0, 0]]", W_K="[[0, 0]]", W_V="[[1, 0]]"))
    ls = here(["list"], project)
    assert re.search(r"solved 1 of 2 █+░+\nnext: puzzles/04_previous_token\.py \(circuits watch 4\)", ls.stdout), (
        ls.stdout
    )
    py = pytest_here(pytester, monkeypatch, project, "puzzles/", "--no-cache")
    assert py.returncode == 0 and re.search(r"solved 1 of 2 .*\nnext: puzzles/04_previous_token\.py", py.stdout), (
        py.stdout
    )


def test_a_failing_pytest_report_shows_the_first_hint_once(project, pytester, monkeypatch):
    save(project / "puzzles" / "03_uniform.py", answer("03_uniform", W_Q="[[0, 0]]", W_K="[[0, 0]]", W_V="[[0, 1]]"))
    py = pytest_here(pytester, monkeypatch, project, "puzzles/", "--no-margins")
    assert py.returncode == 1
    hint = load(SOLUTIONS / "03_uniform.py").puzzle.hints[0]
    assert py.stdout.count("puzzle hint 1 of 3: ") == 1 and hint[:40] in py.stdout.replace("\n", " ")


def test_the_cache_key_covers_the_whole_library(monkeypatch):
    """An edit anywhere in circuits (the model, the display), not only in checking/, is a new library version."""
    from pathlib import Path

    from circuits.checking import library

    read, original = [], Path.read_bytes
    monkeypatch.setattr(Path, "read_bytes", lambda self: read.append(self.as_posix()) or original(self))
    monkeypatch.setattr(library, "_LIBRARY", [])
    library.library_version()
    assert any(p.endswith("circuits/model/forward.py") for p in read)
    assert any(p.endswith("circuits/display/render.py") for p in read)
    assert any(p.endswith("circuits/checking/checker.py") for p in read)
