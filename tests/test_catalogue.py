"""The catalogue of learners' mistakes: each meets one line naming the culprit, never a traceback.

Most cases go through the real entry points: a puzzle file in a temporary project (a copy of a
reference solution with its answer block edited), then `circuits show` / `check` / `scan` run
in-process, or `pytest puzzles/` through pytester. The contract for the command line: a non-zero
exit, exactly one line on stderr starting with `circuits:`, naming the culprit, and no traceback.
"""

from __future__ import annotations

import json
import pickle
import re
import shutil
import zipfile

import numpy as np
import pytest
from helpers import ROOT

from circuits import CircuitError, Head, Model, Vocab
from circuits.cli import main
from circuits.model import functional as F

MARK = "# ── your answer"
GOOD = {"W_Q": "[[1, 1]]", "W_K": "[[0, 20]]", "W_V": "[[1, 0], [0, 1]]"}  # puzzle 01's reference answer
PUZZLE = "puzzles/01_consonants.py"


# --- a temporary project and the command line ------------------------------------------------------
@pytest.fixture
def project(tmp_path, monkeypatch):
    """A project with puzzles 01 and 03 answered as in solutions/; the working directory is its root."""
    (tmp_path / "puzzles").mkdir()
    for stem in ("01_consonants", "03_uniform"):
        shutil.copy(ROOT / "solutions" / f"{stem}.py", tmp_path / "puzzles" / f"{stem}.py")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def answer(root, block: str, stem: str = "01_consonants") -> None:
    """Replace everything below the puzzle's "your answer" line with `block`."""
    path = root / "puzzles" / f"{stem}.py"
    text = path.read_text(encoding="utf-8")
    path.write_text(text[: text.index("\n", text.index(MARK)) + 1] + block, encoding="utf-8")


def block(preamble: str = "", **names: str) -> str:
    """Puzzle 01's answer as source, with some names replaced (None: left out)."""
    lines = [f"{k} = {v}" for k, v in {**GOOD, **names}.items() if v is not None]
    return preamble + "\n".join(lines) + "\n"


def edit(root, old: str, new: str, stem: str = "01_consonants") -> str:
    """Change the givens of a puzzle file (its vocabulary, its build). A shipped puzzle's givens cannot be changed
    by its file (the shipped ones are checked), so the file becomes an instructor's own puzzle, numbered 80 + its
    number; returns that number."""
    path = root / "puzzles" / f"{stem}.py"
    text = path.read_text(encoding="utf-8")
    assert old in text, f"{old!r} is no longer in {stem}.py"
    number = int(stem[:2])
    own = root / "puzzles" / f"{80 + number}_{stem[3:]}.py"
    own.write_text(
        text.replace(old, new, 1).replace(f"number={number},", f"number={80 + number},", 1), encoding="utf-8"
    )
    path.unlink()
    return str(80 + number)


def circuits(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def one_line(code: int, out: str, err: str, *culprit: str) -> str:
    """The command failed with exactly one `circuits: …` line on stderr that names the culprit."""
    assert code != 0, f"exit 0; stdout: {out[:300]}"
    assert "Traceback" not in out + err
    lines = err.strip().splitlines()
    assert len(lines) == 1, f"stderr is not one line:\n{err}"
    assert re.match(r"circuits( scan)?: ", lines[0]), lines[0]
    for part in culprit:
        assert part in lines[0], f"{part!r} not in {lines[0]!r}"
    return lines[0]


def reported(code: int, out: str, err: str, *culprit: str) -> None:
    """`circuits check` failed and its report carries the message (rich may wrap it: compare without spaces)."""
    assert code != 0
    assert "Traceback" not in out + err
    squashed = re.sub(r"\s+", "", out + err)
    for part in culprit:
        assert re.sub(r"\s+", "", part) in squashed, f"{part!r} not in the report:\n{out}{err}"


# --- the answer's matrices, params and types ----------------------------------------------------------
MATRIX_CASES = {
    "wrong shape": (block(W_Q="[[1, 1, 0]]"), "W_Q of head 0.0 has shape (1, 3) but needs (d_head, d_model) = (?, 2)"),
    "transposed": (
        block(W_K="[[0], [20]]"),
        "W_K of head 0.0 has shape (2, 1) but needs (d_head, d_model) = (1, 2); it looks transposed",
    ),
    "transposed, d_head free": (
        block(W_Q="[[1], [1]]"),
        "W_Q of head 0.0 has shape (2, 1) but needs (d_head, d_model) = (?, 2); it looks transposed",
    ),
    "a 1-D list for a matrix": (
        block(W_Q="[1, 1]"),
        "W_Q of head 0.0 has shape (2,) but needs (d_head, d_model) = (?, 2); "
        "a matrix needs nested lists, e.g. [[1, 0]] for one row",
    ),
    "ragged rows": (
        block(W_V="[[1, 0], [0]]"),
        "W_V of head 0.0 is ragged: entry [1] has shape (1,) but entry [0] has (2,)",
    ),
    "NaN": (block(W_Q="[[float('nan'), 1]]"), "W_Q of head 0.0 has nan at [0, 0]; every entry must be finite"),
    "inf": (block(W_K="[[0, float('inf')]]"), "W_K of head 0.0 has inf at [0, 1]; every entry must be finite"),
    "a string entry": (
        block(W_V="[[1, 0], [0, 'one']]"),
        "W_V of head 0.0 has the string 'one' at [1, 1]; every entry must be a number",
    ),
    "a None entry": (block(W_Q="[[None, 1]]"), "W_Q of head 0.0 has None at [0, 0]; every entry must be a number"),
    "an integer too large for float64": (
        block(W_K="[[0, 10**400]]"),
        "W_K of head 0.0 has an entry too large for float64 at [0, 1]",
    ),
    "weights of 1e300": (
        block(W_K="[[0, 1e300]]"),
        "W_K of head 0.0 has 1e+300 at [0, 1]; entries above 1e+100 in size overflow float64 in q·k",
    ),
    "a symbol left unbound": (
        block("import sympy\nbeta = sympy.Symbol('beta')\n", W_K="[[0, beta]]"),
        "W_K of head 0.0 uses symbol beta at [0, 1] with no value: bind it in params, e.g. params={'beta': 2.0}",
    ),
    "a symbol bound to a non-number": (
        block("import sympy\nbeta = sympy.Symbol('beta')\n", W_K="[[0, beta]]", params="{'beta': 'sharp'}"),
        "parameter 'beta' is bound to 'sharp', which is not a number",
    ),
    "a symbol bound to inf": (
        block("import sympy\nbeta = sympy.Symbol('beta')\n", W_K="[[0, beta]]", params="{'beta': float('inf')}"),
        "parameter 'beta' is bound to inf, which is not a finite number",
    ),
    "params not a dict": (block(params="[('beta', 20)]"), "params must be a dict of symbol -> number"),
    "an answer of the wrong type: a string": (
        block(W_Q="'identity'"),
        "W_Q of head 0.0 is a str ('identity'), not a matrix; it needs shape (d_head, d_model) = (?, 2)",
    ),
    "an answer of the wrong type: a function": (
        block(W_V="lambda x: x"),
        "W_V of head 0.0 is a function, not a matrix",
    ),
    "an answer of the wrong type: a number": (block(W_Q="1"), "W_Q of head 0.0 is an int (1), not a matrix"),
    "a complex64 answer (its imaginary part would be dropped)": (
        block("import numpy as np\n", W_Q="np.array([[1, 1j]], dtype=np.complex64)"),
        "W_Q of head 0.0 has a complex entry (1+0j) at [0, 0] (complex64); entries must be real",
    ),
    "a complex entry in a list": (
        block("import numpy as np\n", W_K="[[0, np.complex64(20)]]"),
        "W_K of head 0.0 has a complex entry (20+0j) at [0, 1] (object); entries must be real",
    ),
    "a masked array (its mask would be ignored)": (
        block("import numpy as np\n", W_V="np.ma.masked_array([[1, 0], [0, 1]], mask=[[0, 1], [0, 0]])"),
        "W_V of head 0.0 is a masked array, and the model would ignore its mask: pass plain numbers (e.g. a.filled(0))",
    ),
    "a head of d_head 100,000": (
        block("import numpy as np\n", W_Q="np.ones((100_000, 2))", W_K="np.ones((100_000, 2))"),
        "head 0.0 has d_head = 100,000 (W_Q has 100,000 rows); a head may have at most 1,024",
    ),
    "a matrix of 10^9 entries": (
        block("import numpy as np\n", W_V="np.broadcast_to(np.ones(2), (500_000_000, 2))"),
        "W_V of head 0.0 has shape (500000000, 2), 1,000,000,000 entries; one matrix may hold at most 268,435,456",
    ),
    "a labelled matrix with its columns in another order": (
        block("from circuits import labelled\n", W_Q="labelled(1, ['consonant', 'vowel'], [[1, 1]])"),
        "W_Q of head 0.0 has its columns labelled in another order than the residual stream: column 0 is "
        "'consonant' where the residual stream has 'vowel'",
    ),
    "a labelled matrix with other names": (
        block("from circuits import labelled\n", W_K="labelled(1, ['vowels', 'consonants'], [[0, 20]])"),
        "W_K of head 0.0 has its columns labelled differently from the residual stream: column 0 is 'vowels'",
    ),
}


@pytest.mark.parametrize("source, message", MATRIX_CASES.values(), ids=MATRIX_CASES.keys())
def test_a_bad_answer_is_one_line_from_show_and_analyze(project, capsys, source, message):
    answer(project, source)
    for command in (["show", "1", "abc"], ["analyze", "1"]):
        one_line(*circuits(capsys, *command), f"circuits: {PUZZLE}: {message}")


@pytest.mark.parametrize("source, message", MATRIX_CASES.values(), ids=MATRIX_CASES.keys())
def test_a_bad_answer_fails_check_with_the_message(project, capsys, source, message):
    answer(project, source)
    reported(*circuits(capsys, "check", "1"), f"{PUZZLE}: {message}")


def test_a_parameter_no_matrix_uses_is_a_warning_not_an_error(project, capsys):
    answer(project, block(params="{'gamma': 2.0}"))
    code, out, err = circuits(capsys, "show", "1", "abc")
    assert code == 0 and "Traceback" not in out + err
    assert (
        err.strip()
        == "circuits: warning: puzzles/01_consonants.py: parameter 'gamma' is bound in params but no matrix uses it"
    )


def test_a_labelled_unembedding_in_another_order_is_refused_not_used_by_position(project, capsys):
    """Puzzle 08: W_U built on [*LETTERS, "<bos>"] has the right shape but its rows would be read by position."""
    shutil.copy(ROOT / "solutions" / "08_induction_repeated.py", project / "puzzles")
    path = project / "puzzles" / "08_induction_repeated.py"  # W_U is part of 08's answer: an edit of the answer
    text = path.read_text(encoding="utf-8")
    assert "W_U = blank(vocab.tokens, resid)" in text
    path.write_text(text.replace("W_U = blank(vocab.tokens, resid)", 'W_U = blank([*LETTERS, "<bos>"], resid)'))
    one_line(
        *circuits(capsys, "show", "8", "abab"),
        "circuits: puzzles/08_induction_repeated.py: W_U has its rows "
        "labelled in another order than the vocabulary: row 0 is 'a' where the vocabulary has '<bos>'",
    )


# --- puzzle files that do not load ----------------------------------------------------------------------
LOAD_CASES = {
    "a syntax error": (block(W_Q="[[1, 1]"), [f"circuits: {PUZZLE} line ", "syntax error: '[' was never closed"]),
    "raises on import": (
        block(W_K="[[0, 20 / 0]]"),
        [f"circuits: {PUZZLE} raised ZeroDivisionError on import at line ", ": division by zero"],
    ),
    "an answer left out": (
        block(W_V=None),
        [f"circuits: {PUZZLE} does not define W_V (the answer needs W_Q, W_K, W_V)"],
    ),
    "exit() on import": (block() + "exit()\n", [f"circuits: {PUZZLE} called exit() on import at line "]),
}


@pytest.mark.parametrize("source, message", LOAD_CASES.values(), ids=LOAD_CASES.keys())
@pytest.mark.parametrize("command", [["show", "1", "abc"], ["check", "1"]], ids=["show", "check"])
def test_a_puzzle_file_that_does_not_load(project, capsys, source, message, command):
    answer(project, source)
    one_line(*circuits(capsys, *command), *message)


def test_a_puzzle_file_that_is_not_utf8(project, capsys):
    path = project / PUZZLE
    path.write_bytes(path.read_bytes() + "# café\n".encode("latin-1"))
    one_line(
        *circuits(capsys, "check", "1"),
        f"circuits: {PUZZLE} line ",
        ": not UTF-8 text (byte 0xe9); save the file as UTF-8",
    )


def test_a_puzzle_file_without_a_puzzle(project, capsys):
    n = edit(project, "puzzle = Puzzle(", "puzzle = dict(")
    one_line(
        *circuits(capsys, "show", n, "abc"),
        "circuits: puzzles/81_consonants.py declares no puzzle (expected `puzzle = Puzzle(...)`)",
    )


def test_a_puzzle_name_that_does_not_exist_suggests_the_closest(project, capsys):
    one_line(
        *circuits(capsys, "check", "consonnants"), "circuits: no puzzle named 'consonnants'; did you mean 'consonants'"
    )
    one_line(
        *circuits(capsys, "show", "99", "abc"),
        "circuits: no puzzle named '99'; the puzzles in puzzles are: 01_consonants, 03_uniform",
    )


# --- inputs -----------------------------------------------------------------------------------------------------
def test_a_token_not_in_the_vocabulary(project, capsys):
    one_line(*circuits(capsys, "show", "1", "abZ"), "unknown token 'Z' at position 2", "the vocabulary is 'a' 'b' 'c'")


def test_an_empty_input(project, capsys):
    one_line(*circuits(capsys, "show", "1", ""), "circuits: input 0 is empty; give at least one token")


def test_an_input_longer_than_the_context(project, capsys):
    shutil.copy(ROOT / "solutions" / "02_first_consonant.py", project / "puzzles")
    one_line(*circuits(capsys, "show", "2", "a" * 500), "circuits: input 0 has 500 tokens but n_ctx is ", "(W_pos has ")


def test_bos_where_it_is_not_allowed(project, capsys):
    n = edit(
        project,
        'Vocab.chars_of("abcdefghijklmnopqrstuvwxyz")',
        'Vocab.chars_of("abcdefghijklmnopqrstuvwxyz", bos="^")',
        stem="03_uniform",
    )
    one_line(
        *circuits(capsys, "show", n, "ab^c"),
        "circuits: the BOS token '^' may only stand at position 0",
        "at position 2",
    )


# --- numerics through the command line ------------------------------------------------------------------------
def test_a_local_window_of_zero(project, capsys):
    n = edit(project, "Head(W_Q=answer.W_Q", "Head(window=0, W_Q=answer.W_Q")
    one_line(
        *circuits(capsys, "show", n, "abc"),
        "circuits: puzzles/81_consonants.py: a Head has window = 0; a local window must be a whole number ≥ 1",
    )


def test_the_largest_allowed_weights_give_finite_numbers(project, capsys):
    answer(project, block(W_Q="[[1e100, 1e100]]", W_K="[[-1e100, 1e100]]", W_V="[[1e100, 0], [0, -1e100]]"))
    code, out, err = circuits(capsys, "show", "1", "abcea", "--json")
    assert code == 0 and err == ""
    shown = json.loads(out, parse_constant=lambda c: pytest.fail(f"{c} in the output"))
    assert np.isfinite(np.array(shown["patterns"])).all() and np.isfinite(np.array(shown["output"])).all()


# --- numerics of the model itself ------------------------------------------------------------------------------
def test_scores_beyond_float64_are_a_clear_error_not_nan():
    # q = [1e200, 1e200] and k = [1e200, −1e200]: q·k is inf − inf
    model = Model(
        Vocab.chars_of("ab"),
        [[1e100, 1e100], [0, 0]],
        layers=[[Head(W_Q=[[1e100, 0], [1e100, 0]], W_K=[[1e100, 0], [-1e100, 0]], W_V=np.eye(2))]],
    )
    with pytest.raises(
        CircuitError, match=r"^the attention scores of head 0\.0 overflowed to (nan|inf): the weights are too large"
    ):
        model.run("ab")


def test_logits_beyond_float64_are_a_clear_error_not_nan():
    big = np.eye(2) * 1e100
    model = Model(Vocab.chars_of("ab"), big, layers=[[Head(W_Q=[[1, 0]], W_K=[[1, 0]], W_V=big, W_O=big)]], W_U=big)
    with pytest.raises(CircuitError, match=r"^the logits overflowed to inf/NaN: the weights are too large"):
        model.run("abab")


def test_all_masked_rows_are_zero_not_nan():
    scores = np.array([[[3.0, np.inf], [np.nan, -np.inf]]])
    visible = np.array([[[False, False], [True, False]]])
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        _, pattern, z = F.attention(np.ones((1, 2, 1)), np.ones((1, 2, 1)), np.ones((1, 2, 3)), visible)
        p = F.softmax(scores, visible)
    assert pattern[0, 0].tolist() == [0, 0] and z[0, 0].tolist() == [0, 0, 0]
    assert p.tolist() == [[[0, 0], [1, 0]]]


@pytest.mark.parametrize(
    "pattern, message",
    [
        (
            lambda T: np.full((T, T), np.nan),
            r"the fixed pattern of head 0\.0 has nan at \[0, 0\] for T=2; attention weights must be finite and ≥ 0",
        ),
        (lambda T: -np.eye(T), r"the fixed pattern of head 0\.0 has -1\.0 at \[0, 0\]"),
        (lambda T: 1 / 0, r"the fixed pattern of head 0\.0 raised ZeroDivisionError for T=2: division by zero"),
    ],
    ids=["NaN", "negative", "raises"],
)
def test_a_fixed_pattern_function_is_checked(pattern, message):
    with pytest.raises(CircuitError, match=message):
        Model(Vocab.chars_of("ab"), np.eye(2), layers=[[Head(W_V=np.eye(2), W_O=np.eye(2), pattern=pattern)]])


def test_a_fixed_pattern_its_window_hides_is_refused():
    with pytest.raises(CircuitError, match=r"^a Head has pattern='first' with window = 3: the window hides position 0"):
        Model(Vocab.chars_of("ab"), np.eye(2), layers=[[Head(W_V=np.eye(2), pattern="first", window=3)]])


@pytest.mark.parametrize(
    "kwargs, message",
    [
        (
            dict(layers=[Head(W_Q=[[1, 0]], W_K=[[1, 0]], W_V=np.eye(2))]),
            r"layer 0 is a Head; a layer is a Layer or a list of heads",
        ),
        (dict(n_ctx="8"), r"n_ctx = '8'; the context length must be a whole number ≥ 1"),
    ],
    ids=["a head where a layer goes", "n_ctx not a number"],
)
def test_model_arguments_of_the_wrong_kind(kwargs, message):
    with pytest.raises(CircuitError, match=message):
        Model(Vocab.chars_of("ab"), np.eye(2), **kwargs)


# --- weight files: `circuits scan --npz FILE` -----------------------------------------------------------------
@pytest.fixture
def saved(tmp_path):
    from circuits.io import export

    model = Model(
        Vocab.chars_of("ab"),
        np.eye(2),
        W_pos=np.zeros((2, 4)),
        W_U=np.eye(2),
        layers=[[Head(W_Q=[[1, 0]], W_K=[[0, 1]], W_V=np.eye(2), W_O=np.eye(2))]],
    )
    return export.save(model, tmp_path / "model.npz")


def with_config(saved, change) -> str:
    """A copy of the saved model whose JSON config `change` edits in place."""
    arrays = dict(np.load(saved))
    config = json.loads(bytes(arrays["__circuits_config__"]).decode())
    change(config)
    arrays["__circuits_config__"] = np.frombuffer(json.dumps(config).encode(), dtype=np.uint8)
    path = saved.with_name("edited.npz")
    np.savez(path, **arrays)
    return str(path)


def test_a_pickle_inside_an_npz_is_refused(saved, capsys):
    arrays = dict(np.load(saved))
    arrays["embed.W_E"] = np.array([{"not": "numbers"}], dtype=object)
    np.savez(saved, **arrays)  # numpy pickles object arrays
    one_line(
        *circuits(capsys, "scan", "--npz", str(saved)), "key 'embed.W_E' holds pickled objects; refusing to load it"
    )


def test_a_pickle_named_npz_is_refused(tmp_path, capsys):
    path = tmp_path / "model.npz"
    path.write_bytes(pickle.dumps({"embed.W_E": [[1.0]]}))
    one_line(*circuits(capsys, "scan", "--npz", str(path)), f"{path}: refusing to load pickled data")


def test_a_truncated_npz(saved, capsys):
    saved.write_bytes(saved.read_bytes()[:-200])
    one_line(*circuits(capsys, "scan", "--npz", str(saved)), f"{saved}: not a readable .npz file")


def test_a_truncated_safetensors(saved, capsys):
    pytest.importorskip("safetensors")
    from circuits.io import export

    path = export.save(export.load(saved), saved.with_suffix(".safetensors"))
    path.write_bytes(path.read_bytes()[:-10])
    one_line(*circuits(capsys, "scan", "--npz", str(path)), f"{path}: not a readable .safetensors file")


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda c: c.pop("vocab"), "the config has no 'vocab' entry"),
        (lambda c: c.update(vocab={"words": ["a", "b"]}), "the config has no 'tokens' entry where circuits needs one"),
        (
            lambda c: c["layers"][0]["heads"][0].pop("d_head"),
            "the config has no 'd_head' entry where circuits needs one",
        ),
        (lambda c: c.update(layers=3), "the config has an entry of the wrong kind"),
    ],
    ids=["top level", "inside vocab", "inside a head", "a number for a list"],
)
def test_a_json_config_with_the_wrong_keys(saved, capsys, change, message):
    path = with_config(saved, change)
    one_line(*circuits(capsys, "scan", "--npz", path), f"circuits scan: {path}: {message}")


def test_a_json_file_for_a_weight_file(tmp_path, capsys):
    path = tmp_path / "model.json"
    path.write_text('{"W_Q": [[1, 0]]}')
    one_line(*circuits(capsys, "scan", "--npz", str(path)), f"{path}: choose a file ending in .npz or .safetensors")


def test_a_zip_that_is_not_an_npz(tmp_path, capsys):
    path = tmp_path / "model.npz"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("notes.txt", "hello")
    one_line(*circuits(capsys, "scan", "--npz", str(path)), f"{path}: key '__circuits_config__' is missing")


# --- the same mistakes through `pytest puzzles/` ---------------------------------------------------------------
# Known defect, left to circuits/pytest_plugin.py + report.py: a target's error message goes through a rich
# console 100 columns wide, so a message longer than that is wrapped onto two lines. strict: remove once fixed.
PYTEST_CASES = {
    "wrong shape": MATRIX_CASES["wrong shape"],
    "NaN": MATRIX_CASES["NaN"],
    "a symbol left unbound": MATRIX_CASES["a symbol left unbound"],
    "an answer of the wrong type": MATRIX_CASES["an answer of the wrong type: a string"],
    "a syntax error": (block(W_Q="[[1, 1]"), "syntax error: '[' was never closed"),
    "raises on import": (block(W_K="[[0, 20 / 0]]"), "raised ZeroDivisionError on import at line"),
    "an answer left out": (block(W_V=None), "does not define W_V (the answer needs W_Q, W_K, W_V)"),
    "exit() on import": (block() + "exit()\n", "called exit() on import at line"),
}


@pytest.mark.parametrize("source, message", PYTEST_CASES.values(), ids=PYTEST_CASES.keys())
def test_pytest_reports_the_mistake_in_one_line_and_fails_rather_than_crashes(pytester, source, message):
    (pytester.path / "puzzles").mkdir()
    shutil.copy(ROOT / "solutions" / "01_consonants.py", pytester.path / "puzzles")
    answer(pytester.path, source)
    result = pytester.runpytest("puzzles/", "-p", "no:cacheprovider", "--no-margins")
    result.assert_outcomes(failed=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    assert any(line.startswith(PUZZLE) and message in line for line in result.stdout.lines), result.stdout.str()
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
