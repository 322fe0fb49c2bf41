"""An instructor's course, checked and graded with the shipped puzzles' guarantees.

A test course outside the package: three puzzles of different kinds (an attention head, an MLP, a
two-layer composition), each with its reference in solutions/. Graded by `circuits grade --course`,
the references get full marks, stubs zero, a student who loosens a target in their own file zero,
a wrong answer zero. Checked by a student in the course's workspace, an edited given is named and
the instructor's statement is what is checked.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import ROOT, SOLUTIONS, circuits_here

from circuits.workspace.reset import stub_text

COURSE = {"41_uniform": "03_uniform", "42_xor_mlp": "16_xor_mlp", "43_virtual_head": "05_virtual_head"}
MARK = "# ── your answer"


def renumbered(stem: str, new: str) -> str:
    text = (SOLUTIONS / f"{stem}.py").read_text(encoding="utf-8")
    number = f"number={int(stem[:2])},"
    assert number in text
    return text.replace(number, f"number={int(new[:2])},", 1)


def loosened_and_wrong() -> str:
    """41 with a wrong answer (the vowel fraction's complement) and its target loosened above the answer line."""
    text = renumbered("03_uniform", "41_uniform").replace("tol=1e-9", "tol=10", 1)
    return text.replace("W_V = [[  1,    0  ]]", "W_V = [[  0,    1  ]]")


def wrong_mlp() -> str:
    """42 with its MLP writing nothing: W_out zeroed after the reference's answer."""
    return renumbered("16_xor_mlp", "42_xor_mlp") + "\nW_out = [[0, 0]] * len(W_out)\n"


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("course")
    for folder in ("solutions", "puzzles"):
        (root / folder).mkdir()
    for new, old in COURSE.items():
        (root / "solutions" / f"{new}.py").write_text(renumbered(old, new), encoding="utf-8")
        (root / "puzzles" / f"{new}.py").write_text(stub_text(root / "solutions" / f"{new}.py"), encoding="utf-8")
    return root


@pytest.fixture(scope="module")
def graded(course, tmp_path_factory) -> dict:
    subs = tmp_path_factory.mktemp("subs")
    students = {
        "ref": {f"{n}.py": renumbered(o, n) for n, o in COURSE.items()},
        "stub": {f"{n}.py": stub_text(course / "solutions" / f"{n}.py") for n in COURSE},
        "loosener": {"41_uniform.py": loosened_and_wrong()},
        "wrong": {"42_xor_mlp.py": wrong_mlp()},
    }
    for name, files in students.items():
        (subs / name).mkdir()
        for f, text in files.items():
            (subs / name / f).write_text(text, encoding="utf-8")
    out = subs / "grades.json"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "circuits.cli",
            "grade",
            *(str(subs / s) for s in students),
            "--course",
            str(course),
            "--json",
            str(out),
            "--out",
            str(subs / "grades.csv"),
            "--workers",
            "1",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr
    data = json.loads(out.read_text(encoding="utf-8"))
    rows = {}
    for sub in data["submissions"]:
        rows[("notes", sub["student"])] = sub["notes"]
        for p in sub["puzzles"]:
            rows[(sub["student"], p["puzzle"])] = p
    return rows


@pytest.fixture(scope="module")
def notes(graded) -> dict:
    """Each student's notes in the JSON."""
    return {who: n for (kind, who), n in graded.items() if kind == "notes"}


def test_the_course_references_get_full_marks(graded):
    for stem in COURSE:
        assert graded[("ref", stem)]["status"] == "solved", graded[("ref", stem)]["detail"]


def test_stubs_get_zero(graded):
    assert all(graded[("stub", s)]["status"] == "not attempted" and graded[("stub", s)]["score"] == 0 for s in COURSE)


def test_a_student_who_loosens_a_target_in_their_own_file_gets_zero(graded, notes):
    row = graded[("loosener", "41_uniform")]
    assert (row["status"], row["score"]) == ("failing", 0), row["detail"]
    assert "±1e-09" in row["report"] or "1e-9" in row["report"]  # the instructor's tolerance, not the file's
    # the gradebook says who changed a given: the row's detail, its edited list, the report, the student's notes
    assert "changed given `puzzle` (ignored)" in row["detail"], row["detail"]
    assert row["edited"] and row["edited"][0].startswith("given `puzzle` changed (line "), row["edited"]
    assert "given `puzzle` differs from the course's; checked as the course states it" in " ".join(
        row["report"].split()
    )
    assert any(n.startswith("41_uniform: given `puzzle` changed (line ") for n in notes["loosener"]), notes
    assert not any("given" in n for n in notes["ref"]) and not graded[("ref", "41_uniform")]["edited"]


def test_a_wrong_answer_gets_zero(graded):
    row = graded[("wrong", "42_xor_mlp")]
    assert (row["status"], row["score"]) == ("failing", 0), row["detail"]


def test_course_puzzles_not_handed_in_are_not_submitted(graded):
    assert graded[("loosener", "42_xor_mlp")]["status"] == "not submitted"


def test_a_student_checking_in_the_course_workspace_is_told_the_edited_given(course, tmp_path):
    import shutil

    work = tmp_path / "work"
    shutil.copytree(course, work)
    (work / "puzzles" / "41_uniform.py").write_text(loosened_and_wrong(), encoding="utf-8")
    proc = circuits_here(["check", "41", "--no-cache", "--no-margins"], work)  # by circuits.cli.main, in this process
    assert proc.returncode == 1, proc.stdout[-2000:] + proc.stderr[-2000:]
    assert "failing" in proc.stdout.splitlines()[0]
    assert "given `puzzle` differs from the course's; checked as the course states it" in " ".join(
        proc.stdout.split()
    )  # the edited given, named with its line


def test_an_unknown_course_is_one_line_before_any_grading(tmp_path):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    (tmp_path / "alice").mkdir()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "circuits.cli",
            "grade",
            str(tmp_path / "alice"),
            "--course",
            str(tmp_path / "nowhere"),
            "--out",
            str(tmp_path / "g.csv"),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 2 and "--course" in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "g.csv").exists()


def test_pytest_in_a_course_folder_counts_only_its_puzzles(course, tmp_path, pytester, monkeypatch):
    """pytest run inline (pytester) in the course's folder."""
    import shutil

    work = tmp_path / "work"
    shutil.copytree(course, work)
    monkeypatch.chdir(work)
    for args, counted in (([], "solved 0 of 3"), (["--solutions"], "solved 3 of 3")):
        out = pytester.runpytest("-p", "no:cacheprovider", "--no-margins", *args).stdout.str()
        assert counted in out, out[-2000:]


def test_grading_from_beside_the_submissions_never_runs_a_reference_a_student_handed_in(course, tmp_path):
    """Run where the submissions are, the grader's reference is the course's: a student's solutions/ (alice) or
    the course their pytest.ini records (bob, as `circuits init --course` writes it) is never run by the grader."""
    planted = {"alice": "solutions", "bob": "mine/solutions"}
    for student, where in planted.items():
        for folder in ("puzzles", where):
            (tmp_path / student / folder).mkdir(parents=True)
        answer = renumbered("03_uniform", "41_uniform")
        (tmp_path / student / "puzzles" / "41_uniform.py").write_text(answer, encoding="utf-8")
        marker = f"open({str(tmp_path / student.upper())!r}, 'w').close()\n"
        (tmp_path / student / where / "41_uniform.py").write_text(marker + answer, encoding="utf-8")
    (tmp_path / "bob" / "pytest.ini").write_text("[pytest]\ncircuits_course = mine\n", encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "circuits.cli",
            "grade",
            "alice",
            "bob",
            "--course",
            str(course),
            "--puzzles",
            "41",
            "--out",
            "g.csv",
            "--workers",
            "1",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    gradebook = (tmp_path / "g.csv").read_text(encoding="utf-8")
    assert "alice,41_uniform,solved" in gradebook and "bob,41_uniform,solved" in gradebook
    assert not (tmp_path / "ALICE").exists()
    assert not (tmp_path / "BOB").exists()
