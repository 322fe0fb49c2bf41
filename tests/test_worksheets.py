"""Worked examples show behaviour, not weights (issue 28).

Beyond each chapter's first puzzle (which may walk through a construction), a worksheet states
the task, its givens and constraints, and examples of the behaviour; it never spells out the
reference answer: no assignment line of the answer, no `W_Q[…]` entry of an answer matrix, no
literal matrix equal to one, no binding of the answer's params ("s = 20"), no "one answer scores …".
"""

import ast
import re

import numpy as np
import pytest
from helpers import SOLUTIONS, solution

ANSWER_LINE = "# ── your answer"
STUB_LINE = "# ── stub"
# each chapter's first puzzle may walk through a construction; 22–26 are the challenges and the capstone
OPENERS = {"00_attention", "01_consonants", "04_previous_token", "09_duplicate_token", "11_copying_head",
           "14_skip_trigram", "16_xor_mlp", "18_histogram", "21_ioi_mini"}
CHALLENGES = {"22_recent_vowel", "23_two_back", "24_other_kind", "25_equal_mlp", "26_modular_addition"}
STEMS = sorted(p.stem for p in SOLUTIONS.glob("[0-9][0-9]_*.py"))
LATER = [s for s in STEMS if s not in OPENERS | CHALLENGES]


def docstring(stem: str) -> str:
    return ast.get_docstring(ast.parse((SOLUTIONS / f"{stem}.py").read_text(encoding="utf-8")), clean=False) or ""


def answer_lines(stem: str) -> list[str]:
    """The reference answer's assignment lines (code only, comments cut), as the issue's test reads them."""
    text = (SOLUTIONS / f"{stem}.py").read_text(encoding="utf-8")
    answer = text.split(ANSWER_LINE, 1)[1].split("\n", 1)[1].split(STUB_LINE, 1)[0]
    lines = [line.split("  #")[0].strip() for line in answer.splitlines()]
    return [line for line in lines if len(line) >= 8 and "=" in line and not line.startswith("#")]


def squeeze(text: str) -> str:
    return re.sub(r"\s+", "", text)


def numeric(value, params: dict):
    """An answer matrix as floats, its symbols bound to the answer's params (None if it is not a matrix)."""
    try:
        cells = np.asarray(value, dtype=object)
        subs = {k: v for k, v in params.items()}
        out = np.vectorize(lambda c: float(c.subs(subs) if hasattr(c, "subs") else c), otypes=[float])(cells)
        return out if out.ndim == 2 else None
    except (TypeError, ValueError, AttributeError):
        return None


def literal_matrices(text: str) -> list[np.ndarray]:
    """Every nested-list literal [[…], …] in the text that reads as a numeric matrix."""
    found = []
    for match in re.finditer(r"\[\s*\[[^\[\]]*\](?:\s*,\s*\[[^\[\]]*\])*\s*\]", text):
        try:
            found.append(np.asarray(ast.literal_eval(match.group(0)), dtype=float))
        except (ValueError, SyntaxError, TypeError):
            pass
    return found


def leaks(stem: str) -> list[str]:
    """What the worksheet of `stem` gives away of its reference answer."""
    doc, attempt = docstring(stem), solution(stem)
    names, params = attempt.puzzle.answer, dict(getattr(attempt.answer, "params", None) or {})
    found = [f"assignment line {line!r}" for line in answer_lines(stem) if squeeze(line) in squeeze(doc)]
    for name in names:
        for line in doc.splitlines():
            if re.search(rf"\b{re.escape(name)}\s*\[\s*[-\w\"']", line):
                found.append(f"an entry of {name}: {line.strip()!r}")
    sympy_names = {str(k): v for k, v in params.items()}
    for name in names:
        matrix = numeric(getattr(attempt.answer, name, None), params)
        for literal in literal_matrices(doc) if matrix is not None else []:
            if literal.shape == matrix.shape and np.allclose(literal, matrix):
                found.append(f"{name} as a literal matrix")
    for symbol, value in sympy_names.items():
        if re.search(rf"(?<![\w.]){re.escape(symbol)}\s*=\s*{re.escape(str(value))}(?![\w.])", doc):
            found.append(f"the answer's {symbol} = {value}")
    for line in doc.splitlines():
        if re.search(r"\b(one|an|the reference('s)?)\s+answer\s+(scores|writes|reads|puts)\b", line, re.IGNORECASE):
            found.append(f"an answer's weights in prose: {line.strip()!r}")
    return found


def test_the_chapter_list_names_shipped_puzzles():
    """A renamed opener would silently put its worksheet under the rule (or take a later one out)."""
    assert OPENERS | CHALLENGES <= set(STEMS)
    assert len(LATER) >= 13


@pytest.mark.parametrize("stem", LATER)
def test_a_later_worksheet_shows_behaviour_not_weights(stem):
    assert leaks(stem) == [], f"{stem}'s worksheet gives its answer away"


def test_each_leak_is_caught(monkeypatch):
    """Every kind of leak, written into a worksheet, is found (a check that finds nothing would pass all)."""
    stem = "02_first_consonant"
    clean = docstring(stem)
    for leak in ["W_V = [[0, 1, 0], [0, 0, 0]]",            # an assignment line of the answer
                 "one gets there with W_K[0, \"first\"] large",  # an entry by index
                 "a value [[0, 1, 0], [0, 0, 0]] does it",      # a literal matrix equal to W_V
                 ]:
        monkeypatch.setattr(__import__(__name__), "docstring", lambda s, leak=leak: clean + "\n" + leak + "\n")
        assert leaks(stem), leak
    stem = "10_seen_before"
    clean = docstring(stem)
    for leak in ["With s = 20, query 3 is sharp", "One answer scores a match 1 and BOS ½"]:
        monkeypatch.setattr(__import__(__name__), "docstring", lambda s, leak=leak: clean + "\n" + leak + "\n")
        assert leaks(stem), leak
