"""The guarantees every puzzle inherits from the framework (checking/guarantees.py), each shown to reject a wrong
answer on a puzzle written for the test: declared writes, a live sharpness, inputs that reach n_ctx, no vacuous
target. (The shipped puzzle being what is checked: tests/test_workspace.py.)"""

from __future__ import annotations

import pytest
from test_authoring import write

from circuits.checking.pipeline import load
from circuits.cli import main
from circuits.display import words
from circuits.errors import CircuitError
from circuits.explain import check

# A puzzle with a writer: head 0.0 attends evenly and writes the share of a's so far into `out`.
WRITER = '''"""Puzzle 93 · The share of a's so far, written into `out`."""

from circuits import Basis, Head, Model, Vocab, blank
from circuits.checking import FILL_ME_IN, Inputs, Output, Puzzle, Residual  # noqa: F401

vocab = Vocab.chars_of("abcd")
resid = Basis(["tok:a", "tok:b", "tok:c", "tok:d", "out", "scratch"])
W_E = blank(resid, vocab.tokens)
for t in "abcd":
    W_E[f"tok:{t}", t] = 1


def share(tokens):
    return [tokens[: i + 1].count("a") / (i + 1) for i in range(len(tokens))]


def build(answer):
    return Model(vocab, W_E, residual=resid, params=answer.params,
                 layers=[[Head(W_Q=blank(1, resid), W_K=blank(1, resid), W_V=answer.W_V, W_O=answer.W_O)]])


puzzle = Puzzle(
    number=93, name="share", title="The share of a's so far",
    answer=["W_V", "W_O"], build=build,
    targets=[Output(Residual(("out",)), share, tol=0.01)],
    inputs=Inputs(vocab.tokens, min_len=1, max_len=8),
    examples=["abca"],
    WRITES
)

# ── your answer ──
W_V = blank(1, resid)
W_V[0, "tok:a"] = 1
W_O = blank(resid, 1)
W_O["out", 0] = 1
LEAK
'''


def writer(folder, writes: str = "", leak: str = "", name: str = "93_share.py"):
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(WRITER.replace("WRITES", writes).replace("LEAK", leak), encoding="utf-8")
    return path


# --- declared writes ----------------------------------------------------------------------------------------------
def test_a_head_writing_outside_its_declared_directions_is_refused(tmp_path):
    declared = 'writes={"head 0.0": ["out"]},'
    assert check(load(writer(tmp_path, declared)), n_random=200, margins=False).status == "solved"
    result = check(load(writer(tmp_path, declared, 'W_O["scratch", 0] = 0.5')), n_random=200, margins=False)
    assert result.status == "error"
    assert words.said(result).endswith(
        "93_share.py: head 0.0 writes into scratch (0.5), but this puzzle lets it write only "
        "into out: the rows of W_O for them must be 0"
    )


def test_without_a_declaration_the_reference_answer_decides_where_each_head_may_write(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    writer(tmp_path / "solutions")  # the course's reference: head 0.0 writes into `out` only
    mine = writer(tmp_path / "puzzles", leak='W_O["tok:b", 0] = 1')
    result = check(load(mine), n_random=200, margins=False)  # the target reads only `out`: it passes by itself
    assert (
        result.status == "error"
        and "head 0.0 writes into tok:b (1), but this puzzle lets it write only into out" in words.said(result)
    )
    assert check(load(writer(tmp_path / "puzzles")), n_random=200, margins=False).status == "solved"


def test_a_write_declaration_is_checked_when_the_puzzle_loads(tmp_path):
    with pytest.raises(CircuitError, match=r'writes: \'head zero\' is not "head L.H" or "mlp L"'):
        load(writer(tmp_path, 'writes={"head zero": ["out"]},'))
    with pytest.raises(CircuitError, match=r"writes\['head 0.0'\]: needs a list of direction names"):
        load(writer(tmp_path, 'writes={"head 0.0": "out"},'))


def test_the_shipped_10_refuses_a_readout_that_writes_everywhere(tmp_path, monkeypatch, capsys):
    """Issue case: 10's correct answer with W_O = np.ones((10, 1)) writes into every direction, not only seen."""
    from helpers import SOLUTIONS

    (tmp_path / "puzzles").mkdir()
    text = (SOLUTIONS / "10_seen_before.py").read_text(encoding="utf-8")
    text = text.replace('W_O["seen", 0] = 1\n', 'W_O["seen", 0] = 1\nimport numpy as np\nW_O = np.ones((10, 1))\n', 1)
    (tmp_path / "puzzles" / "10_seen_before.py").write_text(text, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["check", "10", "--no-cache"]) == 2  # a rule of the puzzle broken: one line, as for a wrong shape
    assert capsys.readouterr().err == (
        "circuits: puzzles/10_seen_before.py: head 1.0 writes into tok:a (1), tok:b (1), tok:c (1) and 6 more, but "
        "this puzzle lets it write only into seen: the rows of W_O for them must be 0\n"
    )


# --- a live sharpness ---------------------------------------------------------------------------------------------
def test_a_sharpness_symbol_parked_on_a_dead_entry_is_refused(tmp_path):
    """The scale baked into the numbers and s on an entry no checked score depends on (first is 0 at every query
    but position 0's): the margin would say "no sharpness needed", which is false."""
    dead = write(tmp_path, "W_Q = [[s, s, 0]]", "W_Q = [[10, 10, s]]")
    text = dead.read_text().replace('params = {"s": 10}', 'params = {"s": 1}')
    dead.write_text(text)
    result = check(load(dead), n_random=300, margins=False)
    assert result.status == "error"
    assert "with s at 0, so s does not control the attention the targets depend on" in words.said(result)
    assert check(load(write(tmp_path)), n_random=300, margins=False).status == "solved"


# --- inputs reach n_ctx ---------------------------------------------------------------------------------------------
def test_inputs_reach_the_models_n_ctx_beyond_the_puzzles_max_len(tmp_path):
    """W_pos has 16 positions, max_len is 12: s = 4.7 holds to length 12 (mass 0.909) and fails at 16 (0.88)."""
    short = write(tmp_path, 'params = {"s": 10}', 'params = {"s": 4.7}')
    result = check(load(short), n_random=300, margins=False)
    assert result.status == "failing"
    assert result.coverage.lengths == (1, 16)
    failure = next(t.failure for t in result.targets if t.status == "failed")
    assert len(failure.tokens) > 12


# --- no vacuous target ----------------------------------------------------------------------------------------------
def test_a_spec_that_expects_nothing_is_refused_when_the_puzzle_loads(tmp_path):
    path = write(
        tmp_path,
        '    return [[0, 0] if tokens[0] in "ae" else [1, 0] for _ in tokens]',
        "    return [None for _ in tokens]",
    )
    with pytest.raises(CircuitError, match=r"targets\[0\] \(Output\): checks nothing: on all 202 inputs tried"):
        load(path)


def test_a_where_that_selects_no_key_is_refused_when_checked(tmp_path):
    path = write(tmp_path, "    return np.zeros(ids.shape, dtype=int)", "    return np.full(ids.shape, -1)")
    result = check(load(path), n_random=200, margins=False)
    assert result.status == "error"
    assert 'the puzzle\'s target "head 0.0 puts ≥ 0.9 of its attention on where" checks nothing' in words.said(result)


def test_the_issues_wrong_circuits_fail_through_pytest(pytester):
    """01 loosening its own targets, 10 writing everywhere, 09 with its sharpness parked on a dead entry:
    each fails in `pytest puzzles/`, with its one line."""
    from helpers import SOLUTIONS

    puzzles = pytester.path / "puzzles"
    puzzles.mkdir()
    sol = lambda stem: (SOLUTIONS / f"{stem}.py").read_text(encoding="utf-8")  # noqa: E731
    (puzzles / "01_consonants.py").write_text(
        sol("01_consonants").replace("W_K = [[0, 20]]", "W_K = [[0, 0]]")
        + "\nimport dataclasses\npuzzle = dataclasses.replace(puzzle, targets=[dataclasses.replace(t, tol=10.0) "
        "for t in puzzle.targets])\n",
        encoding="utf-8",
    )
    (puzzles / "10_seen_before.py").write_text(
        sol("10_seen_before") + "\nimport numpy as np\nW_O = np.ones((10, 1))\n", encoding="utf-8"
    )
    dead = sol("09_duplicate_token") + (
        "\nimport numpy as np\nW_Q = np.array([[sympy.sympify(x).subs(s, 20) for x in row] for row in W_Q.values], "
        "dtype=object)\nW_Q[0, -1] = s\nparams = {'s': 1}\n"
    )
    (puzzles / "09_duplicate_token.py").write_text(dead, encoding="utf-8")
    result = pytester.runpytest("puzzles/", "-p", "no:cacheprovider", "--no-margins", "--no-cache")
    assert result.ret == 1
    outcomes = result.parseoutcomes()
    assert outcomes.get("passed", 0) == 0 and outcomes["failed"] >= 3
    text = " ".join(result.stdout.str().split())
    assert "! puzzles/01_consonants.py line" in text and "given `puzzle` changed; checked as shipped" in text
    assert "head 1.0 writes into tok:a (1)" in text
    assert "with s at 0, so s does not control the attention the targets depend on" in text


def test_a_sympy_given_is_the_same_given_after_pytest_ran_in_this_process(tmp_path, pytester, monkeypatch):
    """An in-process pytest run (pytester, a notebook's) restores sys.modules afterwards, so sympy's classes can be
    made anew, and sympy orders a sum's terms by them: 11's W_U (entries like √(5/8 − √5/8)) must still compare as
    the shipped given, not as an edit of it."""
    from helpers import fresh_project, shipped

    project = fresh_project(tmp_path / "project", ("03_uniform", "11_copying_head"))
    monkeypatch.chdir(project)
    pytester.runpytest("-p", "no:cacheprovider", "--no-margins", "puzzles/")
    monkeypatch.undo()
    assert load(shipped("puzzles", "11_copying_head", tmp_path)).edits == []


def test_a_value_bias_that_reaches_an_undeclared_direction_is_a_write():
    """A head writes what its value bias reaches through W_O, as well as its OV circuit: a row of W_O that no W_V
    row feeds still writes when b_V is non-zero there."""
    from circuits import Basis, Head, Model, Vocab, blank
    from circuits.checking import guarantees

    vocab = Vocab.chars_of("ab")
    resid = Basis(["tok:a", "tok:b", "out", "scratch"])
    W_E = blank(resid, vocab.tokens)
    W_E["tok:a", "a"] = W_E["tok:b", "b"] = 1
    W_V, W_O = blank(2, resid), blank(resid, 2)
    W_V[0, "tok:a"] = W_O["out", 0] = W_O["scratch", 1] = 1  # value 1 reads nothing: only a bias would feed it

    def model(b_V):
        return Model(
            vocab,
            W_E,
            residual=resid,
            layers=[[Head(W_Q=blank(1, resid), W_K=blank(1, resid), W_V=W_V, W_O=W_O, b_V=b_V)]],
        )

    guarantees.check_writes(model([0, 0]), {"head 0.0": ["out"]}, "93_share.py")
    with pytest.raises(CircuitError, match=r"^93_share.py: head 0.0 writes into scratch \(0.5\), but this puzzle"):
        guarantees.check_writes(model([0, 0.5]), {"head 0.0": ["out"]}, "93_share.py")
