"""pytest habits through pytester: xdist keeps a puzzle file on one worker and the controller prints the summary;
--lf reruns only the failing puzzle with pytest's cache outside the project; JUnit XML carries whole lines."""

from __future__ import annotations

import importlib.util
import re
import shutil
import xml.etree.ElementTree as ET

import pytest
from helpers import ROOT, shipped

from circuits.checking.loader import load
from circuits.pytest_plugin import project_cache_dir

XDIST = importlib.util.find_spec("xdist") is not None
needs_xdist = pytest.mark.skipif(not XDIST, reason="pytest-xdist is not installed (the dev extra has it)")
WRONG_01 = "W_Q = [[1, 1]]\nW_K = [[0, 5]]\nW_V = [[1, 0], [0, 1]]\n"  # aimed right, not sharp enough


def project(pytester, stems, answered=()):
    """puzzles/ and solutions/ with these puzzles; the stems in `answered` answered as in solutions/."""
    for folder in ("puzzles", "solutions"):
        (pytester.path / folder).mkdir()
    for stem in stems:
        shutil.copy(ROOT / "solutions" / f"{stem}.py", pytester.path / "solutions" / f"{stem}.py")
        shipped("solutions" if stem in answered else "puzzles", stem, pytester.path / "puzzles")  # never our puzzles/
    return pytester.path


def answer(root, stem: str, block: str) -> None:
    path = root / "puzzles" / f"{stem}.py"
    text = path.read_text(encoding="utf-8")
    path.write_text(text[: text.index("\n", text.index("# ── your answer")) + 1] + block, encoding="utf-8")


def everything(root) -> list[str]:
    """The project's files and any pytest cache in it (pytester keeps its own runpytest-N folders beside them)."""
    return sorted(
        str(p.relative_to(root))
        for p in root.rglob("*")
        if p.parts[len(root.parts)] in ("puzzles", "solutions") or "pytest_cache" in p.name
    )


# --- xdist ------------------------------------------------------------------------------------------------
@needs_xdist
@pytest.mark.parametrize("dist", ["load"])  # loadgroup and worksteal take the same scheduler: the next test
def test_xdist_keeps_each_puzzle_file_on_one_worker_and_prints_the_summary(pytester, dist):
    stems = ("01_consonants", "03_uniform", "05_virtual_head", "06_induction_pointer")
    project(pytester, stems)
    result = pytester.runpytest_subprocess(
        "puzzles/",
        "--solutions",
        "--no-margins",
        "--no-cache",
        "-n",
        "2",
        "--dist",
        dist,
        "-v",
        "-p",
        "no:cacheprovider",
    )
    result.assert_outcomes(passed=sum(len(load(ROOT / "solutions" / f"{s}.py").puzzle.targets) for s in stems))
    workers: dict[str, set[str]] = {}
    for line in result.stdout.lines:
        m = re.match(r"\[(gw\d+)\].*PASSED (puzzles/\d\d_\w+\.py)::", line)
        if m:
            workers.setdefault(m[2], set()).add(m[1])
    assert sorted(workers) == [f"puzzles/{s}.py" for s in stems]
    assert all(len(w) == 1 for w in workers.values()), workers  # each file checked on one worker only
    assert len(set().union(*workers.values())) == 2  # and the work was shared
    result.stdout.fnmatch_lines(
        ["*circuits · solutions*", *(f"*{s}*solved*" for s in stems), "solved 4 of 4 *every puzzle solved"]
    )  # rows in collection order


@needs_xdist
@pytest.mark.parametrize("dist", ["load", "loadgroup", "worksteal", "loadscope", "loadfile", "each"])
def test_every_dist_mode_keeps_a_puzzle_files_targets_together(pytester, dist):
    """The modes that would split a file get the scheduler the run above shows at work (one unit per puzzle file,
    an xdist_group's tests together, any other test alone); the others keep files whole by themselves."""
    from circuits.pytest_plugin import pytest_xdist_make_scheduler

    config = pytester.parseconfig("--tx", "2*popen", "--dist", dist)
    scheduler = pytest_xdist_make_scheduler(config, None)
    if dist in ("loadscope", "loadfile", "each"):
        assert scheduler is None
        return
    assert type(scheduler).__name__ == "PuzzleFileScheduling"
    target = "puzzles/01_consonants.py::1. head 0.0's result is [1, 0] before the first consonant and …"
    assert (
        scheduler._split_scope(target)
        == scheduler._split_scope("puzzles/01_consonants.py::2. x")
        == "puzzles/01_consonants.py"
    )
    assert scheduler._split_scope("tests/test_x.py::test_a[1]@width") == "width"
    assert scheduler._split_scope("tests/test_x.py::test_a[1@2]") == "tests/test_x.py::test_a[1@2]"


@needs_xdist
def test_the_controller_summary_says_what_failed_and_what_is_not_attempted(pytester):
    root = project(pytester, ("01_consonants", "03_uniform", "05_virtual_head"), answered=("03_uniform",))
    answer(root, "01_consonants", WRONG_01)
    result = pytester.runpytest_subprocess(
        "puzzles/", "--no-margins", "--no-cache", "-n", "2", "-p", "no:cacheprovider", "--junitxml", "out.xml"
    )
    result.assert_outcomes(failed=1, passed=1, skipped=2)
    junit_has_whole_lines(root, result)  # the XML the controller writes from the workers' reports (see below)
    result.stdout.fnmatch_lines(
        [
            "*01_consonants*failing*fails: head 0.0*",
            "*03_uniform*solved*",
            "*05_virtual_head*not attempted*fill in*",
            "solved 1 of 3 *",
            "next: puzzles/01_consonants.py (circuits watch 1)",
        ]
    )
    result.stdout.fnmatch_lines(["*shortest failing input: 'aaaaaaaaaaaaaaaaab'*"])  # the worker's report, whole
    assert "Traceback" not in result.stdout.str()


# --- pytest's cache: --lf, nothing beside the learner's files ---------------------------------------------
@pytest.mark.parametrize("workers", [0, 2], ids=["serial", "xdist"])
def test_lf_reruns_only_the_failing_puzzle_and_nothing_is_written_in_the_project(pytester, tmp_path, workers):
    if workers and not XDIST:
        pytest.skip("pytest-xdist is not installed (the dev extra has it)")
    pytester._monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    root = project(pytester, ("01_consonants", "03_uniform"), answered=("03_uniform",))
    answer(root, "01_consonants", WRONG_01)
    before = everything(root)
    n = ("-n", str(workers)) if workers else ()
    runner = pytester.runpytest_subprocess if workers else pytester.runpytest  # xdist needs a process of its own
    run = lambda *args: runner("puzzles/", "--no-margins", "-p", "no:benchmark", *n, *args)  # noqa: E731

    run().assert_outcomes(failed=1, passed=1)
    again = run("--lf")
    again.assert_outcomes(failed=1)  # 03_uniform, solved, is not run again
    if not workers:  # under xdist the workers choose, and the controller's header does not say
        again.stdout.fnmatch_lines(["*run-last-failure: rerun previous 1 failure*"])
    assert "03_uniform" not in again.stdout.str()
    assert everything(root) == before  # no .pytest_cache beside the puzzles
    [kept] = (tmp_path / "cache" / "circuits" / "pytest").glob("*/v/cache/lastfailed")  # in the user's cache
    assert kept.parents[2] in (
        project_cache_dir(root, tmp_path / "cache"),
        project_cache_dir(root / "puzzles", tmp_path / "cache"),
    )

    if workers:  # what follows is pytest's own lastfailed bookkeeping, kept in the same folder either way: once
        return  # is enough (serially; xdist's run above showed the folder and the rerun of the failure alone)
    shutil.copy(ROOT / "solutions" / "01_consonants.py", root / "puzzles" / "01_consonants.py")
    run("--lf").assert_outcomes(passed=1)
    run("--lf").assert_outcomes(passed=2)  # no failure left: --lf runs everything


def test_an_ini_cache_dir_is_kept(pytester, tmp_path):
    """A project that names its cache_dir keeps it: the plugin only moves pytest's default."""
    root = project(pytester, ("03_uniform",), answered=("03_uniform",))
    (root / "pytest.ini").write_text("[pytest]\ncache_dir = mycache\n")
    pytester.runpytest("puzzles/", "--no-margins").assert_outcomes(passed=1)
    assert (root / "mycache").is_dir() and not (root / ".pytest_cache").exists()


def test_other_projects_keep_pytests_own_cache_folder(pytester):
    """The plugin is installed for every pytest run: only a circuits project's cache is moved."""
    pytester.makepyfile(test_plain="def test_one():\n    assert True\n")
    pytester.runpytest().assert_outcomes(passed=1)
    assert (pytester.path / ".pytest_cache").is_dir()


def test_tb_line_prints_the_failure_line(pytester):
    root = project(pytester, ("01_consonants",))
    answer(root, "01_consonants", WRONG_01)
    result = pytester.runpytest("puzzles/", "--no-margins", "--no-cache", "--tb=line")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["✗ head 0.0's result is * fails on 'aaaaaaaaaaaaaaaaab' (18 tokens): *"])
    assert "object at 0x" not in result.stdout.str()


# --- JUnit XML for autograders ----------------------------------------------------------------------------
def test_junit_failure_message_is_the_whole_line_and_the_name_whole(pytester):
    """Serially here; under xdist in test_the_controller_summary_says_what_failed_and_what_is_not_attempted."""
    root = project(pytester, ("01_consonants", "03_uniform"), answered=("03_uniform",))
    answer(root, "01_consonants", WRONG_01)
    result = pytester.runpytest(
        "puzzles/", "--no-margins", "--no-cache", "-p", "no:cacheprovider", "--junitxml", "out.xml"
    )
    result.assert_outcomes(failed=1, passed=1)
    junit_has_whole_lines(root, result)


def junit_has_whole_lines(root, result) -> None:
    """out.xml of a run where 01_consonants answers WRONG_01 and 03_uniform is solved: whole names, one-line
    messages; and the terminal's short summary keeps its one trimmed line."""
    cases = {c.get("name"): c for c in ET.parse(root / "out.xml").iter("testcase")}
    label = load(ROOT / "solutions" / "01_consonants.py").puzzle.targets[0].label
    assert len(label) > 28 and f"1. {label}" in cases  # the whole name, brackets and all
    failure = cases[f"1. {label}"].find("failure")
    message = failure.get("message")
    assert "\n" not in message and "…" not in message
    assert message.startswith(f"✗ {label}: fails on 'aaaaaaaaaaaaaaaaab' (18 tokens): at position 17 'b' ")
    assert message.endswith("(error 0.103 > tolerance 0.1)")
    assert "yours vs expected, per position:" in failure.text and "hint:" in failure.text
    assert cases[f"1. {load(ROOT / 'solutions' / '03_uniform.py').puzzle.targets[0].label}"].find("failure") is None
    # the terminal's short summary stays one trimmed line
    [line] = [s for s in result.stdout.lines if s.startswith("FAILED puzzles/01_consonants.py")]
    assert len(line) <= 80 and line.endswith("…")
