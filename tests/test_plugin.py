"""`pytest puzzles/` end to end, through pytester: skips, failures with the shrunk input, the summary, --solutions."""

from helpers import fresh_project


def setup_project(pytester, stems=("01_consonants", "03_uniform")):
    return fresh_project(pytester.path, stems)


def answer(pytester, stem, block: str):
    """Write `block` as the answer of puzzles/<stem>.py (replacing its stub)."""
    path = pytester.path / "puzzles" / f"{stem}.py"
    text = path.read_text()
    head = text[: text.index("\n", text.index("# ── your answer")) + 1]
    path.write_text(head + block)


def test_stubs_are_skipped_as_not_attempted(pytester):
    setup_project(pytester)
    result = pytester.runpytest("puzzles/", "-rs")
    result.assert_outcomes(skipped=2)
    result.stdout.fnmatch_lines(
        [
            "*circuits · your puzzles*",
            "*01_consonants*not attempted*",
            "*03_uniform*not attempted*",
            "SKIPPED * puzzles/01_consonants.py*: not attempted: fill in W_Q, W_K, W_V in puzzles/01_consonants.py",
        ]
    )
    assert result.ret == 0


def test_a_wrong_answer_fails_with_the_shrunk_counterexample(pytester):
    setup_project(pytester)
    answer(pytester, "01_consonants", "W_Q = [[1, 1]]\nW_K = [[0, 5]]\nW_V = [[1, 0], [0, 1]]\n")
    result = pytester.runpytest("puzzles/", "--no-margins", "-p", "no:cacheprovider")
    result.assert_outcomes(failed=1, skipped=1)
    result.stdout.fnmatch_lines(
        [
            "*shortest failing input: 'aaaaaaaaaaaaaaaaab' (18 tokens)*",
            "*yours vs expected, per position:*",
            "*attention of head 0.0*",
            "*hint: attention is aimed right but not sharp enough*",
            "*01_consonants*failing*",
        ]
    )
    assert "Traceback" not in result.stdout.str()


def test_solutions_pass_and_the_summary_shows_margins(pytester):
    setup_project(pytester)
    result = pytester.runpytest("puzzles/", "--solutions")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["*circuits · solutions*", "*01_consonants*solved*", "*03_uniform*solved*"])
    assert "holds" in result.stdout.str()


def test_one_item_per_target(pytester):
    setup_project(pytester, stems=("05_virtual_head",))
    result = pytester.runpytest("puzzles/", "--solutions", "-v", "--no-margins")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(
        ["*05_virtual_head.py::1. dimensions 8–15*PASSED*", "*05_virtual_head.py::2. W_net*PASSED*"]
    )


def test_a_broken_puzzle_file_is_one_clear_failure(pytester):
    setup_project(pytester, stems=("03_uniform",))
    answer(pytester, "03_uniform", "W_Q = [[0, 0]\nW_K = [[0, 0]]\n")
    result = pytester.runpytest("puzzles/")
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*puzzles/03_uniform.py line * syntax error*"])
    assert "Traceback" not in result.stdout.str()


def test_other_python_files_are_not_collected(pytester):
    setup_project(pytester, stems=("03_uniform",))
    (pytester.path / "puzzles" / "helpers.py").write_text("raise RuntimeError('must not be imported')\n")
    (pytester.path / "other").mkdir()
    (pytester.path / "other" / "01_thing.py").write_text(
        "from circuits.checking.puzzle import Puzzle\nraise RuntimeError\n"
    )
    result = pytester.runpytest("puzzles/", "other/")
    result.assert_outcomes(skipped=1)


def test_checking_writes_nothing_next_to_the_puzzles(pytester):
    root = setup_project(pytester)
    before = sorted(p.relative_to(root) for p in root.rglob("*"))
    pytester.runpytest("puzzles/", "--solutions", "-p", "no:cacheprovider", "-p", "no:benchmark", "--no-margins")
    after = sorted(p.relative_to(root) for p in root.rglob("*"))
    assert before == after
