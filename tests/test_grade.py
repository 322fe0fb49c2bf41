"""`circuits grade`: every submission checked against the shipped puzzles, its code in a fenced process of its own.

The class is graded once per module (fixtures): the reference solutions get full marks, the stubs zero,
wrong answers what they earn, and hostile submissions the grades their answers earn, with the hostile
act stopped or harmless and a one-line reason in the gradebook.
"""

import csv
import io
import json
import re
import socket
import subprocess
import sys
import textwrap
import zipfile
from pathlib import Path

import numpy as np
import pytest
import sympy

from circuits.checking import curriculum
from circuits.cli import main
from circuits.grading import outputs, parallel
from circuits.grading.grade import select, shipped
from circuits.model.basis import NamedMatrix
from circuits.sealed import codec
from circuits.sealed.sandbox import Limits
from circuits.workspace.reset import stub_text

SOLUTIONS = curriculum.folder()
FEW = ["00_attention", "01_consonants", "03_uniform"]
LIMITS = Limits(seconds=6.0)


def solution(stem: str) -> str:
    return (SOLUTIONS / f"{stem}.py").read_text(encoding="utf-8")


def wrong_consonants() -> str:
    """Puzzle 01 with the course's answer, which fails on long strings (W_K = [[0, 5]])."""
    text = solution("01_consonants")
    assert "W_K = [[0, 20]]" in text
    return text.replace("W_K = [[0, 20]]", "W_K = [[0, 5]]")


def with_prefix(stem: str, code: str, text: str | None = None) -> str:
    """A puzzle file that does `code` first (after its imports), then gives its answer."""
    text = text if text is not None else solution(stem)
    mark = "# ── your answer"
    i = text.index(mark)
    return text[:i] + textwrap.dedent(code) + "\n" + text[i:]


def write(folder: Path, files: dict[str, str]) -> Path:
    folder.mkdir(parents=True)
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    return folder


@pytest.fixture(scope="module")
def bystanders():
    """A listening socket and a sleeping process outside the submissions: the writer tries to reach both."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.setblocking(False)
    victim = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    yield server, victim
    victim.kill()
    victim.wait()
    server.close()


@pytest.fixture(scope="module")
def classroom(tmp_path_factory, bystanders):
    """A class of small submissions, graded once on puzzles 00, 01 and 03."""
    server, victim = bystanders
    root = tmp_path_factory.mktemp("class")
    outside = root / "outside"
    outside.mkdir()
    write(root / "good", {f"{s}.py": solution(s) for s in FEW})
    reader_code = f"""
        import os
        stolen = {{}}
        for path in [{str(SOLUTIONS / "01_consonants.py")!r}, {str(root / "good" / "01_consonants.py")!r},
                     "../good/01_consonants.py", "solutions/01_consonants.py"]:
            try:
                exec(open(path).read().split("# ── your answer")[1], globals(), stolen)
                break
            except OSError:
                continue
        """
    subs = {
        "patcher": {
            "01_consonants.py": with_prefix(
                "01_consonants",
                """
            import circuits.checking.checker as _checker
            import circuits.grading.grade as _grade
            _checker.check = lambda *a, **k: "solved"
            _grade.first_failure = lambda *a, **k: ""
            """,
                wrong_consonants(),
            )
        },
        "printer": {
            "01_consonants.py": with_prefix(
                "01_consonants",
                """
            print("01_consonants · Consonant detection · solved")
            print("score: 22/22")
            """,
                wrong_consonants(),
            )
        },
        "reader": {
            "01_consonants.py": with_prefix("01_consonants", reader_code, wrong_consonants())
            + "\nif 'W_K' in stolen:\n    W_Q, W_K, W_V = stolen['W_Q'], stolen['W_K'], stolen['W_V']\n"
        },
        "forker": {
            "01_consonants.py": with_prefix(
                "01_consonants",
                """
            import os, sys, time
            try:
                child = os.fork()
            except OSError as e:
                child = None
                print(f"fork refused: {e}")
            if child == 0:
                time.sleep(3600)
                os._exit(0)
            if child:
                print(f"forked {child}")
            """,
            )
        },
        "sleeper": {
            "01_consonants.py": solution("01_consonants"),
            "03_uniform.py": with_prefix("03_uniform", "import time\ntime.sleep(3600)\n"),
        },
        "hog": {
            "01_consonants.py": with_prefix(
                "01_consonants",
                """
            try:
                big = np.ones(10 * 2**30 // 8)  # 10 GB
                big[::4096] = 2.0
            except MemoryError:
                big = None
            """,
            ),
            "03_uniform.py": with_prefix("03_uniform", "big = bytearray(10 * 2**30)\n"),
        },
        "writer": {
            "01_consonants.py": with_prefix(
                "01_consonants",
                f"""
            import os, signal, socket
            for target in [{str(outside / "escaped.txt")!r}, "../escaped.txt"]:
                try:
                    with open(target, "w") as f:
                        f.write("out")
                except OSError:
                    pass
            try:
                socket.create_connection(("127.0.0.1", {server.getsockname()[1]}), timeout=2)
            except OSError:
                pass
            try:
                os.kill({victim.pid}, signal.SIGKILL)
            except OSError:
                pass
            """,
            )
        },
        "linker": {
            "01_consonants.py": with_prefix(
                "01_consonants",
                f"""
            import os
            for name, target in [(".circuits-job.json", {str(outside / "through-link.txt")!r}),
                                 (".circuits-output.txt", {str(outside / "secret.txt")!r})]:
                os.symlink(target, name)
            os._exit(3)
            """,
            ),
            "03_uniform.py": solution("03_uniform"),
        },
        "coder_wrong": {
            "00_attention.py": solution("00_attention").replace(
                "return np.tril(np.ones((T, T), dtype=bool))", "return np.ones((T, T), dtype=bool)"
            )
        },
        "coder_library": {
            "00_attention.py": solution("00_attention")
            .replace(
                "def attention(Q, K, V, mask=None):",
                "attention = reference.attention\n\n\ndef _unused(Q, K, V, mask=None):",
                1,
            )
            .replace("return np.tril(np.ones((T, T), dtype=bool))", "raise ValueError('no mask today')")
        },
        "shapes": {
            "01_consonants.py": solution("01_consonants")
            .replace("W_V = [[1, 0],", "W_V = [[1, 0, 0],")
            .replace("       [0, 1]]", "       [0, 1, 0]]"),
            "03_uniform.py": solution("03_uniform").replace("W_Q = ", "W_Q = 'identity' or "),
        },
    }
    (outside / "secret.txt").write_text("TOPSECRET")
    folders = [write(root / name, files) for name, files in subs.items()]
    graded = parallel.grade_all(
        parallel.submissions([str(root / "good"), *map(str, folders)]), FEW, workers=1, limits=LIMITS
    )
    return {g.student: g for g in graded}, root


def row(grades, student: str, puzzle: str):
    return next(p for p in grades[student].puzzles if p.puzzle == puzzle)


@pytest.fixture(scope="module")
def whole_course(tmp_path_factory):
    """The 22 reference solutions, and their 22 stubs, graded once."""
    root = tmp_path_factory.mktemp("course")
    ids = shipped()
    write(root / "reference" / "puzzles", {f"{s}.py": solution(s) for s in ids})
    write(root / "stubs", {f"{s}.py": stub_text(SOLUTIONS / f"{s}.py") for s in ids})
    graded = parallel.grade_all(
        parallel.submissions([str(root / "reference"), str(root / "stubs")]), ids, workers=1, limits=LIMITS
    )
    return {g.student: g for g in graded}


# --- the whole course ---------------------------------------------------------------------------------------------
def test_the_reference_solutions_get_full_marks(whole_course):
    g = whole_course["reference"]
    n = len(shipped())
    assert len(g.puzzles) == n >= 22
    assert [p.status for p in g.puzzles] == ["solved"] * n, [
        (p.puzzle, p.detail) for p in g.puzzles if p.status != "solved"
    ]
    assert g.score == g.max_score == n


def test_the_stubs_get_zero(whole_course):
    g = whole_course["stubs"]
    assert [p.status for p in g.puzzles] == ["not attempted"] * len(shipped())
    assert g.score == 0
    assert row(whole_course, "stubs", "01_consonants").detail == "fill in W_Q, W_K, W_V"


# --- wrong answers earn what they earn ------------------------------------------------------------------------------
def test_a_wrong_answer_fails_with_its_first_failing_target_in_one_line(classroom):
    grades, _ = classroom
    p = row(grades, "printer", "01_consonants")
    assert (p.status, p.score) == ("failing", 0)
    assert p.detail.startswith("fails: head 0.0's result") and "\n" not in p.detail
    assert "shortest failing input" in p.report and "attention of head 0.0" in p.report
    assert "cv-pat" in p.html  # the heatmap of the failing input, for the HTML report


def test_a_missing_file_is_not_submitted(classroom):
    grades, _ = classroom
    p = row(grades, "printer", "00_attention")
    assert (p.status, p.score) == ("not submitted", 0)


def test_shape_mistakes_and_strings_are_errors_in_one_line(classroom):
    grades, _ = classroom
    p = row(grades, "shapes", "01_consonants")
    assert p.status == "error" and "W_V" in p.detail and "(2, 3)" in p.detail
    p = row(grades, "shapes", "03_uniform")
    assert p.status == "error" and "W_Q of head 0.0 is a str ('identity'), not a matrix" in p.detail


def test_the_code_puzzle_is_judged_on_outputs_handed_back(classroom):
    grades, _ = classroom
    assert row(grades, "good", "00_attention").status == "solved"
    p = row(grades, "coder_wrong", "00_attention")
    assert p.status == "failing" and "causal_mask(2)[0, 1] is True" in p.detail
    p = row(grades, "coder_library", "00_attention")
    assert p.status == "failing"
    assert "your causal_mask raised ValueError: no mask today at line" in p.report
    assert "at line 57 (raise ValueError('no mask today'))" in " ".join(p.report.split())  # the line quoted, not "()"
    assert "attention is the library's own function" in p.report


# --- hostile submissions -------------------------------------------------------------------------------------------
def test_patching_circuits_in_the_submission_changes_nothing(classroom):
    grades, _ = classroom
    p = row(grades, "patcher", "01_consonants")
    assert (p.status, p.score) == ("failing", 0) and p.detail.startswith("fails:")


def test_a_printed_fake_verdict_is_ignored_and_noted(classroom):
    grades, _ = classroom
    assert row(grades, "printer", "01_consonants").score == 0
    assert any("printed output" in n and "solved" in n for n in grades["printer"].notes)


def test_the_reference_solutions_and_other_students_are_out_of_reach(classroom):
    grades, _ = classroom
    if not grades["reader"].fence.startswith("Landlock"):
        pytest.skip(f"no file system fence on this machine ({grades['reader'].fence})")
    p = row(grades, "reader", "01_consonants")
    assert (p.status, p.score) == ("failing", 0)  # it could read neither, so its own (wrong) answer stands


def abi(grade) -> int:
    found = re.match(r"Landlock ABI (\d+)", grade.fence)
    return int(found[1]) if found else 0


def test_writing_outside_its_folder_is_refused(classroom):
    grades, root = classroom
    if not abi(grades["writer"]):
        pytest.skip(f"no file system fence on this machine ({grades['writer'].fence})")
    assert row(grades, "writer", "01_consonants").status == "solved"
    assert not (root / "outside" / "escaped.txt").exists() and not (root / "escaped.txt").exists()


def test_no_tcp_connection_and_no_signal_reach_outside(classroom, bystanders):
    grades, _ = classroom
    server, victim = bystanders
    if abi(grades["writer"]) < 6:
        pytest.skip(f"Landlock ABI 6 needed for both ({grades['writer'].fence})")
    with pytest.raises(BlockingIOError):
        server.accept()  # nothing connected
    assert victim.poll() is None  # still running


def test_a_fork_is_refused_or_killed_with_its_process_group(classroom):
    grades, _ = classroom
    assert row(grades, "forker", "01_consonants").status == "solved"
    if "no forks" in grades["forker"].fence:
        assert any("fork refused: [Errno 1] Operation not permitted" in n for n in grades["forker"].notes)
        return
    note = next(n for n in grades["forker"].notes if "forked" in n)
    pid = int(note.split("forked ")[1].split("'")[0])
    try:
        state = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return  # gone
    assert "State:\tZ" in state  # dead, waiting only to be reaped by init


def test_a_file_that_sleeps_times_out_and_the_rest_is_graded(classroom):
    grades, _ = classroom
    p = row(grades, "sleeper", "03_uniform")
    assert (p.status, p.score) == ("error", 0)
    assert "took longer than 6 s and was stopped" in p.detail
    assert row(grades, "sleeper", "01_consonants").status == "solved"


def test_links_left_in_its_folder_lead_the_grader_nowhere(classroom):
    grades, root = classroom
    p = row(grades, "linker", "01_consonants")
    assert p.status == "error" and "called os._exit() on import" in p.detail
    assert row(grades, "linker", "03_uniform").status == "solved"
    assert not (root / "outside" / "through-link.txt").exists()
    assert not any("TOPSECRET" in n for n in grades["linker"].notes)


def test_allocating_10_gb_fails_inside_the_submission(classroom):
    grades, _ = classroom
    assert row(grades, "hog", "01_consonants").status == "solved"  # it caught its MemoryError; its answer counts
    p = row(grades, "hog", "03_uniform")
    assert p.status == "error" and "MemoryError" in p.detail


# --- the answer's numbers cross as data -----------------------------------------------------------------------------
def test_symbolic_matrices_cross_as_polynomial_coefficients():
    s, t = sympy.symbols("s t")
    m = NamedMatrix(["q0", "q1"], ["a", "b"], [[s, s / 2 + 1], [0, 3 * s * t - sympy.Rational(1, 4)]])
    back = codec.to_answer_value(json.loads(json.dumps(codec.answer_value("W_Q", m))))
    assert isinstance(back, NamedMatrix) and back.rows.labels == ("q0", "q1") and back.cols.labels == ("a", "b")
    assert all(sympy.simplify(x - y) == 0 for x, y in zip(m.values.flat, back.values.flat))
    assert codec.to_answer_value(codec.answer_value("params", {s: 20, "t": 0.5})) == {"s": 20, "t": 0.5}


def test_entries_that_are_not_polynomials_or_numbers_are_refused_by_name():
    s = sympy.Symbol("s")
    assert "not a polynomial in s" in codec.answer_value("W_Q", [[sympy.exp(s), 0]])["unreadable"]
    assert codec.answer_value("W_Q", lambda x: x)["unreadable"] == "a function"
    # plain data the checker rejects as it would at home (ragged rows, a string): handed over as it is
    assert codec.to_answer_value(codec.answer_value("W_Q", [[1, 2], [3]])) == [[1, 2], [3]]
    assert codec.to_answer_value(codec.answer_value("W_Q", "identity")) == "identity"
    refused = codec.answer_value("W_Q", np.zeros((2, 1 << 20)))["refused"]
    assert "2,097,152 entries" in refused
    with pytest.raises(codec.Refused, match="degree 17"):  # refused there, and again here for a forged message
        codec.matrix([[s**17]])
    forged = {"entries": {"symbols": ["s"], "terms": [{"powers": [10**8], "coeffs": codec.array(np.ones((1, 1)))}]}}
    with pytest.raises(codec.Refused, match="degree 100000000"):
        codec.to_matrix(forged)


def test_decoding_refuses_objects_and_bytes_that_do_not_fit():
    good = codec.array(np.arange(6.0).reshape(2, 3))
    assert codec.to_array(good).tolist() == [[0, 1, 2], [3, 4, 5]]
    with pytest.raises(codec.Unreadable):
        codec.to_array({**good, "nd": "|O"})
    with pytest.raises(codec.Unreadable):
        codec.to_array({**good, "shape": [4, 3]})


# --- submissions, selections and outputs ----------------------------------------------------------------------------
def test_a_zip_with_a_top_folder_and_puzzles_inside_is_read(tmp_path):
    z = tmp_path / "erin.zip"
    with zipfile.ZipFile(z, "w") as f:
        f.writestr("erin-hw/puzzles/01_consonants.py", "W_Q = 1\n")
        f.writestr("erin-hw/notes/02_first_consonant.py", "ignored")
        f.writestr("erin-hw/README.md", "")
    sub = parallel.submissions([str(z)])[0]
    assert (sub.student, sorted(sub.files), sub.where) == ("erin", ["01_consonants.py"], "erin.zip:erin-hw/puzzles/")


def test_puzzle_selections():
    assert select("0-2,5") == ["00_attention", "01_consonants", "02_first_consonant", "05_virtual_head"]
    assert select("consonants") == ["01_consonants"]
    for bad in ("8-3", "99"):
        with pytest.raises(Exception, match="--puzzles"):
            select(bad)


def test_gradescope_results_hold_one_test_per_puzzle_with_the_learners_report(classroom):
    grades, _ = classroom
    data = json.loads(outputs.gradescope_json(grades["sleeper"]))
    assert data["score"] == 1.0
    tests = {t["name"]: t for t in data["tests"]}
    assert set(tests) == set(FEW)
    assert (tests["01_consonants"]["score"], tests["01_consonants"]["max_score"], tests["01_consonants"]["status"]) == (
        1.0,
        1.0,
        "passed",
    )
    assert tests["03_uniform"]["status"] == "failed" and "took longer than" in tests["03_uniform"]["output"]
    assert tests["01_consonants"]["output"].startswith("01_consonants · Consonant detection · solved")


def test_the_csv_gradebook_has_one_row_per_student_and_puzzle(classroom):
    grades, _ = classroom
    rows = list(csv.DictReader(io.StringIO(outputs.gradebook_csv(list(grades.values())))))
    assert len(rows) == len(grades) * len(FEW)
    assert {r["status"] for r in rows} <= {"solved", "failing", "error", "not attempted", "not submitted"}
    assert all("\n" not in r["detail"] for r in rows)


def test_the_command_writes_its_outputs_and_never_over_an_existing_file(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "stubby", {"01_consonants.py": stub_text(SOLUTIONS / "01_consonants.py")})
    (tmp_path / "grades.csv").write_text("mine\n")
    assert main(["grade", "stubby", "--puzzles", "1"]) == 2
    assert "grades.csv exists; refusing to overwrite it" in capsys.readouterr().err
    assert (tmp_path / "grades.csv").read_text() == "mine\n"
    assert (
        main(
            [
                "grade",
                "stubby",
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
        )
        == 0
    )
    assert "stubby,01_consonants,not attempted,0,1" in (tmp_path / "g.csv").read_text()
    assert json.loads((tmp_path / "g.json").read_text())["submissions"][0]["student"] == "stubby"
    assert (tmp_path / "r" / "stubby.html").read_text().startswith("<!DOCTYPE html>")
    assert main(["grade", "stubby", "--puzzles", "1", "--out", "g.csv", "--workers", "1"]) == 2
    assert main(["grade", "stubby", "--puzzles", "1", "--out", "g.csv", "--workers", "1", "--force"]) == 0


def test_two_submissions_of_one_student_name_stop_the_run(tmp_path):
    write(tmp_path / "a" / "sam", {})
    write(tmp_path / "b" / "sam", {})
    with pytest.raises(Exception, match="both student 'sam'"):
        parallel.submissions([str(tmp_path / "a" / "sam"), str(tmp_path / "b" / "sam")])


def test_on_a_dask_local_cluster(tmp_path):
    distributed = pytest.importorskip("distributed")
    write(tmp_path / "stubby", {"01_consonants.py": stub_text(SOLUTIONS / "01_consonants.py")})
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None
    ) as cluster:
        graded = parallel.grade_all(
            parallel.submissions([str(tmp_path / "stubby")]),
            ["01_consonants"],
            scheduler=cluster.scheduler_address,
            limits=LIMITS,
        )
    assert [p.status for p in graded[0].puzzles] == ["not attempted"]


def test_usage_mistakes_are_one_line_and_write_nothing(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "ann", {})
    cases = [
        (["grade", "nothere"], "submission nothere: no such folder or file"),
        (["grade", "ann", "ann", "--gradescope", "r.json"], "one submission's results.json; 2 were given"),
        (["grade", "ann", "--workers", "0"], "--workers 0: give at least 1"),
        (["grade", "ann", "--out", "x.py"], "is a Python file"),
        (["grade", "ann", "--puzzles", "40-50"], "no puzzle '40-50'"),
    ]
    for argv, said in cases:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert said in err and err.count("\n") == 1, (argv, err)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ann"]


def test_the_fence_leaves_out_an_installed_curriculum_inside_site_packages(tmp_path):
    from circuits.sealed.sandbox import readable_except

    site = tmp_path / "site-packages"
    for folder in ("numpy/core", "circuits/curriculum/solutions", "circuits/model", "sympy"):
        (site / folder).mkdir(parents=True)
    (site / "six.py").write_text("")
    allowed = readable_except(tmp_path, [site / "circuits"])
    assert sorted(p.relative_to(tmp_path).as_posix() for p in allowed) == [
        "site-packages/numpy",
        "site-packages/six.py",
        "site-packages/sympy",
    ]
    assert readable_except(tmp_path, [tmp_path.parent / "elsewhere"]) == [tmp_path]


def test_the_instructor_is_warned_when_submissions_ran_unfenced(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "una", {})
    real = parallel.grade_all

    def unfenced(*args, **kwargs):
        graded = real(*args, **kwargs)
        for g in graded:
            g.fence = "no Landlock (this kernel does not offer it)"
        return graded

    monkeypatch.setattr(parallel, "grade_all", unfenced)
    assert main(["grade", "una", "--puzzles", "1", "--workers", "1"]) == 0
    err = capsys.readouterr().err
    assert "warning: submissions ran without a file system fence (no Landlock" in err
