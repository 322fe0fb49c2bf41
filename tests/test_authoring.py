"""An author's mistakes are one line naming the file, the field and found vs needed (never a traceback or a false
claim); puzzles anywhere are collected; skipped stages are said; `circuits new` and `circuits audit` work."""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
from helpers import ROOT, circuits_here

from circuits import explain
from circuits.checking.pipeline import load
from circuits.cli import main
from circuits.display import words
from circuits.errors import CircuitError
from circuits.explain import check

# A small valid puzzle: is the first letter a consonant (one head, an Output target and an Attention target).
TEMPLATE = '''"""Puzzle 92 · Is the first letter a consonant?"""

import numpy as np
import sympy

from circuits import Basis, Head, Model, Vocab, blank
from circuits.checking import FILL_ME_IN, Attention, HeadZ, Inputs, Output, Puzzle  # noqa: F401

vocab = Vocab.chars_of("abcde")
resid = Basis(["vowel", "consonant", "first"])
W_E = blank(resid, vocab.tokens)
for t in vocab.tokens:
    W_E["vowel" if t in "ae" else "consonant", t] = 1
W_pos = blank(resid, 16)
W_pos["first", 0] = 1
s = sympy.Symbol("s")


def spec(tokens):
    return [[0, 0] if tokens[0] in "ae" else [1, 0] for _ in tokens]


def where(ids):
    return np.zeros(ids.shape, dtype=int)


def build(answer):
    return Model(vocab, W_E, W_pos=W_pos, params=answer.params,
                 layers=[[Head(W_Q=answer.W_Q, W_K=answer.W_K, W_V=answer.W_V)]])


puzzle = Puzzle(
    number=92, name="first", title="Is the first letter a consonant?",
    answer=["W_Q", "W_K", "W_V"], build=build,
    targets=[Output(HeadZ(0, 0), spec, tol=0.1), Attention(0, 0, where, min_mass=0.9)],
    inputs=Inputs(vocab.tokens, min_len=1, max_len=12),
    examples=["cbcce", "eacca"],
    sharpness=["s"],
)

# ── your answer ──
W_Q = [[s, s, 0]]
W_K = [[0, 0, 1]]
W_V = [[0, 1, 0], [0, 0, 0]]
params = {"s": 10}
'''


def write(folder, old: str = "", new: str = "", name: str = "92_first.py"):
    text = TEMPLATE
    if old:
        assert old in text, old
        text = text.replace(old, new, 1)
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


def line_of(path, text: str) -> int:
    """The 1-based line of the file on which `text` first appears."""
    return next(n for n, line in enumerate(path.read_text().splitlines(), 1) if text in line)


def one_line(excinfo_or_text) -> str:
    text = str(excinfo_or_text.value) if hasattr(excinfo_or_text, "value") else str(excinfo_or_text)
    assert "\n" not in text and "Traceback" not in text
    return text


@pytest.fixture
def here(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_the_template_is_a_valid_solved_puzzle(here):
    result = check(load(write(here)), n_random=300, property_examples=20, margins=True)
    assert result.status == "solved"
    assert words.margins(result.margins)  # s is measured, not "no sharpness needed" by mistake
    assert "no sharpness needed" not in words.margins(result.margins)


# --- each mistake of the issue, one line at load ------------------------------------------------------------------
def test_loading_only_loads_and_validation_is_the_next_stage(here, monkeypatch):
    """loader.load runs the file and nothing more; validate.validated checks the puzzle (pipeline.load does both),
    a shipped puzzle once per process, however many files stand for it."""
    from circuits.checking import loader, validate

    path = write(here, '"cbcce"', '"ab1ce"')
    attempt = loader.load(path)  # an author's mistake is not the loader's business
    assert attempt.puzzle.id == "92_first" and attempt.declared_in == path.resolve()
    with pytest.raises(CircuitError, match=r"^92_first\.py: examples\[0\]: 'ab1ce' has '1'"):
        validate.validated(attempt)
    calls = []
    monkeypatch.setattr(validate, "validate", lambda *a: calls.append(a[2]))
    validate.validated(loader.load(path))
    validate.validated(loader.load(path))
    assert calls == ["92_first.py", "92_first.py"]  # an instructor's own file: validated at every load (it changes)
    from circuits.checking import curriculum

    calls.clear()
    monkeypatch.setattr(validate, "_VALIDATED", {})  # as in a fresh process
    shipped = curriculum.reference_file("01_consonants")
    (here / "puzzles").mkdir()
    mine = shutil.copy(shipped, here / "puzzles" / shipped.name)  # a learner's copy: its puzzle is the shipped one
    for p in (shipped, mine, shipped, mine):
        assert load(p).puzzle.id == "01_consonants"
    assert len(calls) == 1 and calls[0].endswith("01_consonants.py")  # the shipped puzzle: once per process


def test_a_sharpness_name_the_answer_lacks(here):
    with pytest.raises(CircuitError) as e:
        load(write(here, 'sharpness=["s"]', 'sharpness=["W_X"]'))
    assert one_line(e) == (
        "92_first.py: sharpness: 'W_X' is neither an answer name (W_Q, W_K, W_V) nor a sympy symbol "
        "the file defines; name the matrices that set the sharpness, or a symbol bound in params"
    )


def test_an_example_outside_the_vocabulary(here):
    with pytest.raises(CircuitError) as e:
        load(write(here, '"cbcce"', '"ab1ce"'))
    assert one_line(e).startswith(
        "92_first.py: examples[0]: 'ab1ce' has '1' at position 2, which is not in the "
        "inputs' alphabet ('a' 'b' 'c' 'd' 'e')"
    )


def test_a_spec_of_the_wrong_length(here):
    with pytest.raises(CircuitError) as e:
        load(write(here, "for _ in tokens]", "for _ in tokens[1:]]"))
    assert one_line(e) == (
        "92_first.py: targets[0] (Output): spec('cbcce') returned 4 values for 5 tokens; it needs one "
        "per token (None where nothing is expected)"
    )


def test_a_spec_of_the_wrong_type(here):
    with pytest.raises(CircuitError) as e:
        load(write(here, "return [[0, 0] if", "return [['x', 0] if"))
    assert "92_first.py: targets[0] (Output): spec('eacca')[0] is ['x', 0], needs a number" in one_line(e)


def test_a_spec_raising_on_an_example(here):
    with pytest.raises(CircuitError) as e:
        load(path := write(here, "def spec(tokens):\n", "def spec(tokens):\n    assert 'e' not in tokens, 'no e'\n"))
    line = line_of(path, "assert 'e' not in tokens")
    assert one_line(e) == f"92_first.py: targets[0] (Output): spec('cbcce') raised AssertionError at line {line} (no e)"


def test_a_where_of_the_wrong_shape(here):
    with pytest.raises(CircuitError) as e:
        load(write(here, "np.zeros(ids.shape, dtype=int)", "np.zeros((1, 2), dtype=int)"))
    assert one_line(e) == (
        "92_first.py: targets[1] (Attention): where(ids) returned shape (1, 2) for ids of shape (1, 5); "
        "it needs (1, 5) (a key position per query, −1 for none) or (1, 5, 5) (booleans: the keys "
        "each query may attend)"
    )


def test_a_where_pointing_at_a_later_key(here):
    with pytest.raises(CircuitError) as e:
        load(write(here, "np.zeros(ids.shape, dtype=int)", "np.full(ids.shape, 3)"))
    assert "where(ids) puts query 0's key at 3, needs −1 or a key 0..0" in one_line(e)


def test_an_unknown_behaviour(here):
    with pytest.raises(CircuitError) as e:
        load(write(here, "Attention(0, 0, where,", 'Attention(0, 0, "first",'))
    assert "targets[1] (Attention): where='first' is not a behaviour; the behaviours are previous-token" in one_line(e)


def test_an_optional_name_also_in_the_answer(here):
    with pytest.raises(CircuitError) as e:
        load(write(here, 'sharpness=["s"],', 'sharpness=["s"], optional=["W_V", "params"],'))
    assert one_line(e) == "92_first.py: optional: W_V is also in answer=; a name is either required or optional"


def test_a_runs_class_outside_the_alphabet(here):
    text = (
        "Inputs(vocab.tokens, min_len=1, max_len=12, "
        'families=[__import__("circuits.checking").checking.Runs({"v": "ax"})])'
    )
    with pytest.raises(CircuitError) as e:
        load(write(here, "Inputs(vocab.tokens, min_len=1, max_len=12)", text))
    assert "92_first.py: inputs: the class 'v' of runs of one class has 'x', which is not in the alphabet" in one_line(
        e
    )


# --- the author's code failing during a check: the puzzle's mistake, with target, input and line ---------------------
def test_a_spec_raising_on_longer_inputs_is_the_puzzles_mistake(here):
    path = write(
        here,
        "def spec(tokens):\n",
        "def spec(tokens):\n    if len(tokens) > 6:\n        raise ValueError('too long')\n",
    )
    result = check(load(path), n_random=300, property_examples=20, margins=False)
    assert result.status == "error"
    msg = one_line(words.said(result))
    line = line_of(path, "raise ValueError('too long')")
    assert msg.startswith(f"92_first.py: the puzzle's spec raised ValueError at line {line} on input '")
    assert (
        'while checking target "head 0.0 z (A·V) ≈ spec within 0.1": too long (a mistake in the puzzle\'s own '
        "code, not in the answer)" in msg
    )
    assert len(msg.split("on input '")[1].split("'")[0]) == 7  # the shortest input that raises


def test_a_where_raising_during_the_check_is_the_puzzles_mistake(here):
    path = write(here, "def where(ids):\n", "def where(ids):\n    assert ids.shape[1] < 9, 'long'\n")
    result = check(load(path), n_random=300, property_examples=20, margins=False)
    assert result.status == "error"
    line = line_of(path, "assert ids.shape[1] < 9")
    assert f"the puzzle's where() raised AssertionError at line {line} on input '" in one_line(words.said(result))
    assert "not in the answer" in words.said(result)


def test_a_build_that_forgets_the_params(here):
    result = check(load(write(here, "params=answer.params,", "")), n_random=100, property_examples=0, margins=False)
    assert one_line(words.said(result)) == (
        "92_first.py: build: the answer binds s in params, but build() does not pass them to the Model: write "
        "Model(..., params=answer.params) (a mistake in the puzzle's own code, not in the answer)"
    )


def test_a_build_that_reads_an_undeclared_name(here):
    path = write(here, "W_V=answer.W_V", "W_V=answer.W_OV")
    result = check(load(path), n_random=100, property_examples=0, margins=False)
    assert one_line(words.said(result)) == (
        f"92_first.py: build() at line {line_of(path, 'answer.W_OV')} reads answer.W_OV, "
        "which is in neither answer= nor optional= (W_Q, W_K, W_V, params); "
        "add it to one of them (a mistake in the puzzle's own code, not in the answer)"
    )


def test_a_code_compare_raising_is_the_puzzles_mistake_and_the_learners_code_raising_is_theirs():
    import copy

    from hypothesis import strategies as st

    from circuits.targets import Code

    def compare(answer, n):
        answer.double(n)
        return None if n < 5 else {}["missing"]  # the author's bug: a KeyError past 4

    attempt = load(ROOT / "solutions" / "00_attention.py")
    broken = copy.copy(attempt)
    broken.puzzle = copy.copy(attempt.puzzle)
    broken.puzzle.targets = [Code("doubles", lambda: st.integers(0, 9), compare)]
    broken.answer = copy.copy(attempt.answer)
    broken.answer.double = lambda n: 2 * n
    result = check(broken, property_examples=30)
    assert result.status == "error"
    assert one_line(words.said(result)).endswith(
        "the puzzle's compare() raised KeyError at line "
        f"{compare.__code__.co_firstlineno + 2} ('missing') (a mistake in the "
        "puzzle's own code, not in the answer)"
    )

    def wrong(n):
        raise ZeroDivisionError("learner")

    broken.answer.double = wrong
    result = check(broken, property_examples=30)
    assert result.status == "failing"
    assert explain.words(result.targets[0].failure.finding) == "your code raised ZeroDivisionError: learner"


def test_every_shipped_puzzle_and_solution_validates(tmp_path):
    from helpers import STEMS, shipped

    for folder in ("puzzles", "solutions"):
        for stem in STEMS:
            load(shipped(folder, stem, tmp_path / folder))  # raises on any mistake


# --- the report says what was not certified ---------------------------------------------------------------------------
BIG = (
    (
        'vocab = Vocab.chars_of("abcdefghijklmnopqrstuvwxyz")\nresid = Basis(["vowel", "consonant", "first", '
        '*[f"tok:{t}" for t in vocab.tokens]])'
    ),
    'W_E["vowel" if t in "ae" else "consonant", t] = 1\n    W_E[f"tok:{t}", t] = 1',
)


def big(folder):
    path = write(folder, 'vocab = Vocab.chars_of("abcde")\nresid = Basis(["vowel", "consonant", "first"])', BIG[0])
    text = path.read_text().replace('W_E["vowel" if t in "ae" else "consonant", t] = 1', BIG[1])
    text = text.replace("min_len=1, max_len=12", "min_len=4, max_len=12").replace(
        "[[s, s, 0]]", "[[s, s, 0] + [0] * 26]"
    )
    text = text.replace("[[0, 0, 1]]", "[[0, 0, 1] + [0] * 26]").replace(
        "[[0, 1, 0], [0, 0, 0]]", "[[0, 1, 0] + [0] * 26, [0] * 29]"
    )
    path.write_text(text.replace('"cbcce", "eacca"', '"cbcce", "eacaa"'))
    return path


def test_a_skipped_exhaustive_stage_is_said_in_text_and_json(here, capsys):
    path = big(here)
    assert main(["check", str(path), "--no-margins"]) == 0
    out = " ".join(capsys.readouterr().out.split())  # the report wraps at the terminal's width
    assert "not checked: exhaustive: skipped, 26^4 = 456,976 inputs exceed the budget of 20,000" in out
    assert "not checked: margins: skipped, as asked (--no-margins)" in out
    assert main(["check", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["status"] == "solved" and data["coverage"]["small_inputs"] == 0
    assert data["coverage"]["skipped"] == [
        ("exhaustive: skipped, 26^4 = 456,976 inputs exceed the budget of 20,000 the puzzle allows"),
        NO_WRITES,
    ]
    assert data["margins"]


NO_WRITES = (
    "declared writes and reads: no reference solution found (solutions/NN_name.py beside puzzles/, or "
    "in $CIRCUITS_COURSE) and no writes= or reads= in the Puzzle"
)


def test_a_full_check_says_nothing_was_skipped(here, capsys):
    assert main(["check", str(write(here)), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["coverage"]["skipped"] == [NO_WRITES] and data["coverage"]["small_inputs"] > 0  # no reference here
    solutions = here / "solutions"
    solutions.mkdir()
    write(solutions)  # its reference beside it: the writes it may make are known, nothing is left unchecked
    (here / "puzzles").mkdir()
    assert main(["check", str(write(here / "puzzles")), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["coverage"]["skipped"] == [] and data["coverage"]["small_inputs"] > 0


# --- puzzles anywhere ---------------------------------------------------------------------------------------------
@pytest.fixture
def course(pytester):
    (pytester.path / "mycourse").mkdir()
    write(pytester.path / "mycourse", name="92_first.py")
    return pytester.path


def test_a_puzzle_file_named_on_the_command_line_is_checked(course, pytester):
    result = pytester.runpytest("-p", "no:cacheprovider", "--no-margins", "mycourse/92_first.py")
    result.assert_outcomes(passed=2)
    result.stdout.fnmatch_lines(["*92_first*solved*"])


def test_a_puzzle_folder_elsewhere_is_skipped_saying_why(course, pytester):
    result = pytester.runpytest("-p", "no:cacheprovider", "-rs", "mycourse/")
    result.assert_outcomes(skipped=1)
    result.stdout.fnmatch_lines(
        [
            (
                "SKIPPED * mycourse/92_first.py looks like a circuits puzzle, but mycourse/ is not "
                "puzzles/ or solutions/ nor in the ini option circuits_paths: name the file (pytest "
                "mycourse/92_first.py) or add mycourse to circuits_paths"
            )
        ]
    )


def test_a_folder_declared_in_circuits_paths_is_collected(course, pytester):
    pytester.makeini("[pytest]\ncircuits_paths = mycourse\n")
    write(course / "mycourse", name="93_second.py", old="number=92", new="number=93")
    result = pytester.runpytest("-p", "no:cacheprovider", "--no-margins")
    result.assert_outcomes(passed=4)


def test_circuits_check_takes_a_puzzle_file_anywhere(here, capsys):
    (here / "mycourse").mkdir()
    assert main(["check", str(write(here / "mycourse")), "--no-margins"]) == 0
    assert "92_first · Is the first letter a consonant? · solved" in capsys.readouterr().out


# --- circuits new, pytest and circuits audit from an empty folder ----------------------------------------------------
def test_new_then_pytest_then_audit_from_an_empty_folder(tmp_path, pytester, monkeypatch):
    """`circuits` by circuits.cli.main in this process (what the script calls), pytest inline (pytester)."""

    def run(*argv):
        if argv[:2] == ("-m", "circuits.cli"):
            return circuits_here(list(argv[2:]), tmp_path)
        assert argv[:2] == ("-m", "pytest")
        monkeypatch.chdir(tmp_path)
        result = pytester.runpytest(*argv[2:])
        return subprocess.CompletedProcess(argv, result.ret, result.stdout.str(), result.stderr.str())

    made = run("-m", "circuits.cli", "new", "01_fraction", ".")
    assert made.returncode == 0, made.stderr
    assert sorted(str(p.relative_to(tmp_path)) for p in tmp_path.rglob("*.py")) == [
        "puzzles/01_fraction.py",
        "solutions/01_fraction.py",
    ]
    tested = run("-m", "pytest", "-p", "no:cacheprovider", "--no-margins", "-rs", "puzzles/")
    assert tested.returncode == 0, tested.stdout
    assert "1 skipped" in tested.stdout and "not attempted: fill in W_V in puzzles/01_fraction.py" in tested.stdout
    solved = run("-m", "pytest", "-p", "no:cacheprovider", "--no-margins", "solutions/")
    assert solved.returncode == 0 and "1 passed" in solved.stdout
    audited = run("-m", "circuits.cli", "audit", "solutions/01_fraction.py")
    assert audited.returncode == 0, audited.stderr
    # 6 edits of the answer and 1 tolerance probe (a bias of 1.5 × the tolerance on W_V's one row)
    assert audited.stdout.startswith(
        "01_fraction · solutions/01_fraction.py\nmutants killed: 7/7 (100%); allowed as equivalent: 0;"
    )
    by_number = run("-m", "circuits.cli", "audit", "1")
    assert by_number.returncode == 0 and by_number.stdout.startswith("01_fraction")
    by_puzzle_file = run("-m", "circuits.cli", "audit", "puzzles/01_fraction.py")  # unfilled: its solution twin
    assert by_puzzle_file.returncode == 0 and "· solutions/01_fraction.py" in by_puzzle_file.stdout


def test_new_never_overwrites(here, capsys):
    assert main(["new", "05_mine"]) == 0
    mine = here / "solutions" / "05_mine.py"
    mine.write_text("my own work\n")
    assert main(["new", "05_mine"]) == 2
    assert mine.read_text() == "my own work\n"
    assert one_line(capsys.readouterr().err.strip()) == (
        "circuits: new: puzzles/05_mine.py already exists; nothing was written (choose another name, or move it away)"
    )
    assert main(["new", "05_other"]) == 2  # the number is taken
    assert not (here / "puzzles" / "05_other.py").exists()
    assert main(["new", "5_bad"]) == 2


def test_audit_names_each_survivor_with_its_closest_call_and_honours_the_allow_list(here, capsys):
    assert main(["new", "07_lax", "."]) == 0
    solution = here / "solutions" / "07_lax.py"
    solution.write_text(solution.read_text().replace("tol=0.01", "tol=1.0"))
    capsys.readouterr()
    assert main(["audit", str(solution)]) == 1
    out = capsys.readouterr().out
    assert out.startswith("07_lax · solutions/07_lax.py\nmutants killed: 3/7 (43%); allowed as equivalent: 0; 7 in all")
    assert (
        "  W_V[[]0, a]: → 0\n    closest call: on 'a', largest error 1 (tolerance 1)\n"
        "    in \"head 0.0's result is the fraction of a's so far (±0.01)\"\n"
    ) in out
    assert "  whole answer: × 0.1\n    closest call: on 'a', largest error 0.9 (tolerance 1)\n" in out
    assert all(len(line) <= 80 for line in out.splitlines())
    assert main(["audit", str(solution), "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert [(s["entry"], s["change"]) for s in data["survived"]] == [
        ("W_V[0, a]", "→ 0"),
        ("W_V[0, b]", "0 → 1"),
        ("W_V", "columns a ↔ b"),
        ("whole answer", "× 0.1"),
    ]
    reviewed = [(s["mutant"], "reviewed for this test") for s in data["survived"]] + [("W_Q*", "stale")]
    solution.write_text(
        solution.read_text().replace("ALLOWED_MUTANTS: list[tuple[str, str]] = []", f"ALLOWED_MUTANTS = {reviewed!r}")
    )
    assert main(["audit", str(solution)]) == 0
    out = capsys.readouterr().out
    assert f"allowed as equivalent: {len(reviewed) - 1};" in out and "mutants killed: 3/3 (100%)" in out
    assert "matched no mutant: W_Q*" in out  # the skeleton has no W_Q


def test_audit_names_a_surviving_tolerance_probe_with_its_closest_call(tmp_path, capsys, monkeypatch):
    """Puzzle 12 outside the curriculum (so without its allow-list): its W_O probes survive, and are reported, not a
    KeyError (the audit looked them up among the mutants, which they are not)."""
    from helpers import SOLUTIONS

    text = (SOLUTIONS / "12_successor_head.py").read_text(encoding="utf-8")
    mine = tmp_path / "solutions" / "91_probed.py"
    mine.parent.mkdir()
    mine.write_text(
        text.replace("number=12,", "number=91,").replace('name="successor_head"', 'name="probed"'), encoding="utf-8"
    )
    monkeypatch.chdir(tmp_path)
    assert main(["audit", str(mine)]) == 1
    out = capsys.readouterr().out
    assert "  W_O[[]out:x, :]: + 0.25 (tolerance probe)\n    closest call: on " in out
    assert "  W_O[[]out:y, :]: + 0.25 (tolerance probe)\n    closest call: on " in out


def test_audit_of_a_failing_reference_is_one_line(here, capsys):
    assert main(["new", "08_broken", "."]) == 0
    solution = here / "solutions" / "08_broken.py"
    solution.write_text(solution.read_text().replace('W_V[0, "a"] = 1', 'W_V[0, "b"] = 1'))
    capsys.readouterr()
    assert main(["audit", str(solution)]) == 2
    err = one_line(capsys.readouterr().err.strip())
    assert err.startswith(
        "circuits: solutions/08_broken.py: the reference solution does not pass its own check (fails: "
    )


def test_a_shipped_puzzle_passes_its_own_audit(capsys, monkeypatch):
    monkeypatch.chdir(ROOT)
    assert main(["audit", "3"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("03_uniform · solutions/03_uniform.py\nmutants killed: ") and "(100%)" in out


def test_the_scaffold_template_is_the_one_the_files_hold(tmp_path):
    from circuits.workspace.scaffold import new

    puzzle, solution = new("42_answer", str(tmp_path))
    mark = "# ── your answer"
    assert puzzle.read_text().split(mark)[0] == solution.read_text().split(mark)[0]
    assert load(puzzle).missing == ["W_V"] and load(solution).attempted
    shutil.rmtree(tmp_path / "puzzles")


def test_an_allow_list_entry_pasted_from_the_audits_survivor_line_matches():
    """The audit prints a survivor as `  W_Q[0, a]: × −1`; pasted into ALLOWED_MUTANTS it allows that mutant only."""
    from circuits.audit.author import split_name
    from circuits.audit.mutants import matches

    for name in ("W_Q[0, consonant] × −1", "W_K columns vowel ↔ consonant", "whole answer × 10", "s × 0.1"):
        entry, change = split_name(name)
        assert matches(name, f"{entry}: {change}") and matches(name, f"  {entry}: {change}")
    assert not matches("W_Q[0, consonant] × −1", "W_Q[0, vowel]: × −1")
    assert not matches("W_Q[0, consonant] × −1", "W_Q[0, consonant]: × 10")


def test_a_survivor_is_printed_as_the_allow_list_entry_for_it_alone():
    """The printed form escapes fnmatch's metacharacters, and a pattern written in the printed (colon) form matches."""
    from circuits.audit.mutants import allow_entry, matches

    assert allow_entry("W_Q[0, consonant] × −1") == "W_Q[[]0, consonant]: × −1"
    assert allow_entry("W_Q1[1, cos:1] 0 → s*sqrt(2)") == "W_Q1[[]1, cos:1]: 0 → s[*]sqrt(2)"
    assert allow_entry("W_K0 columns bos ↔ pos:0") == "W_K0: columns bos ↔ pos:0"
    assert allow_entry("causal_mask: mask off by one (j < i)") == "causal_mask: mask off by one (j < i)"
    assert matches("W_Q1[1, cos:1] 0 → s*sqrt(2)", "W_Q1[[]1, cos:1]: 0 → s[*]sqrt(2)")
    assert not matches("W_Q1[1, cos:1] 0 → s+sqrt(2)", "W_Q1[[]1, cos:1]: 0 → s[*]sqrt(2)")
    assert not matches("W_Q11 0 → s*sqrt(2)", "W_Q1[[]1, cos:1]: 0 → s[*]sqrt(2)")
    # patterns in the colon form match as they read (the instructor wrote 79 that never did)
    assert matches("W_K0 columns bos ↔ pos:0", "W_K0: columns *") and matches("W_Q[3, bos] → 0", "W_Q[[]*, bos]: *")
    assert not matches("W_K0 rows bos ↔ pos:0", "W_K0: columns *")


def test_each_printed_survivor_pasted_into_the_allow_list_explains_it_and_an_unused_entry_is_named(here, capsys):
    """Audit a weak puzzle, paste every survivor line as printed (and the JSON's "allow") into ALLOWED_MUTANTS, and
    audit again: every survivor is allowed; an entry that matches no mutant says so, in text and JSON."""
    assert main(["new", "07_weak", "."]) == 0
    solution = here / "solutions" / "07_weak.py"
    text = solution.read_text()
    solution.write_text(text.replace("tol=0.01", "tol=1.0"))
    capsys.readouterr()
    assert main(["audit", str(solution)]) == 1
    out = capsys.readouterr().out
    printed = [line[2:] for line in out.splitlines() if line.startswith("  ") and not line.startswith("    ")]
    assert printed == ["W_V[[]0, a]: → 0", "W_V[[]0, b]: 0 → 1", "W_V: columns a ↔ b", "whole answer: × 0.1"]
    assert main(["audit", str(solution), "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    assert [s["allow"] for s in data["survived"]] == printed and data["matched_no_mutant"] == []
    survivors = [s["mutant"] for s in data["survived"]]
    assert "whole answer × 10" not in survivors  # killed: allowing it is needless, not unmatched
    typo = "W_K0: columns bos ↔ pos:0"
    for pasted in (printed, [s["allow"] for s in data["survived"]]):
        entries = [(p, "pasted from the audit's report") for p in pasted] + [
            (typo, "no W_K0 here"),
            ("whole answer × 10", "killed anyway"),
        ]
        solution.write_text(
            text.replace("tol=0.01", "tol=1.0").replace(
                "ALLOWED_MUTANTS: list[tuple[str, str]] = []", f"ALLOWED_MUTANTS = {entries!r}"
            )
        )
        assert main(["audit", str(solution)]) == 0
        out = capsys.readouterr().out
        assert "mutants killed: 3/3 (100%); allowed as equivalent: 4;" in out and "survived" not in out
        assert f"\nmatched no mutant: {typo}\n" in out
        assert "allow-list entries no mutant needs (remove them): whole answer × 10" in out
        assert main(["audit", str(solution), "--json"]) == 0
        data = json.loads(capsys.readouterr().out)
        assert data["survived"] == [] and sorted(a["mutant"] for a in data["allowed"]) == sorted(survivors)
        assert data["matched_no_mutant"] == [typo] and data["stale_allowed"] == ["whole answer × 10"]


def test_an_after_bos_that_names_no_token(here):
    """NextToken(after_bos=…) reads the prediction made at BOS; what it names must be a token (puzzle 08 uses it)."""
    path = write(here, "HeadZ, Inputs, Output, Puzzle", "HeadZ, Inputs, NextToken, Output, Puzzle")
    text = path.read_text(encoding="utf-8").replace(
        "Attention(0, 0, where, min_mass=0.9)]",
        "Attention(0, 0, where, min_mass=0.9),\n"
        "             NextToken(lambda t: [None] * len(t), after_bos=lambda t: 'z')]",
    )
    path.write_text(text, encoding="utf-8")
    with pytest.raises(CircuitError) as e:
        load(path)
    assert one_line(e) == (
        "92_first.py: targets[2] (NextToken): after_bos('cbcce') returned 'z', which is not a token "
        "of the puzzle's alphabet"
    )
