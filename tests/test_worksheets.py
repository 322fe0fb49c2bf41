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
# each chapter's first puzzle may walk through a construction; 22–25 and 27–29 are the challenges, 26 the capstone
OPENERS = {
    "00_attention",
    "01_consonants",
    "04_previous_token",
    "09_duplicate_token",
    "11_copying_head",
    "14_skip_trigram",
    "16_xor_mlp",
    "18_histogram",
    "21_ioi_mini",
}
CHALLENGES = {"22_recent_vowel", "23_look_back", "24_other_kind", "25_equal_mlp", "26_modular_addition"}
CHALLENGES |= {"27_split_copy", "28_same_predecessor", "29_smaller_by_value"}
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


@pytest.mark.parametrize("stem", sorted(CHALLENGES - {"26_modular_addition"}))
def test_a_challenge_worksheet_shows_behaviour_not_weights(stem):
    """The challenges state a behaviour only (26, the capstone, names W_U's rows of a wrong readout it refutes)."""
    assert leaks(stem) == [], f"{stem}'s worksheet gives its answer away"


def test_each_leak_is_caught(monkeypatch):
    """Every kind of leak, written into a worksheet, is found (a check that finds nothing would pass all)."""
    stem = "02_first_consonant"
    clean = docstring(stem)
    for leak in [
        "W_V = [[0, 1, 0], [0, 0, 0]]",  # an assignment line of the answer
        'one gets there with W_K[0, "first"] large',  # an entry by index
        "a value [[0, 1, 0], [0, 0, 0]] does it",  # a literal matrix equal to W_V
    ]:
        monkeypatch.setattr(__import__(__name__), "docstring", lambda s, leak=leak: clean + "\n" + leak + "\n")
        assert leaks(stem), leak
    stem = "10_seen_before"
    clean = docstring(stem)
    for leak in ["With s = 20, query 3 is sharp", "One answer scores a match 1 and BOS ½"]:
        monkeypatch.setattr(__import__(__name__), "docstring", lambda s, leak=leak: clean + "\n" + leak + "\n")
        assert leaks(stem), leak


# --- the worked examples are true: each table row is recomputed from the puzzle's own spec ------------------------
def namespace(stem: str) -> dict:
    return solution(stem).puzzle.build.__globals__


def row(*cells) -> str:
    return " ".join(" ".join(str(c) for c in cells).split())


def fmt(x) -> str:
    """A number as the worksheets write it: integers bare, a minus sign as −."""
    x = float(x)
    return (str(int(x)) if x == int(x) else f"{x:g}").replace("-", "−")


def rows_02():
    spec = namespace("02_first_consonant")["spec"]
    first = lambda w: "consonant" if w[0] not in "aeiou" else "vowel"  # noqa: E731
    out = []
    for word in ["cbcce", "eacia", "ccrs"]:
        (result,) = {tuple(r) for r in spec(list(word))}  # the same at every position
        out.append(row(word, f"{word[0]}, {first(word)}", f"[{result[0]:g}, {result[1]:g}]"))
    return out


def rows_03():
    from fractions import Fraction

    spec = namespace("03_uniform")["spec"]
    cells = [f"{t} → {Fraction(v).limit_denominator(100)}" for t, (v,) in zip("abcce", spec(list("abcce")))]
    return [row('Worked example, "abcce":', ", ".join(cells) + ".")]


def rows_05():
    ns = namespace("05_virtual_head")
    out = [row(t, *map(fmt, ns["EMBED"][t][:8])) for t in "ab"]
    return out + [
        row(f"position {i} '{t}'", *map(fmt, r)) for i, (t, r) in enumerate(zip("abc", ns["spec"](list("abc"))))
    ]


def rows_06():
    ns = namespace("06_induction_pointer")
    from circuits.targets import behaviours

    ids = np.array([["abcd".index(t) for t in "abcab"]])
    same, copies, after = ns["same_token"](ids)[0], ns["earlier_copies"](ids)[0], ns["after_the_copy"](ids)[0]
    own, prev = behaviours.current_token(ids)[0], behaviours.previous_token(ids)[0]
    pos = ns["copied_position"](list("abcab"))
    out = []
    for q, t in enumerate("abcab"):
        keys = lambda m: ", ".join(map(str, np.flatnonzero(m))) or "—"  # noqa: E731
        e = "—" if pos[q] is None else next(f"position {n}" for n, p in enumerate(ns["POSITIONS"]) if p == pos[q])
        out.append(
            row(
                f"{q} {t}",
                keys(same[q]),
                own[q],
                prev[q] if prev[q] >= 0 else "—",
                keys(copies[q]),
                e,
                after[q] if after[q] >= 0 else "—",
            )
        )
    out[3] = out[3].replace(
        "position 0", "position 0 = (" + ", ".join(f"{v:g}".replace("0.", ".") for v in ns["POSITIONS"][0]) + ")"
    )
    return out


def rows_07():
    ns = namespace("07_induction_k_composition")
    from circuits.targets import behaviours

    tokens = ["<bos>", *"abcab"]
    ids = np.array([[ns["vocab"].id(t) for t in tokens]])
    prev, after = behaviours.previous_token(ids)[0], ns["after_copies"](ids)[0]
    name = lambda k: "0 BOS" if k == 0 else f"{k} '{tokens[k]}'"  # noqa: E731
    out = []
    for q in range(1, len(tokens)):
        keys = np.flatnonzero(after[q])
        out.append(row(f"{q} '{tokens[q]}'", name(prev[q]), ", ".join(map(name, keys)) if len(keys) else "—"))
    return out


def rows_08():
    ns = namespace("08_induction_repeated")
    tokens = ["<bos>", *"abcabc"]
    nxt = [*tokens[1:], None]
    first, second, attends = ns["first_half"](tokens), ns["second_half"](tokens), ns["after_a_copy"](tokens)
    half = ["first" if f else "second" if s else "—" for f, s in zip(first, second)]
    name = lambda ks: "BOS" if ks == [-1] else ", ".join(f"{k} '{tokens[k]}'" for k in ks)  # noqa: E731
    return [
        row("next letter", *(n or "—" for n in nxt)),
        row("half", *half),
        row("head 1.0 attends", *map(name, attends)),
        row(
            "prediction",
            *(
                "flat" if h == "first" else n if h == "second" else tokens[ks[0]] if ks != [-1] else "—"
                for h, n, ks in zip(half, nxt, attends)
            ),
        ),
    ]


def rows_10():
    spec = namespace("10_seen_before")["seen_before"]
    out = []
    for word in ["abca", "aaaa", "abcdabcd"]:
        seen = spec(["<bos>", *word])[1:]
        out += [row(f'"{word}"', "position", *(f"{i} {t}" for i, t in enumerate(word, 1))), row("seen", *seen)]
    return out


def rows_12():
    ns = namespace("12_successor_head")
    return [row("digit", *"3790"), row("must predict", *ns["successors"](list("3790")), "(each")]


def rows_13():
    ns = namespace("13_copy_suppression")
    tokens = list("cab")
    pred = ns["suppressed"](tokens)
    said = lambda i: next((f"yes, at {j + 1}" for j in range(i) if tokens[j] == ns["NEXT"][tokens[i]]), "no")  # noqa: E731
    return [row(f"{i + 1} '{t}'", ns["NEXT"][t], said(i), *p) for i, (t, p) in enumerate(zip(tokens, pred))]


def rows_15():
    ns = namespace("15_q_composition")
    tokens = list("abcab")
    first, repeats = ns["first_token"](tokens), ns["repeats_of_the_first"](tokens)
    directions = ns["FIRST"]
    out = []
    for q, t in enumerate(tokens):
        (on,) = [d for d, v in zip(directions, first[q]) if v == 1]
        out.append(row(f"{q} '{t}'", f"{on} = 1", "key " + ", ".join(map(str, repeats[q]))))
    assert ns["repeats_of_the_first"](list("aaaa"))[3] == [1, 2, 3]
    return out + [row('and on "aaaa", query 3 spreads its attention over keys 1, 2 and 3 together, not key 0.')]


def rows_17():
    ns = namespace("17_kv_memory")
    labels = ns["resid"].labels
    out = []
    for sentence in ["Alan Lovelace Ada Lovelace", "Marie Curie Albert Einstein Alan Turing"]:
        names = sentence.split()
        writes = [next((lbl for lbl, v in zip(labels, r) if v), "nothing") for r in ns["spec"](names)]
        assert all(sum(r) <= 1 for r in ns["spec"](names))
        out += [row("position", *(f"{i} {n}" for i, n in enumerate(names))), row("writes", *writes)]
    return out


def rows_20():
    ns = namespace("20_find_min")
    target = ns["earliest_min"]
    digits = list("2130")
    out = [row(f"{i} '{d}'", min(digits[: i + 1]), k) for i, (d, k) in enumerate(zip(digits, target(digits)))]
    assert target(list("1010"))[3] == 1 and target(list("1222222222220"))[-1] == 12
    return out


def rows_19():
    from fractions import Fraction

    ns = namespace("19_balanced_parens")
    frac = lambda v: str(Fraction(v).limit_denominator(100)).replace("-", "−")  # noqa: E731
    return [
        row(i, b, *(frac(r[k]) for k in ("bal", "neg", "ever", "balanced")))
        for i, (b, r) in enumerate(zip("())(", ns["dyck"](list("())("))))
    ]


TABLES = {
    "19_balanced_parens": rows_19,
    "02_first_consonant": rows_02,
    "03_uniform": rows_03,
    "05_virtual_head": rows_05,
    "06_induction_pointer": rows_06,
    "07_induction_k_composition": rows_07,
    "08_induction_repeated": rows_08,
    "10_seen_before": rows_10,
    "12_successor_head": rows_12,
    "13_copy_suppression": rows_13,
    "15_q_composition": rows_15,
    "17_kv_memory": rows_17,
    "20_find_min": rows_20,
}


@pytest.mark.parametrize("stem", sorted(TABLES))
def test_the_worked_example_is_what_the_spec_says(stem):
    """Every row of the worked example's table, recomputed from the puzzle's spec, is in the worksheet."""
    lines = {row(line) for line in docstring(stem).splitlines()}
    expected = TABLES[stem]()
    missing = [r for r in expected if not any(line.startswith(r) for line in lines)]
    assert expected and not missing, f"{stem}: the worksheet's worked example differs from the spec: {missing}"


def test_a_wrong_worked_number_is_caught(monkeypatch):
    """A worksheet that says seen = 0 where the token was seen before fails the recomputation."""
    clean = docstring("10_seen_before")
    wrong = clean.replace("seen       0     0     0     1", "seen       0     0     0     0")
    assert wrong != clean
    monkeypatch.setattr(__import__(__name__), "docstring", lambda s: wrong)
    with pytest.raises(AssertionError, match="differs from the spec"):
        test_the_worked_example_is_what_the_spec_says("10_seen_before")
