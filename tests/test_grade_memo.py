"""`circuits grade` checks an answer once per grading process: a copy of an answer already checked gets the same
verdict, of its own file, without checking again; errors, and answers that differ in any way (their data, the givens
they edit), are checked each time.

Three submissions are graded once (module fixture): alice and bob hand in byte-identical files (a failing code
answer for 00, the course's failing answer for 01, a solved 03, each editing a given), carol the same 03 without the
edit, 01 with a shape mistake, and 00 solved. The other tests replay the answers their processes handed back.
"""

import re
import types
from dataclasses import asdict

import pytest
from test_grade import solution, with_prefix, write, wrong_consonants

from circuits.checking import checker
from circuits.grading import grade
from circuits.sealed.sandbox import Limits

STEMS = ["00_attention", "01_consonants", "03_uniform"]
EDIT = 'VOWELS = "aeiouy"  # my own vowels\n'  # a given changed: noted in the gradebook, ignored in the grade


def wrong_mask() -> str:
    return solution("00_attention").replace(
        "return np.tril(np.ones((T, T), dtype=bool))", "return np.ones((T, T), dtype=bool)"
    )


class Counted:
    """Wraps a check: the files it checked, in order."""

    def __init__(self, check, path_of):
        self.check, self.path_of, self.files = check, path_of, []

    def __call__(self, *args, **kwargs):
        self.files.append(self.path_of(*args))
        return self.check(*args, **kwargs)


@pytest.fixture
def counted(monkeypatch):
    """The checks run from here on, by file: checker.check's and the code puzzle's (both counted)."""
    checks = Counted(checker.check, lambda attempt, *a: str(attempt.path))
    codes = Counted(grade._check_code, lambda attempt, *a: str(attempt.path))
    monkeypatch.setattr(checker, "check", checks)
    monkeypatch.setattr(grade, "_check_code", codes)
    grade.clear_memo()
    yield lambda: checks.files + codes.files
    grade.clear_memo()


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """alice, bob and carol graded in one process with the memo on; the checks run, by file; and each puzzle's
    arguments to _grade_puzzle (the answer its process handed back), to grade again."""
    root = tmp_path_factory.mktemp("memo")
    same = {
        "00_attention.py": wrong_mask(),
        "01_consonants.py": with_prefix("01_consonants", EDIT, wrong_consonants()),
        "03_uniform.py": with_prefix("03_uniform", EDIT),
    }
    shapes = (
        solution("01_consonants")
        .replace("W_V = [[1, 0],", "W_V = [[1, 0, 0],")
        .replace("       [0, 1]]", "       [0, 1, 0]]")
    )
    folders = [
        write(root / "alice", same),
        write(root / "bob", same),
        write(
            root / "carol",
            {
                "00_attention.py": solution("00_attention"),
                "01_consonants.py": shapes,
                "03_uniform.py": solution("03_uniform"),
            },
        ),
    ]
    calls: dict[tuple[str, str], tuple] = {}
    row = grade._grade_puzzle

    def kept(student, stem, *args):
        calls[student, stem] = (student, stem, *args)
        return row(student, stem, *args)

    with pytest.MonkeyPatch.context() as mp:
        checks = Counted(checker.check, lambda attempt, *a: str(attempt.path))
        codes = Counted(grade._check_code, lambda attempt, *a: str(attempt.path))
        mp.setattr(checker, "check", checks)
        mp.setattr(grade, "_check_code", codes)
        mp.setattr(grade, "_grade_puzzle", kept)
        grade.clear_memo()
        grades = {f.name: grade.grade(str(f), STEMS, Limits(seconds=6.0)) for f in folders}
    grade.clear_memo()
    return grades, checks.files + codes.files, calls


def rows(grades, student):
    return {p.puzzle: p for p in grades[student].puzzles}


def timeless(p: grade.PuzzleGrade) -> dict:
    """A row as data without the time its check took (two checks of one answer differ only there)."""
    d = asdict(p)
    d["report"] = re.sub(r"\(\d+\.\d s\)\n$", "(… s)\n", d["report"])
    if d["result"] is not None:
        d["result"] = {**d["result"], "seconds": None}
    return d


def regrade(calls, student, stem, who: str | None = None) -> grade.PuzzleGrade:
    """The puzzle graded again from the answer its process handed back, as student `who` (their file)."""
    args = list(calls[student, stem])
    if who is not None:
        args[0], args[2] = who, args[2].replace(f"{student}/", f"{who}/", 1)
    return grade._grade_puzzle(*args)


def test_identical_solved_files_are_checked_once_and_each_row_names_its_own_file(graded):
    grades, checked, _ = graded
    assert checked.count("alice/03_uniform.py") == 1 and "bob/03_uniform.py" not in checked
    for student, other in (("alice", "bob"), ("bob", "alice")):
        p = rows(grades, student)["03_uniform"]
        assert (p.status, p.score) == ("solved", 1.0)
        assert p.result["file"] == f"{student}/03_uniform.py"
        assert f"{student}/03_uniform.py" in p.report  # the changed given, said at the student's own file
        assert other not in p.report + p.html + p.detail + str(p.result)
        assert p.detail == "changed given `VOWELS` (ignored)"
    assert grades["alice"].memoised == 0 and grades["bob"].memoised == 3


def test_identical_failing_answers_are_checked_once_with_the_rows_of_a_fresh_check(graded):
    grades, checked, calls = graded
    assert checked.count("alice/01_consonants.py") == 1 and "bob/01_consonants.py" not in checked
    for stem in STEMS:
        served = rows(grades, "bob")[stem]
        assert "alice" not in served.report + served.html + served.detail + str(served.result)
        grade.clear_memo()
        fresh = regrade(calls, "bob", stem)
        assert timeless(served) == timeless(fresh)
    p = rows(grades, "bob")["01_consonants"]
    assert p.status == "failing" and p.detail.startswith("fails: head 0.0's result")
    assert "bob/01_consonants.py" in p.report and "shortest failing input" in p.report


def test_the_same_answer_with_other_givens_is_checked_again(graded):
    grades, checked, _ = graded
    assert checked.count("carol/03_uniform.py") == 1  # alice's 03 was kept, but she changed a given, carol did not
    p = rows(grades, "carol")["03_uniform"]
    assert p.status == "solved" and p.detail == "" and "VOWELS" not in p.report
    assert grades["carol"].memoised == 0


def test_errors_are_checked_each_time_and_name_each_file(graded, counted):
    _, _, calls = graded
    first = regrade(calls, "carol", "01_consonants")
    again = regrade(calls, "carol", "01_consonants", who="dave")
    assert counted() == ["carol/01_consonants.py", "dave/01_consonants.py"]
    assert first.status == again.status == "error" and "(2, 3)" in again.detail
    assert "carol/01_consonants.py" in first.detail and "dave/01_consonants.py" in again.detail
    assert "carol" not in again.detail + again.report


def test_a_wrong_answer_is_never_served_a_solved_verdict(graded, counted):
    _, _, calls = graded
    solved = regrade(calls, "carol", "00_attention")
    wrong = regrade(calls, "alice", "00_attention", who="dave")
    again = regrade(calls, "carol", "00_attention", who="erin")
    assert counted() == ["carol/00_attention.py", "dave/00_attention.py"]
    assert (solved.status, wrong.status, again.status) == ("solved", "failing", "solved")
    assert "causal_mask(2)[0, 1] is True" in wrong.detail


def test_the_code_puzzle_is_checked_once_for_identical_answers(graded):
    grades, checked, _ = graded
    assert checked.count("alice/00_attention.py") == 1 and "bob/00_attention.py" not in checked
    assert checked.count("carol/00_attention.py") == 1  # the library's right answer: other data
    for student in ("alice", "bob"):
        p = rows(grades, student)["00_attention"]
        assert p.status == "failing" and "causal_mask(2)[0, 1] is True" in p.detail
        assert p.result["file"] == f"{student}/00_attention.py"


def test_the_memo_keeps_the_latest_verdicts_and_can_be_cleared(graded, counted, monkeypatch):
    _, _, calls = graded
    monkeypatch.setattr(grade._MEMO, "size", 1)
    regrade(calls, "alice", "03_uniform")
    regrade(calls, "carol", "03_uniform")  # the other givens: another verdict, alice's dropped
    regrade(calls, "carol", "03_uniform", who="dave")
    regrade(calls, "alice", "03_uniform", who="erin")
    assert counted() == ["alice/03_uniform.py", "carol/03_uniform.py", "erin/03_uniform.py"]
    grade.clear_memo()
    regrade(calls, "alice", "03_uniform", who="frank")
    assert counted()[-1] == "frank/03_uniform.py"


def test_a_served_row_says_the_time_it_took_not_the_first_copys(graded, counted, monkeypatch):
    """On a clock (grading's) that ticks one second a reading: the copy served from the memo reads it twice, at its
    start and its end, so its row says 1.0 s, not the time the first copy's check took."""
    _, _, calls = graded
    ticks = iter(range(10**9))
    monkeypatch.setattr(grade, "time", types.SimpleNamespace(perf_counter=lambda: float(next(ticks))))
    first = regrade(calls, "alice", "03_uniform")
    served = regrade(calls, "alice", "03_uniform", who="dave")
    assert counted() == ["alice/03_uniform.py"]
    assert served.result["seconds"] == 1.0 and first.result["seconds"] != 1.0
    assert served.report.endswith("(1.0 s)\n"), served.report[-200:]
