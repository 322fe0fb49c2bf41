"""The checker: determinism, certification by token classes, exact margins, shrinking, the CLI's exit codes."""

import json

import numpy as np
import pytest
from helpers import check_with, solution

from circuits import cli, explain
from circuits.checking.checker import shrink
from circuits.checking.inputs import Inputs, Runs, Uniform
from circuits.checking.margins import longest_length
from circuits.checking.plan import token_classes
from circuits.display.words import coverage
from circuits.explain import check
from circuits.targets import HeadZ, Output

VOWELS = "aeiou"


def test_a_failure_found_only_by_certification():
    """The answer is right except on one vowel/consonant pattern of length 12, which random strings never hit."""
    attempt = solution("01_consonants")
    rare = "vcvcvcvccvvc"
    base = attempt.puzzle.targets[0].spec

    def spec(letters):
        out = base(letters)
        if "".join("v" if ch in VOWELS else "c" for ch in letters) == rare:
            out[-1] = [1, 0]
        return out

    attempt.puzzle.targets = [Output(HeadZ(0, 0), spec, tol=0.1)]
    attempt.puzzle.inputs = Inputs(attempt.puzzle.inputs.alphabet, 1, 40, families=[Uniform()])
    result = check(attempt, n_random=3000, property_examples=0, margins=False)
    failure = result.targets[0].failure
    assert result.status == "failing" and failure.stage == "every small input"
    assert "".join("v" if ch in VOWELS else "c" for ch in failure.tokens) == rare
    assert "all 16,382 vowel/consonant patterns of length ≤ 13" in coverage(result.coverage)


def test_certification_is_refused_when_the_spec_tells_tokens_of_a_class_apart():
    attempt = solution("01_consonants")
    attempt.puzzle.targets = [
        Output(HeadZ(0, 0), lambda s: [[1, 0] if ch in "aeioub" else [0, 1] for ch in s], tol=0.1)
    ]
    result = check(attempt, n_random=500, property_examples=0, margins=False)
    assert "certified" not in coverage(result.coverage)
    assert "every input of length ≤ 3" in coverage(result.coverage)


def test_token_classes_follow_identical_embedding_columns():
    model = solution("01_consonants").model()
    classes = token_classes(model, list("abcdefghijklmnopqrstuvwxyz"))
    assert sorted(map(len, classes)) == [5, 21]


def test_the_seed_answers_longest_passing_length_is_exact():
    """W_K = [0 5]: with 17 vowels before a consonant the consonant's weight is e^5 / (e^5 + 17) < 0.9."""
    attempt = solution("01_consonants")
    attempt.answer.W_K = [[0, 5]]
    attempt.puzzle.inputs = Inputs(
        attempt.puzzle.inputs.alphabet, 1, 10, families=[Uniform(), Runs({"v": VOWELS, "c": "bcdfghjklmnpqrstvwxyz"})]
    )
    longest, _, bad = longest_length(attempt.model(), attempt.puzzle)
    assert longest == 17 and len(bad) == 18
    assert np.exp(5) / (np.exp(5) + 17) < 0.9 < np.exp(5) / (np.exp(5) + 16)


def test_the_sharpness_margin_of_the_reference():
    result = check(solution("01_consonants"), n_random=1000, property_examples=0)
    m = result.margins
    # the gap 20·s must keep e^(20 s) / (e^(20 s) + 39) ≥ 0.9 at length 40: s ≥ log(351) / 20 ≈ 0.293
    assert m.sharpness == pytest.approx(np.log(9 * 39) / 20, abs=0.01)
    assert m.first_failure is None and m.longest == m.searched_to


def test_checks_are_deterministic():
    a = check_with("01_consonants", W_K=[[0, 5.5]], n_random=3000)
    b = check_with("01_consonants", W_K=[[0, 5.5]], n_random=3000)
    assert a.targets[0].failure.tokens == b.targets[0].failure.tokens


def test_shrink_finds_the_shortlex_smallest_failure():
    fails = lambda cands: np.array([c.count("x") >= 2 for c in cands])  # noqa: E731
    assert shrink(list("abxcxdx"), fails, list("abcdx"), 1) == ["x", "x"]


def test_a_stub_is_never_a_pass_nor_a_failure(tmp_path):
    from helpers import shipped

    from circuits.checking.loader import load

    result = check(load(shipped("puzzles", "01_consonants", tmp_path)))
    assert result.status == "not attempted"
    assert {t.status for t in result.targets} == {"not attempted"}


def test_cli_exit_codes_and_json(capsys, monkeypatch, tmp_path):
    from helpers import fresh_project

    monkeypatch.chdir(fresh_project(tmp_path, ["01_consonants", "03_uniform"]))
    assert cli.main(["check", "uniform", "--solution", "--no-margins"]) == 0
    assert cli.main(["check", "uniform", "--no-margins"]) == 1  # not attempted
    capsys.readouterr()
    assert cli.main(["show", "consonants", "abcce", "--solution", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["tokens"] == list("abcce")
    assert np.array(data["patterns"]).shape == (1, 1, 5, 5)
    assert data["expected"][1] == [0, 1] and len(data["output"]) == 5
    assert cli.main(["check", "consonnants"]) == 2
    err = capsys.readouterr().err
    assert err.strip().startswith("circuits: no puzzle named 'consonnants'; did you mean 'consonants'")
    assert len(err.strip().splitlines()) == 1


def test_a_callers_floating_point_and_decimal_contexts_reach_the_worker():
    """limits.run runs the puzzle file's code on a worker thread in a copy of the caller's context: np.errstate
    (a context variable in numpy 2) and decimal.localcontext hold there as on the caller's thread."""
    import decimal
    import warnings

    from circuits import limits

    def divide():
        return np.float64(1.0) / np.float64(0.0)

    with np.errstate(divide="raise"), pytest.raises(FloatingPointError):
        limits.run(divide, "check", "checking", "x.py")
    with np.errstate(divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("error")  # a RuntimeWarning in the worker would raise here
        assert limits.run(divide, "check", "checking", "x.py") == np.inf
    with decimal.localcontext(prec=3):
        assert limits.run(
            lambda: decimal.Decimal(1) / decimal.Decimal(7), "check", "checking", "x.py"
        ) == decimal.Decimal("0.143")


def test_a_callers_errstate_reaches_the_learners_code_in_a_check():
    """The learner's own function, run by check, sees the caller's np.errstate (no RuntimeWarning escapes)."""
    import warnings

    def attention(Q, K, V, mask=None):
        s = Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1])
        s = s / np.float64(0.0)  # divide by zero: ±inf and NaN, a wrong answer
        A = np.exp(s - s.max(-1, keepdims=True))
        return A / A.sum(-1, keepdims=True), A @ V

    with np.errstate(all="raise"):
        result = check_with("00_attention", attention=attention)
    failed = [t for t in result.targets if t.status == "failed"]
    assert failed and "FloatingPointError" in explain.words(
        failed[0].failure.finding
    )  # raised in the worker, not warned
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("error")
        result = check_with("00_attention", attention=attention)
    assert result.status == "failing"


def test_circuits_check_runs_a_files_every_stage_on_one_worker(tmp_path, monkeypatch, capsys):
    """`circuits check`: the validation and the check of one file share one worker thread (a session), each stage
    under its own limit, where each used to start a worker of its own. (The learner's file itself is imported in
    its own process: sealed/.)"""
    import shutil
    import threading

    from circuits import limits
    from circuits.checking import curriculum, validate

    (tmp_path / "puzzles").mkdir()
    mine = shutil.copy(curriculum.reference_file("03_uniform"), tmp_path / "puzzles" / "03_uniform.py")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(validate, "_VALIDATED", {})  # as in a fresh process: the shipped puzzle is validated too
    seen, real = [], limits.doing
    monkeypatch.setattr(
        limits, "doing", lambda what, detail="": (seen.append((what, threading.get_ident())), real(what, detail))[1]
    )
    assert cli.main(["check", str(mine), "--no-cache", "--no-margins"]) == 0
    stages = {what for what, _ in seen}
    assert {"validating the puzzle", "checking"} <= stages, stages
    stage_threads = {ident for what, ident in seen if what in ("validating the puzzle", "checking")}
    assert len(stage_threads) == 1 and seen[0][1] != threading.get_ident()  # (a batch's helper threads aside)
    assert "solved" in capsys.readouterr().out


def test_a_stage_in_a_session_keeps_its_own_limit(monkeypatch):
    """Inside a session each limits.run keeps its own limit and names its own culprit and setting."""
    import threading

    from circuits import limits
    from circuits.errors import CircuitError

    monkeypatch.setenv("CIRCUITS_IMPORT_SECONDS", "0.2")
    release = threading.Event()

    def stage():
        limits.run(lambda: release.wait(5) and None, "import", "importing", "puzzles/x.py")

    with pytest.raises(
        CircuitError,
        match=r"^puzzles/x\.py: importing took longer than 0\.2 s and was stopped "
        r".*set CIRCUITS_IMPORT_SECONDS\)$",
    ):
        limits.session(stage, "x")
    release.set()
    assert limits.session(lambda: limits.run(lambda: 7, "check", "checking", "x.py"), "x") == 7


def test_a_target_checked_on_its_own_is_dispatched_by_its_kind():
    """check_alone runs a code, structure or mechanism target by its kind (the targets never reach back up to the
    checker) and leaves a behaviour target to the shared batches; each kind is shown rejecting a wrong answer."""
    import dataclasses
    import types

    from circuits.checking.checker import check_alone
    from circuits.targets import Code, Kind, Structure

    attempt = solution("03_uniform")
    model = attempt.model()
    assert check_alone(attempt.puzzle.targets[0], attempt, model, 10) is None  # a behaviour target
    right = Structure("W_Q is 1", lambda answer, model: [("W_Q", [[1]], [[1]])])
    wrong = Structure("W_Q is 2", lambda answer, model: [("W_Q", [[1]], [[2]])])
    assert check_alone(right, attempt, model, 10).status == "passed"
    failed = check_alone(wrong, attempt, model, 10)
    assert (failed.kind, failed.status, failed.failure.stage) == (Kind.STRUCTURE, "failed", "exact check")
    doubles = Code("doubles", lambda: __import__("hypothesis.strategies").strategies.integers(0, 9), lambda a, x: None)
    coded = dataclasses.replace(attempt, answer=types.SimpleNamespace())
    assert check_alone(doubles, coded, None, 5).kind is Kind.CODE
    off = dataclasses.replace(doubles, compare=lambda a, x: None if x < 3 else f"{x} is wrong")
    assert check_alone(off, coded, None, 20).status == "failed"
