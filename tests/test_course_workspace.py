"""A student's workspace made from a course: `circuits init W --course COURSE`.

The workspace holds the course's stubs and records the course in its pytest.ini (`circuits_course`),
so `circuits check/list/...` and `pytest` there check against the course's references with no
$CIRCUITS_COURSE: the statement is the course's, whatever the student's file says.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import ROOT, circuits_here
from test_course import COURSE, course, loosened_and_wrong, renumbered  # noqa: F401  (course: the fixture)

from circuits.checking import curriculum
from circuits.checking.loader import COURSE_ENV, load
from circuits.cli import main
from circuits.workspace.reset import STUB, stub_text


@pytest.fixture(autouse=True)
def no_course_env(monkeypatch):
    """No test here may lean on $CIRCUITS_COURSE: the workspace alone says which course it is."""
    monkeypatch.delenv(COURSE_ENV, raising=False)


@pytest.fixture
def workspace(course, tmp_path, monkeypatch, capsys) -> Path:  # noqa: F811
    """W, made by `circuits init W --course COURSE` from the folder holding it (which is then the working folder)."""
    monkeypatch.chdir(tmp_path)
    assert main(["init", "W", "--course", str(course)]) == 0
    capsys.readouterr()
    return tmp_path / "W"


def pasted(stem: str) -> str:
    """The course's stub of `stem` with the reference's answer pasted over its FILL_ME_IN lines."""
    text = renumbered(COURSE[stem], stem)
    return text[: text.index(STUB)]


def run(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != COURSE_ENV}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def here(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    """`circuits ARGS` as run gives it, by circuits.cli.main in this process (no Python started for it)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.delenv(COURSE_ENV, raising=False)
        return circuits_here(args, cwd)


def test_init_writes_the_course_stubs_and_records_the_course(course, tmp_path, monkeypatch, capsys):  # noqa: F811
    monkeypatch.chdir(tmp_path)
    assert main(["init", "W", "--course", str(course)]) == 0
    assert capsys.readouterr().out.splitlines() == [
        "created W/: 3 puzzles in W/puzzles, README.md and pytest.ini",
        f"course: {course} (recorded in pytest.ini: puzzles checked against it)",
        "next: cd W && circuits watch",
    ]
    work = tmp_path / "W"
    assert sorted(p.name for p in (work / "puzzles").iterdir()) == sorted(f"{s}.py" for s in COURSE)
    for stem in COURSE:
        assert (work / "puzzles" / f"{stem}.py").read_text(encoding="utf-8") == stub_text(
            course / "solutions" / f"{stem}.py"
        )
    assert f"circuits_course = {course}\n" in (work / "pytest.ini").read_text(encoding="utf-8")
    readme = (work / "README.md").read_text(encoding="utf-8")
    assert str(course) in readme and "statements come from the course" in readme
    assert not (work / "solutions").exists()  # the references stay with the course


def test_every_course_puzzle_is_not_attempted_under_list(workspace, monkeypatch, capsys):
    monkeypatch.chdir(workspace)
    assert main(["list", "--no-cache"]) == 0
    out = capsys.readouterr().out
    assert out.count("not attempted") == len(COURSE) and "solved 0 of 3" in out
    assert all(stem in out for stem in COURSE)


def test_every_course_puzzle_is_not_attempted_under_pytest(course, pytester):  # noqa: F811
    assert main(["init", str(pytester.path), "--course", str(course)]) == 0
    result = pytester.runpytest("--no-cache", "--no-margins")
    result.assert_outcomes(skipped=4)  # 41 and 42 have one target each, 43 two
    result.stdout.fnmatch_lines(["solved 0 of 3 *", "next: puzzles/41_uniform.py (circuits watch 41)"])


@pytest.mark.parametrize("stem", list(COURSE))
def test_a_reference_answer_pasted_in_is_solved_with_no_env_var(
    stem,
    course,  # noqa: F811
    workspace,
    monkeypatch,
    capsys,
):
    path = workspace / "puzzles" / f"{stem}.py"
    path.write_text(pasted(stem), encoding="utf-8")
    monkeypatch.chdir(workspace)
    assert main(["check", stem[:2], "--no-margins", "--no-cache"]) == 0
    assert capsys.readouterr().out.splitlines()[0].endswith("· solved")
    assert load(path).reference == course / "solutions" / f"{stem}.py"  # the course states it, not the file


def test_an_edited_given_is_named_and_the_course_is_checked(workspace, monkeypatch, capsys):
    path = workspace / "puzzles" / "41_uniform.py"
    mine = pasted("41_uniform").replace('VOWELS = "aeiou"', 'VOWELS = "aeiouy"', 1)
    path.write_text(mine, encoding="utf-8")
    monkeypatch.chdir(workspace)
    assert main(["check", "41", "--no-margins", "--no-cache"]) == 0  # the course's vowels: the answer is right
    out = capsys.readouterr().out
    assert "given `VOWELS` differs from the course's; checked as the course states it" in " ".join(out.split())


def test_a_loosened_target_is_named_and_checked_as_the_course_states_it(workspace):
    (workspace / "puzzles" / "41_uniform.py").write_text(loosened_and_wrong(), encoding="utf-8")
    proc = here(["check", "41", "--no-margins", "--no-cache"], workspace)
    assert proc.returncode == 1, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert proc.stdout.splitlines()[0].endswith("· failing")
    assert "given `puzzle` differs from the course's; checked as the course states it" in " ".join(proc.stdout.split())
    assert "tolerance 1e-09" in proc.stdout  # the course's tolerance, not the file's tol=10
    proc = run(["-m", "pytest", "-p", "no:cacheprovider", "--no-margins", "--no-cache"], workspace)
    said = " ".join(proc.stdout.split())
    assert "1 failed" in said and "given `puzzle` differs from the course's" in said, proc.stdout[-2000:]


def test_init_into_a_folder_with_files_keeps_them(course, tmp_path, monkeypatch, capsys):  # noqa: F811
    monkeypatch.chdir(tmp_path)
    work = tmp_path / "W"
    (work / "puzzles").mkdir(parents=True)
    mine = {"puzzles/41_uniform.py": "# my answer\n", "README.md": "my notes\n", "pytest.ini": "[pytest]\n"}
    for rel, text in mine.items():
        (work / rel).write_text(text, encoding="utf-8")
    assert main(["init", "W", "--course", str(course)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[:2] == ["added to W/: 42_xor_mlp.py, 43_virtual_head.py", "kept as they are: 3 files already there"]
    assert out[2:4] == [
        "pytest.ini kept as it is, so the course is not recorded; add to its pytest settings:",
        f"  circuits_course = {course}",
    ]
    assert all((work / rel).read_text(encoding="utf-8") == text for rel, text in mine.items())


@pytest.mark.parametrize("given", ["nowhere", "puzzles"])
def test_a_bad_course_is_one_line(given, course, tmp_path):  # noqa: F811
    shutil.copytree(course / "puzzles", tmp_path / "puzzles")  # a folder of stubs is no course: no solutions/
    proc = here(["init", "W", "--course", given], tmp_path)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert proc.stderr == f"circuits: --course {given} is no course: it has no solutions/NN_name.py\n"
    assert not (tmp_path / "W").exists()


def test_reinit_adds_a_new_course_puzzle_and_touches_nothing(course, tmp_path, monkeypatch, capsys):  # noqa: F811
    mine_course = tmp_path / "course"
    shutil.copytree(course, mine_course)
    monkeypatch.chdir(tmp_path)
    assert main(["init", "W", "--course", "course"]) == 0
    work = tmp_path / "W"
    (work / "puzzles" / "41_uniform.py").write_text(pasted("41_uniform"), encoding="utf-8")
    before = {p: p.read_bytes() for p in work.rglob("*") if p.is_file()}
    (mine_course / "solutions" / "44_uniform_again.py").write_text(
        renumbered("03_uniform", "44_uniform_again"), encoding="utf-8"
    )
    capsys.readouterr()
    assert main(["init", "W", "--course", "course"]) == 0
    assert capsys.readouterr().out.splitlines()[:2] == [
        "added to W/: 44_uniform_again.py",
        "kept as they are: 5 files already there",
    ]
    assert all(p.read_bytes() == data for p, data in before.items())
    assert (work / "puzzles" / "44_uniform_again.py").read_text(encoding="utf-8") == stub_text(
        mine_course / "solutions" / "44_uniform_again.py"
    )


def test_a_course_puzzle_with_a_shipped_id_is_the_shipped_one(course, tmp_path, monkeypatch, capsys):  # noqa: F811
    mine_course = tmp_path / "course"
    shutil.copytree(course, mine_course)
    shutil.copy(curriculum.folder() / "03_uniform.py", mine_course / "solutions" / "03_uniform.py")
    monkeypatch.chdir(tmp_path)
    assert main(["init", "W", "--course", "course"]) == 0
    assert (
        "note: 03_uniform: a shipped puzzle has this id and wins; renumber the course's"
        in capsys.readouterr().out.splitlines()
    )
    assert (tmp_path / "W" / "puzzles" / "03_uniform.py").read_text(encoding="utf-8") == stub_text(
        curriculum.folder() / "03_uniform.py"
    )


def test_pytest_refuses_a_recorded_course_that_is_no_course(course, pytester):  # noqa: F811
    assert main(["init", str(pytester.path), "--course", str(course)]) == 0
    ini = pytester.path / "pytest.ini"
    ini.write_text(ini.read_text(encoding="utf-8").replace(str(course), "gone"), encoding="utf-8")
    result = pytester.runpytest("--no-cache")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: circuits_course in pytest.ini: gone is no course: *"])
