"""`circuits grade` never loses or falsifies a result: a hostile class, bad options and a stopped run.

A class of submissions built to break the grader (links to the reference solutions and to a classmate, a
hard link, a nested folder, a zip-only upload, a corrupt zip, a non-UTF-8 folder name, a lone surrogate in an
error, names that are spreadsheet formulas) is graded once, by the command in a process of its own, on puzzle
01 only; every other case stops before grading or grades a few stubs in this process.
"""

from __future__ import annotations

import csv
import io
import json
import os
import signal
import subprocess
import sys
import threading
import types
import zipfile
from pathlib import Path

import pytest
from helpers import ROOT, SOLUTIONS, ctrl_c_default, stub

from circuits.cli import _parser, main
from circuits.grading import outputs, parallel
from circuits.grading.grade import PuzzleGrade, SubmissionGrade

PUZZLE = "01_consonants"
ENV = {
    **{k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "HYPOTHESIS"))},
    "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
}
FORMULAS = ["=HYPERLINK(x)", "@SUM(A1)", "-2+3"]


def answer() -> str:
    return (SOLUTIONS / f"{PUZZLE}.py").read_text(encoding="utf-8")


def put(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def zipped(path: Path, files: dict[str, str]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w") as z:
        for name, text in files.items():
            z.writestr(name, text)
    return path


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    """The class graded once by `circuits grade` in its own process: (the process, the CSV rows by student, the
    JSON by student, the folder)."""
    root = tmp_path_factory.mktemp("hostile")
    subs = root / "subs"
    put(subs / "good" / "puzzles" / f"{PUZZLE}.py", answer())
    put(subs / "nested" / "project" / "hw3" / "puzzles" / f"{PUZZLE}.py", answer())
    zipped(subs / "ziponly" / "upload.zip", {f"hw/puzzles/{PUZZLE}.py": answer()})
    (subs / "corrupt.zip").write_bytes(b"PK\x03\x04 this is not a zip")
    zipped(subs / "backslash.zip", {f"hw\\puzzles\\{PUZZLE}.py": answer()})  # folders as old Windows tools write them
    # a zip whose names say UTF-8 and are not: zipfile once raised UnicodeDecodeError on it
    bad = zipped(root / "badname.zip", {f"Jos\u00e9/{PUZZLE}.py": answer()}).read_bytes()
    (subs / "badname.zip").write_bytes(bad.replace("Jos\u00e9".encode(), b"Jos\xe9\xe9"))
    os.symlink(SOLUTIONS, subs / "linked")  # the whole submission a link to the reference solutions
    (subs / "borrower").mkdir()
    os.symlink(subs / "good" / "puzzles", subs / "borrower" / "puzzles")  # puzzles/ a link to a classmate's
    put(subs / "borrower" / "README.md", "mine")
    (subs / "filelink").mkdir()
    os.symlink(SOLUTIONS / f"{PUZZLE}.py", subs / "filelink" / f"{PUZZLE}.py")
    kept = put(root / "elsewhere" / f"{PUZZLE}.py", answer())
    (subs / "hardlink").mkdir()
    os.link(kept, subs / "hardlink" / f"{PUZZLE}.py")
    windows = os.fsdecode(bytes(subs) + b"/Jos\xe9")  # a folder name unzipped from Windows: not UTF-8
    put(Path(windows) / f"{PUZZLE}.py", answer())
    put(subs / "surrogate" / f"{PUZZLE}.py", "raise ValueError('boom \\ud800 \\udce9')\n")
    put(subs / "printer" / f"{PUZZLE}.py", "import sys\nsys.stdout.buffer.write(b'=cmd \\xff\\xfe\\n')\n" + answer())
    for name in FORMULAS:
        (subs / name).mkdir()
    order = [
        "good",
        "nested",
        "ziponly",
        "backslash.zip",
        "corrupt.zip",
        "badname.zip",
        "linked",
        "borrower",
        "filelink",
        "hardlink",
        windows,
        "surrogate",
        "printer",
        *FORMULAS,
    ]
    out = root / "out"
    out.mkdir()
    argv = [
        "grade",
        *[str(subs / n) for n in order],
        "--puzzles",
        "1",
        "--out",
        "g.csv",
        "--json",
        "g.json",
        "--report-dir",
        "reports",
        "--workers",
        "1",
        "--timeout",
        "20",
    ]
    done = subprocess.run(
        [sys.executable, "-m", "circuits.cli", *argv], cwd=out, env=ENV, capture_output=True, timeout=600
    )
    rows = list(csv.DictReader(io.StringIO((out / "g.csv").read_text(encoding="utf-8"))))
    data = json.loads((out / "g.json").read_text(encoding="utf-8"))
    return done, {r["student"]: r for r in rows}, {s["student"]: s for s in data["submissions"]}, out, data


def test_the_hostile_class_is_graded_whole_with_exit_0_and_no_traceback(hostile):
    done, rows, subs, out, data = hostile
    err = done.stderr.decode("utf-8", "replace")
    assert done.returncode == 0, err
    assert "Traceback" not in err
    assert len(rows) == len(subs) == 13 + len(FORMULAS)  # every student's row, each once
    assert data["complete"] is True
    assert not list(out.glob("*.progress")) and not list(out.glob(".*.tmp"))  # the run's record gone: it finished
    assert len(list((out / "reports").glob("*.txt"))) == len(rows)


def test_a_nested_folder_and_a_zip_only_upload_are_found(hostile):
    _, rows, subs, _, _ = hostile
    assert {rows[s]["status"] for s in ("good", "nested", "ziponly", "backslash")} == {"solved"}
    assert any("read from upload.zip" in n for n in subs["ziponly"]["notes"])


def test_a_corrupt_zip_is_that_students_note_not_the_end_of_the_class(hostile):
    _, rows, subs, _, _ = hostile
    for name in ("corrupt", "badname"):
        assert rows[name]["status"] == "not submitted"
        assert any("cannot read the zip file" in n for n in subs[name]["notes"]), subs[name]["notes"]


def test_links_are_refused_with_a_note_never_followed(hostile):
    _, rows, subs, _, _ = hostile
    said = {
        "linked": "linked is a symbolic link: not followed",
        "borrower": "puzzles is a symbolic link",
        "filelink": f"{PUZZLE}.py is a symbolic link: not followed",
        "hardlink": "a hard link",
    }
    for student, note in said.items():
        assert rows[student]["status"] == "not submitted", student  # never the reference's or a classmate's marks
        assert any(note in n for n in subs[student]["notes"]), (student, subs[student]["notes"])


def test_a_non_utf8_name_and_a_lone_surrogate_survive_into_every_format(hostile):
    _, rows, subs, out, _ = hostile
    assert rows["Jos\\xe9"]["status"] == "solved" and "Jos\\xe9" in subs
    p = rows["surrogate"]
    assert p["status"] == "error" and "boom \\ud800" in p["detail"]
    assert "boom \\ud800" in subs["surrogate"]["puzzles"][0]["report"]
    assert "boom \\ud800" in (out / "reports" / "surrogate.txt").read_text(encoding="utf-8")
    assert "boom \\ud800" in (out / "reports" / "surrogate.html").read_text(encoding="utf-8")
    assert (out / "reports" / "Jos_.txt").read_text(encoding="utf-8").startswith("Jos\\xe9: 1 of 1")
    assert rows["printer"]["status"] == "solved"
    assert any("'=cmd \ufffd\ufffd'" in n for n in subs["printer"]["notes"]), subs["printer"]["notes"]


def test_every_format_holds_any_string_a_student_controls():
    odd = "Jos\udce9 \ud800 =x\n"
    p = PuzzleGrade(odd, PUZZLE, "error", 0.0, 1.0, odd, odd, f"<p>{odd}</p>", {"error": odd, odd: [odd]})
    g = SubmissionGrade(odd, odd, [p], [odd], odd)
    texts = [
        outputs.gradebook_csv([g]),
        outputs.full_json([g]),
        outputs.gradescope_json(g),
        outputs.student_text(g),
        outputs.student_html(g),
    ]
    for text in texts:
        text.encode("utf-8")  # no lone surrogate left to stop the write
    for text in (texts[0], texts[3], texts[4]):
        assert "Jos\\xe9 \\ud800" in text
    assert json.loads(texts[1])["submissions"][0]["puzzles"][0]["result"]["error"] == "Jos\\xe9 \\ud800 =x\n"
    assert json.loads(texts[2])["tests"][0]["output"] == "Jos\\xe9 \\ud800 =x\n"


def test_csv_cells_a_spreadsheet_would_run_are_neutralised(hostile):
    _, rows, subs, out, _ = hostile
    for name in FORMULAS:
        assert rows["'" + name]["status"] == "not submitted"  # shown as text, starting with a quote
        assert name in subs  # the JSON keeps the name as it is
    cells = [c for row in csv.reader(open(out / "g.csv", encoding="utf-8")) for c in row]
    assert not any(c.startswith(("=", "+", "-", "@", "\t", "\r")) for c in cells)


# --- refused before the first student is graded -----------------------------------------------------------------
@pytest.fixture
def no_grading(tmp_path, monkeypatch):
    """A folder with one student; grading anyone fails the test."""
    monkeypatch.chdir(tmp_path)
    put(tmp_path / "ann" / f"{PUZZLE}.py", stub(PUZZLE))

    def graded(*a, **k):
        raise AssertionError("a student was graded")

    monkeypatch.setattr(parallel, "grade_all", graded)
    return tmp_path


def refused(argv, said: str, capsys, root: Path) -> None:
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    assert main(argv) == 2, argv
    err = capsys.readouterr().err
    assert said in err and err.count("\n") == 1 and "Traceback" not in err, (argv, err)
    assert len(err.rstrip("\n")) <= 80, err
    assert {p: p.read_bytes() for p in root.rglob("*") if p.is_file()} == before


@pytest.mark.parametrize(
    "options, said",
    [
        (["--timeout", "inf"], "--timeout inf: give 1 to 3600 seconds per puzzle file"),
        (["--timeout", "0.001"], "--timeout 0.001: give 1 to 3600"),
        (["--timeout", "nan"], "--timeout nan"),
        (["--timeout", "-1"], "--timeout -1"),
        (["--timeout", "1e9"], "--timeout 1e+09: give 1 to 3600"),
        (["--memory", str(10**9)], f"--memory {10**9}: give 256 to"),
        (["--memory", "100"], "256 to"),
        (["--puzzles", ""], "--puzzles '' names no puzzle"),
        (["--puzzles", ","], "names no puzzle"),
        (["--puzzles", "0-80"], "no puzzle '0-80'"),
        (["--puzzles", "consonant"], "no puzzle 'consonant'"),
        (["--out", "g.csv", "--json", "g.csv"], "--out g.csv and --json g.csv are one file"),
        (["--out", "g.csv", "--json", "./sub/../g.csv"], "are one file"),
        (["--report-dir", "f/r"], "--report-dir f/r: f is not a folder that can be written"),
        (["--out", "sub/none/g.csv"], "the folder sub/none does not exist"),
    ],
)
def test_a_bad_option_is_one_line_before_anyone_is_graded(no_grading, capsys, options, said):
    (no_grading / "sub").mkdir()
    (no_grading / "f").write_text("a file")
    refused(["grade", "ann", *options], said, capsys, no_grading)


def test_one_file_under_two_names_is_refused_even_with_force(no_grading, capsys):
    (no_grading / "g.csv").write_text("last week\n")
    os.symlink("g.csv", no_grading / "via-link.json")
    os.link(no_grading / "g.csv", no_grading / "hard.json")
    refused(
        ["grade", "ann", "--out", "g.csv", "--json", "via-link.json", "--force"], "are one file", capsys, no_grading
    )
    refused(["grade", "ann", "--out", "g.csv", "--json", "hard.json", "--force"], "are one file", capsys, no_grading)
    refused(["grade", "ann", "--json", "via-link.json"], "is a symbolic link", capsys, no_grading)


# --- a stopped run keeps what is done, and the same command resumes ---------------------------------------------
@pytest.fixture
def stubs(tmp_path, monkeypatch):
    """Three students with a stub each (quick to grade), and a record of who is graded."""
    monkeypatch.chdir(tmp_path)
    for name in ("amy", "ben", "cat"):
        put(tmp_path / name / f"{PUZZLE}.py", stub(PUZZLE))
    graded: list[str] = []
    real = parallel.grade_safely

    def grading(sub, *args, **kwargs):
        if sub.student == stop[0]:
            raise KeyboardInterrupt  # as Ctrl-C would, while this student is being graded
        graded.append(sub.student)
        return real(sub, *args, **kwargs)

    stop = [None]
    monkeypatch.setattr(parallel, "grade_safely", grading)
    return tmp_path, graded, stop


ARGV = [
    "grade",
    "amy",
    "ben",
    "cat",
    "--puzzles",
    "1",
    "--out",
    "g.csv",
    "--json",
    "g.json",
    "--report-dir",
    "r",
    "--workers",
    "1",
]


def test_ctrl_c_keeps_every_student_graded_and_the_rerun_resumes(stubs, capsys):
    root, graded, stop = stubs
    stop[0] = "ben"
    assert main(ARGV) == 130
    err = capsys.readouterr().err
    assert "kept 1 of 3 students in g.csv; the same command grades the rest" in err and "Traceback" not in err
    assert (
        (root / "g.csv").read_text() == "student,puzzle,status,score,max_score,detail\n"
        'amy,01_consonants,not attempted,0,1,"fill in W_Q, W_K, W_V"\n'
    )
    assert json.loads((root / "g.json").read_text())["complete"] is False  # whole, and says it is not all
    assert (root / "r" / "amy.txt").exists() and not (root / "r" / "ben.txt").exists()
    assert (root / "g.csv.progress").exists()

    stop[0], graded[:] = None, []
    assert main(ARGV) == 0  # the same command, without --force: it resumes over its own files
    assert "resuming: 1 of 3 students kept from g.csv.progress" in capsys.readouterr().err
    assert graded == ["ben", "cat"]  # amy is not graded again
    rows = list(csv.DictReader(open(root / "g.csv")))
    assert [r["student"] for r in rows] == ["amy", "ben", "cat"]
    assert json.loads((root / "g.json").read_text())["complete"] is True
    assert not (root / "g.csv.progress").exists()
    assert main(ARGV) == 2  # finished: the outputs are protected again
    assert "g.csv exists; refusing to overwrite it" in capsys.readouterr().err


def test_a_resumed_run_regrades_a_student_whose_files_changed(stubs, capsys):
    root, graded, stop = stubs
    stop[0] = "cat"
    assert main(ARGV) == 130
    put(root / "amy" / f"{PUZZLE}.py", answer())  # amy handed in again meanwhile
    stop[0], graded[:] = None, []
    assert main(ARGV) == 0
    assert graded == ["amy", "cat"]
    assert [r["status"] for r in csv.DictReader(open(root / "g.csv"))] == ["solved", "not attempted", "not attempted"]
    capsys.readouterr()


def test_other_settings_do_not_resume_and_force_starts_again(stubs, capsys):
    root, graded, stop = stubs
    stop[0] = "ben"
    assert main(ARGV) == 130
    capsys.readouterr()
    before = (root / "g.csv").read_bytes()
    assert main([*ARGV, "--timeout", "5"]) == 2
    err = capsys.readouterr().err
    assert "an unfinished run with other timeout: rerun as it was, or --force" in err
    assert err.count("\n") == 1 and (root / "g.csv").read_bytes() == before
    stop[0], graded[:] = None, []
    assert main([*ARGV, "--timeout", "5", "--force"]) == 0
    assert graded == ["amy", "ben", "cat"]


def test_an_empty_file_left_by_a_crash_does_not_block_the_rerun(stubs, capsys):
    root, graded, _ = stubs
    (root / "g.csv").write_bytes(b"")
    assert main(ARGV) == 0, capsys.readouterr().err
    assert len(list(csv.DictReader(open(root / "g.csv")))) == 3


# --- Gradescope -------------------------------------------------------------------------------------------------
def test_the_sample_autograder_takes_puzzles_and_students_see_only_what_they_need(tmp_path, monkeypatch, capsys):
    text = (ROOT / "docs" / "grading.md").read_text(encoding="utf-8")
    script = text.split("# run_autograder", 1)[1].split("```", 1)[0]
    command = next(line for line in script.splitlines() if line.startswith("circuits grade"))
    assert "--puzzles" in command
    monkeypatch.chdir(tmp_path)
    put(tmp_path / "submission" / f"{PUZZLE}.py", answer().replace("W_K = [[0, 20]]", "W_K = [[0, 5]]"))
    (tmp_path / "results").mkdir()
    argv = command.replace("/autograder/", "").replace('"$PUZZLES"', "1").split()[1:]
    assert main([*argv, "--workers", "1"]) == 0, capsys.readouterr().err
    data = json.loads((tmp_path / "results" / "results.json").read_text())
    assert [t["name"] for t in data["tests"]] == [PUZZLE] and data["score"] == 0
    output = data["tests"][0]["output"]
    assert "shortest failing input" in output
    assert "not checked: margins" not in output and "as asked" not in output
    assert _parser().parse_args(argv).gradescope == "results/results.json"


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def test_a_real_ctrl_c_with_two_workers_keeps_what_is_done_in_one_line(tmp_path):
    """Ctrl-C sent to the grader alone, once a student is graded, while another's file blocks for ever: what is
    graded is kept, the blocked submission's process is stopped, and the same command then grades the rest."""
    put(tmp_path / "good" / f"{PUZZLE}.py", answer())
    blocked = put(tmp_path / "blocked" / f"{PUZZLE}.py", "import threading\nthreading.Event().wait()\n")
    argv = [
        sys.executable,
        "-m",
        "circuits.cli",
        "grade",
        "good",
        "blocked",
        "--puzzles",
        "1",
        "--workers",
        "2",
        "--timeout",
        "3600",
    ]
    proc = subprocess.Popen(
        argv,
        cwd=tmp_path,
        env=ENV,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=ctrl_c_default,
    )
    # A bound only a hung grader reaches (even at load 8), not a timing requirement: the grader and its pool's
    # workers (which hold its stderr too) are killed, the reads below end, and the test fails instead of waiting
    # for --timeout (as it did on a loaded machine: the worker that had graded `good` went on with `blocked`).
    hung = threading.Timer(300, _kill_group, (proc.pid,))
    hung.start()
    try:
        first = proc.stderr.readline()  # waits for the signal that one student is graded, not for a time
        assert first.startswith("graded good: 1 of 1"), first
        proc.send_signal(signal.SIGINT)
        rest = proc.stderr.read()
        assert proc.wait(timeout=300) == 130
    finally:
        hung.cancel()
        _kill_group(proc.pid)
    assert rest.splitlines() == [
        "circuits: kept 1 of 2 students in grades.csv; the same command grades the rest",
        "circuits: interrupted (Ctrl-C)",
    ], rest
    assert (
        tmp_path / "grades.csv"
    ).read_text() == "student,puzzle,status,score,max_score,detail\ngood,01_consonants,solved,1,1,\n"
    blocked.write_text(stub(PUZZLE), encoding="utf-8")
    again = subprocess.run(argv, cwd=tmp_path, env=ENV, capture_output=True, text=True, timeout=300)
    assert again.returncode == 0 and "resuming: 1 of 2 students kept" in again.stderr, again.stderr
    assert [r["status"] for r in csv.DictReader(open(tmp_path / "grades.csv"))] == ["solved", "not attempted"]


def test_a_ctrl_c_between_two_submissions_starts_neither_the_next(monkeypatch):
    """On a busy machine one worker can grade the first student and be handed the blocked one before the other
    worker has started: a Ctrl-C that reaches it between the two (idle, so it is not raised) must still keep it
    from starting the one already queued to it, or the grader waits for that submission to the end of --timeout."""
    started: list[str] = []
    monkeypatch.setattr(parallel.grade, "grade", lambda sub, *args: started.append(sub.student))
    monkeypatch.setattr(parallel, "_STOPPED", [False])
    sub = types.SimpleNamespace(student="blocked", source="blocked")
    parallel.grade_safely(sub, [PUZZLE], None, 1)
    assert started == ["blocked"]  # before any Ctrl-C: graded
    parallel._worker_interrupted(signal.SIGINT, None)  # idle: nothing is raised
    with pytest.raises(KeyboardInterrupt):
        parallel.grade_safely(sub, [PUZZLE], None, 1)
    assert started == ["blocked"] and parallel._BUSY == [False]


def test_a_record_cut_short_by_a_crash_loses_only_the_last_student(stubs, capsys):
    root, graded, stop = stubs
    stop[0] = "cat"
    assert main(ARGV) == 130
    record = root / "g.csv.progress"
    text = record.read_text()
    record.write_text(text[: len(text) - 40])  # ben's line half written, as a crash while appending leaves it
    stop[0], graded[:] = None, []
    assert main(ARGV) == 0
    assert graded == ["ben", "cat"]
    assert "resuming: 1 of 3 students kept" in capsys.readouterr().err


def test_the_course_autograder_in_the_docs_is_a_valid_command():
    """docs/grading.md's run_autograder for a course of one's own: its command parses, grades the course in the
    zip and writes Gradescope's file where Gradescope reads it."""
    text = (ROOT / "docs" / "grading.md").read_text(encoding="utf-8")
    script = text.split("# run_autograder, for a course", 1)[1].split("```", 1)[0].replace("\\\n", " ")
    command = next(line for line in script.splitlines() if line.startswith("circuits grade"))
    args = _parser().parse_args(command.split()[1:])
    assert args.course == "/autograder/source/course" and args.puzzles is None
    assert args.gradescope == "/autograder/results/results.json"


def _deaf(ready) -> None:
    """A worker that ignores Ctrl-C and never ends (a pool worker caught where the signal does not reach it)."""
    import time

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    ready.set()
    while True:
        time.sleep(1)


def test_a_worker_that_misses_the_ctrl_c_is_killed_not_waited_for():
    """parallel.stop: Ctrl-C to each worker, then any still running after its grace period killed, so the grader's
    Ctrl-C never waits on a worker (the suite once hung 41 minutes on one at load 15)."""
    import multiprocessing

    from circuits.grading import parallel

    ctx = multiprocessing.get_context("spawn")
    ready = ctx.Event()
    worker = ctx.Process(target=_deaf, args=(ready,), daemon=True)
    worker.start()
    try:
        assert ready.wait(120)  # a signal that it runs, not a sleep
        parallel.stop([worker], seconds=0.5)
        assert not worker.is_alive() and worker.exitcode == -signal.SIGKILL
    finally:
        if worker.is_alive():
            worker.kill()
