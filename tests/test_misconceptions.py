"""The misconception catalogue: for every puzzle, wrong answers a learner plausibly writes, each rejected.

Each case starts from the reference solution's answer (loaded once per module), changes what the
misconception changes (a wrong algorithm, a positional shortcut, a fit to the template, a tie left to
luck, a sharpness too small, a write where the head has no business), checks it through the checker
and asserts the key line of the report: what the learner reads first about the failure.

Wrong answers the older catalogue files already reject are not repeated here: REUSED names them, and
`test_every_puzzle_has_five_misconceptions` counts both. Cases that need a framework guarantee the
checker does not have yet are marked xfail(strict=True), so they flip (and must be unmarked) when it lands.
"""

from __future__ import annotations

import copy
import importlib
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pytest
import sympy
from helpers import SOLUTIONS, summary_of, wrong

from circuits import blank, explain
from circuits.display import words
from circuits.explain import check

s, γ = sympy.symbols("s γ")


def key_line(result) -> str:
    """What a learner reads first about the failure: the first failing target's label and its one-line finding."""
    bad = [t for t in result.targets if t.status in ("failed", "error")]
    assert bad, f"the wrong answer passed: {[(t.label, t.status) for t in result.targets]}"
    t = bad[0]
    if t.status == "error":
        return f"{t.label}: {words.said(t)}"
    f = t.failure
    said = summary_of(f.explanation) if f.explanation is not None else explain.words(f.finding).splitlines()[0]
    return f"{t.label}: {said}"


# ── edits used by several puzzles ───────────────────────────────────────────────────────
def answer(**names):
    """An edit that sets answer names to values."""

    def edit(a, g):
        for name, value in names.items():
            setattr(a, name, value)

    return edit


def cells(name: str, *entries):
    """An edit of one labelled matrix: cells("W_Q", ((row, col), value), …)."""

    def edit(a, g):
        W = getattr(a, name)
        for (r, c), v in entries:
            W[r, c] = v

    return edit


def both(*edits):
    def edit(a, g):
        for e in edits:
            e(a, g)

    return edit


def baked(name: str, park: tuple):
    """Numbers with the scale baked in (s → its value) and `s` parked on a dead entry, params s = 1."""

    def edit(a, g):
        W, value = getattr(a, name), a.params["s"]
        for r in range(W.values.shape[0]):
            for c in range(W.values.shape[1]):
                W.values[r, c] = sympy.sympify(W.values[r, c]).subs(s, value)
        W[park] = s
        a.params = {**a.params, "s": 1}

    return edit


def bos_like_a_match(name: str, row: int, columns: str):
    """The default row (a query on every token against the BOS key) at s, not s/2: BOS ties with a match."""

    def edit(a, g):
        W = getattr(a, name)
        for c in W.cols.labels:
            if c.startswith(columns) and W[row, c] != 0:
                W[row, c] = s

    return edit


# ── 00: softmax implementations that go wrong only at large scores ──────────────────────
def _attention_with(softmax):
    def attention(Q, K, V, mask=None):
        A = softmax(Q @ np.swapaxes(K, -1, -2) / np.sqrt(Q.shape[-1]), mask)
        return A, A @ V

    return attention


def _naive(x, mask):  # exp without subtracting the max: overflows past 709
    with np.errstate(over="ignore", invalid="ignore"):
        e = np.exp(x) * (1 if mask is None else mask)
        t = e.sum(-1, keepdims=True)
        return e / np.where(t > 0, t, 1)


def _max_before_mask(x, mask):  # the max over every key, masked ones too: the visible keys underflow
    e = np.exp(x - x.max(-1, keepdims=True)) * (1 if mask is None else mask)
    t = e.sum(-1, keepdims=True)
    return e / np.where(t > 0, t, 1)


def _finite_fill(x, mask):  # masked scores set to −1e5, not −inf: fine until a visible score is lower
    if mask is not None:
        x = np.where(mask, x, -1e5)
    e = np.exp(x - x.max(-1, keepdims=True))
    A = e / e.sum(-1, keepdims=True)
    return A if mask is None else np.where(mask.any(-1, keepdims=True), A, 0.0)


def _one_max(x, mask):  # one max for the whole batch, not one per row: other rows underflow to 0 / 0
    if mask is not None:
        x = np.where(mask, x, -np.inf)
    finite = x[np.isfinite(x)]
    e = np.exp(x - (finite.max() if finite.size else 0.0))
    t = e.sum(-1, keepdims=True)
    return e / np.where(t > 0, t, 1)


# ── puzzle-specific edits ────────────────────────────────────────────────────────────────
def _unrotated(a, g):  # 04: the previous-token query equal to the self query: it attends to itself
    a.W_Q_prev = copy.deepcopy(a.W_Q_self)


def _fast_pair_only(a, g):  # 04: the second pair left unrotated
    W = a.W_Q_prev
    W[2, "cos:1"], W[2, "sin:1"], W[3, "cos:1"], W[3, "sin:1"] = s, 0, 0, s


def _reads_the_token_not_head_1(a, g):  # 05: head 2 reads dimension 0 itself, not dimension 8
    a.W_V2 = a.W_V2.copy()
    a.W_V2[3, 8], a.W_V2[3, 0] = 0, 1


def _head_1_writes_where_head_2_does(a, g):  # 05
    a.W_O1 = np.roll(a.W_O1, 4, axis=0)


def _half_self_penalty(a, g):  # 09: 'not myself' at −s/2: a new token's own key ties with BOS
    for c in a.W_Q.cols.labels:
        if c.startswith("pos:"):
            j = a.W_Q.cols.index(c)
            a.W_Q.values[:, j] = [x / 2 for x in a.W_Q.values[:, j]]


def _doubled_angles(a, g):  # 11: token k written at the corner of 2k
    for k, t in enumerate(g["TOKENS"]):
        a.W_V[0, f"tok:{t}"], a.W_V[1, f"tok:{t}"] = sympy.cos(2 * k * g["THETA"]), sympy.sin(2 * k * g["THETA"])


def _xy_swapped(a, g):  # 11: a reflection, not the identity
    a.W_O["out:x", 0], a.W_O["out:x", 1], a.W_O["out:y", 0], a.W_O["out:y", 1] = 0, γ, γ, 0


def _twice_the_turn(a, g):  # 12: rotated by 2θ
    t = 2 * g["THETA"]
    a.W_O["out:x", 0], a.W_O["out:x", 1] = γ * sympy.cos(t), -γ * sympy.sin(t)
    a.W_O["out:y", 0], a.W_O["out:y", 1] = γ * sympy.sin(t), γ * sympy.cos(t)


def _one_coordinate(a, g):  # 12: both value rows read mod:x
    a.W_V[1, "mod:y"], a.W_V[1, "mod:x"] = 0, 1


def _suppress_the_next(a, g):  # 13: suppresses the token after the attended one
    tokens = g["TOKENS"]
    for k, t in enumerate(tokens):
        a.W_O[f"pred:{t}", k] = 0
    for k, t in enumerate(tokens):
        a.W_O[f"pred:{tokens[(k + 1) % len(tokens)]}", k] = -1


def _mind_for_bay(a, g):  # 14: head 2 raises the other trigram's word
    a.W_O2["out:bay", 0], a.W_O2["out:mind", 0] = 0, γ


def _strong_start(a, g):  # 15: the start term at −1, twice the reference's −1/2
    a.W_K1[4, "start"] = -1


def _current_token_keys(a, g):  # 17: a unit fires on the last name alone
    for k in range(a.W_in.shape[0]):
        for c in a.W_in.cols.labels:
            if c.startswith("prev:") or c == "one":
                a.W_in[k, c] = 0


def _cities_swapped(a, g):  # 17: two facts with different cities exchange them
    facts = list(g["FACTS"].items())
    i, j = next((i, j) for i in range(len(facts)) for j in range(i) if facts[i][1] != facts[j][1])
    for k, other in ((i, j), (j, i)):
        a.W_out[f"city:{facts[k][1]}", k], a.W_out[f"city:{facts[other][1]}", k] = 0, 1


def _bos_at_half(a, g):  # 18: BOS must score like a match here, so the split is even
    a.W_Q = [row[:] for row in a.W_Q]
    a.W_Q[4] = [x / 2 for x in a.W_Q[4]]


def _baked_histogram(a, g):  # 18: numbers with s = 20 baked in, s parked on the BOS query
    a.W_Q = [[20 * sympy.sympify(x).subs(s, 1) for x in row] for row in a.W_Q]
    a.W_Q[0][4] = s
    a.params = {"s": 1}


def _positional_s_inhibition(a, g):  # 21: from position i to position i − 2, whatever stands there
    Q, K = blank(g["N_CTX"], g["resid"]), blank(g["N_CTX"], g["resid"])
    for i in range(2, g["N_CTX"]):
        Q[i, f"pos:{i}"], K[i, f"pos:{i - 2}"] = s, 1
    a.W_Q1, a.W_K1 = Q, K


def _one_back_always(a, g):  # 23: puzzle 04's previous-token head on one-hot positions: the digit never read
    Q, K = blank(g["N_CTX"], g["resid"]), blank(g["N_CTX"], g["resid"])
    for i in range(1, g["N_CTX"]):
        Q[i, f"pos:{i}"], K[i, f"pos:{i - 1}"] = s, 1
    a.W_Q, a.W_K = Q, K


def _no_tilt(a, g):  # 23: a bump around the query's own position that the digit never moves: every pointer a 0
    for d in g["DIGITS"]:
        a.W_Q[0, f"tok:{d}"] = 0


def _template_duplicate_token(a, g):  # 21: a name at 4+ matching a name at 1 or 3, else BOS
    Q, K = blank(6, g["resid"]), blank(6, g["resid"])
    for k, n in enumerate(g["NAMES"]):
        Q[k, f"tok:{n}"], K[k, f"tok:{n}"] = s, 1
    for q in range(4, g["N_CTX"]):
        Q[4, f"pos:{q}"] = s
    K[4, "pos:1"] = K[4, "pos:3"] = 1
    for t in g["NAMES"] + g["FILLERS"]:
        Q[5, f"tok:{t}"] = 3 * s / 2
    K[5, "bos"] = 1
    a.W_Q0, a.W_K0 = Q, K


def _digit_row(**entries):  # 29: a row over value, one, bos, free:0 … free:4 (free_k= names free:k)
    return [entries.get(c.replace(":", "_"), 0) for c in ["value", "one", "bos"] + [f"free:{k}" for k in range(5)]]


def _puzzle_20s_head(a, g):  # 29: no MLP; a score that grows as the key falls below the query, s·(x − y − ½)
    a.W_in, a.W_out = [_digit_row()], [[0]] * 8
    a.W_Q = [_digit_row(value=s, one=-s / 2), _digit_row(one=s)]
    a.W_K = [_digit_row(one=1), _digit_row(value=-1)]


def _ramps_as_one_hot(a, g):  # 29: relu(x − k + 1) written into free:k, as if it were 1 at digit k alone
    a.W_in = [_digit_row(value=1, one=1 - k) for k in range(5)]
    a.W_out = [[0] * 5] * 3 + [[int(j == k) for j in range(5)] for k in range(5)]


def _steps_as_one_hot(a, g):  # 29: relu(x − k + 1) − relu(x − k) = [x ≥ k] into free:k, read as [x = k]
    a.W_in = [_digit_row(value=1, one=1 - k) for k in range(6)]
    a.W_out = [[0] * 6] * 3 + [[int(j == k) - int(j == k + 1) for j in range(6)] for k in range(5)]


# ── reads the mechanism does not use (declared reads, checking/guarantees.py) ─────────────
def _latest_name(a, g):  # 21: S-inhibition by recency: names, and a ramp over positions; never dup
    a.W_K1[0, "dup"] = 0
    for n in g["NAMES"]:
        a.W_K1[0, f"tok:{n}"] = 1
    for i in range(g["N_CTX"]):
        a.W_K1[0, f"pos:{i}"] = i / 10
    a.params = {**a.params, "s": 40}


def _also_current_token(a, g):  # 13: the query reads the token beside the prediction
    for t in g["TOKENS"]:
        a.W_Q[0, f"tok:{t}"] = s / 4


def _mover_by_position(a, g):  # 21: the name mover also prefers the first name's position
    a.W_K2[0, "pos:1"] = 0.5


def _split_copy(values: dict, outs: list[dict]):
    """27: an answer from each token's value (one number per value dimension) and what each value dimension writes
    into out:* (direction → weight, times γ)."""

    def edit(a, g):
        a.W_V, a.W_O = g["blank"](len(outs), g["resid"]), g["blank"](g["resid"], len(outs))
        for t, value in values.items():
            for k, v in enumerate(value):
                a.W_V[k, f"tok:{t}"] = v
        for k, out in enumerate(outs):
            for direction, v in out.items():
                a.W_O[direction, k] = γ * v

    return edit


PENTAGON = {t: [sympy.cos(2 * k * sympy.pi / 5), sympy.sin(2 * k * sympy.pi / 5)] for k, t in enumerate("abcde")}


def _one_hot_abcd(e) -> dict:  # 27: a … d one-hot in the four value dimensions, e's value `e` in each
    return {t: [int(t == u) for u in "abcd"] for t in "abcd"} | {"e": [e] * 4}


def _copy_reads_bos(a, g):  # 15: head 0.0's value also reads start
    a.W_V0[0, "start"] = 0.01


@dataclass
class Case:
    stem: str
    name: str
    edit: Callable
    expect: str  # a part of the key line
    xfail: str = ""  # the framework guarantee the case waits for
    examples: list | None = field(default=None)  # [] : the worked examples removed


CASES = [
    # 00 attention by hand (also test_wrong_answers: upper-triangular mask, NaN rows, missing √D)
    Case(
        "00_attention",
        "softmax without subtracting the max",
        answer(attention=_attention_with(_naive)),
        "A has NaN at [0, 0, 0] — this row's scores reach ±1.768e+05, where exp overflows (past 709)",
    ),
    Case(
        "00_attention",
        "the max taken before masking",
        answer(attention=_attention_with(_max_before_mask)),
        "A differs at [0, 0, 0]: yours 0, expected 1",
    ),
    Case(
        "00_attention",
        "masked scores filled with −1e5",
        answer(attention=_attention_with(_finite_fill)),
        "A differs at [0, 0, 0]: yours ",
    ),
    Case("00_attention", "one max for the whole batch", answer(attention=_attention_with(_one_max)), "A differs at"),
    # 01 consonants (also test_wrong_answers: the seed's sharpness, swapped values, attending to vowels)
    Case(
        "01_consonants",
        "no preference: uniform attention",
        answer(W_K=[[0, 0]]),
        "at position 1 'b' the expected head 0.0 z (A·V) is [0, 1], yours is [0.5, 0.5]",
    ),
    Case(
        "01_consonants",
        "the value drops the vowel coordinate",
        answer(W_V=[[0, 0], [0, 1]]),
        "at position 0 'a' the expected head 0.0 z (A·V) is [1, 0], yours is [0, 0]",
    ),
    Case(
        "01_consonants",
        "only vowel queries look for consonants",
        answer(W_Q=[[1, 0]]),
        "at position 1 'b' the expected head 0.0 z (A·V) is [0, 1], yours is [0.5, 0.5]",
    ),
    # 02 first consonant (also: the seed's sharpness, the vowel row)
    Case(
        "02_first_consonant",
        "puzzle 01's head: any consonant, not the first letter",
        answer(W_K=[[0, 20, 0]]),
        "at position 1 'b' the expected head 0.0 z (A·V) is [0, 0], yours is [1, 0]",
    ),
    Case(
        "02_first_consonant",
        "the value writes the vowel flag",
        answer(W_V=[[1, 0, 0], [0, 0, 0]]),
        "at position 0 'a' the expected head 0.0 z (A·V) is [0, 0], yours is [1, 0]",
    ),
    Case(
        "02_first_consonant",
        "only vowel queries read `first`",
        answer(W_Q=[[1, 0, 0]]),
        "at position 1 'b' the expected head 0.0 z (A·V) is [0, 0], yours is [0.5, 0]",
    ),
    # 03 uniform (also: a key preferring vowels, counting consonants)
    Case(
        "03_uniform",
        "counting letters, not vowels",
        answer(W_V=[[1, 1]]),
        "the expected head 0.0 z (A·V) is [0], yours is [1]",
    ),
    Case(
        "03_uniform",
        "vowels minus consonants",
        answer(W_V=[[1, -1]]),
        "the expected head 0.0 z (A·V) is [0], yours is [-1]",
    ),
    Case(
        "03_uniform",
        "a key preferring consonants",
        answer(W_Q=[[1, 1]], W_K=[[0, 1]]),
        "at position 1 'b' the expected head 0.0 z (A·V) is [0.5], yours is [0.269]",
    ),
    # 04 previous token (also: too small s, the rotation turned the wrong way, the scale baked in)
    Case(
        "04_previous_token",
        "the previous-token query left unrotated",
        _unrotated,
        "the target is key 0 'a', but head 0.1 puts only 0.000 there",
    ),
    Case("04_previous_token", "only the first pair rotated", _fast_pair_only, "but head 0.1 puts only 0.000 there"),
    # 05 virtual head (also: the wrong dimension, writing into head 2's dimensions, the wrong value)
    Case(
        "05_virtual_head",
        "head 2 reads dimension 0 itself, not what head 1 wrote",
        _reads_the_token_not_head_1,
        "yours is [-3, -3, 2, 0, -2, -3, 3, -3]",
    ),
    Case(
        "05_virtual_head",
        "head 1 writes into 12–15, where head 2 writes",
        _head_1_writes_where_head_2_does,
        "at position 0 'a' the expected residual 8, 9, 10, 11, 12, 13, 14, 15 is",
    ),
    # 08 induction on a repeated sequence (also test_wrong_induction, five cases)
    Case(
        "08_induction_repeated",
        "a correct answer that also bets on 'a' at BOS",
        cells("W_U", (("a", "bos"), 2 * γ)),
        "mean log-prob -1.648 over 2 predicted positions (above the band",
    ),
    # 09 duplicate token (also test_wrong_curriculum_a: content alone, no BOS sink)
    Case(
        "09_duplicate_token",
        "BOS scored like a match: a new token splits",
        bos_like_a_match("W_Q", 4, "tok:"),
        "at query 2 'a' the target is key 1 'a', but head 0.0 puts only 0.500 there",
    ),
    Case(
        "09_duplicate_token",
        "'not myself' half as strong: itself ties with BOS",
        _half_self_penalty,
        "at query 1 'a' the target is key 0 '<bos>', but head 0.0 puts only 0.500 there",
    ),
    Case("09_duplicate_token", "too small a sharpness", answer(params={"s": 2}), "head 0.0 puts only 0.731 there"),
    Case(
        "09_duplicate_token",
        "the scale baked in, s parked on the BOS query",
        baked("W_Q", (0, "bos")),
        "with s at 0, so s does not control the attention the targets depend on",
    ),
    # 10 seen before (also: keys on content, a value reading bos)
    Case(
        "10_seen_before",
        "BOS scored like a match",
        bos_like_a_match("W_Q", 4, "tok:"),
        "at position 2 'a' the expected residual seen is [1], yours is [0.5]",
    ),
    Case(
        "10_seen_before",
        "writes 2 into seen",
        cells("W_O", (("seen", 0), 2)),
        "the expected residual seen is [1], yours is [2]",
    ),
    Case(
        "10_seen_before",
        "too small a sharpness",
        answer(params={"s": 2}),
        "at position 1 'a' the expected residual seen is [0], yours is [0.269]",
    ),
    Case(
        "10_seen_before",
        "the correct answer writing into every direction",
        answer(W_O=np.ones((10, 1))),
        "head 1.0 writes into tok:a (1), tok:b (1), tok:c (1) and 6 more, but this puzzle lets it write only into seen",
    ),
    # 11 copying head (also: the neighbour's corner, too small γ)
    Case(
        "11_copying_head",
        "a negative γ suppresses instead of copying",
        answer(params={"γ": -10}),
        "copying score Σλ/Σ|λ| of W_U W_OV W_E is -1.000 (needs ≥ 0.9)",
    ),
    Case(
        "11_copying_head",
        "angles doubled: token k written at corner 2k",
        _doubled_angles,
        "copying score Σλ/Σ|λ| of W_U W_OV W_E is 0.000 (needs ≥ 0.9)",
    ),
    Case(
        "11_copying_head", "x and y swapped in W_O: a reflection", _xy_swapped, "of W_U W_OV W_E is 0.000 (needs ≥ 0.9)"
    ),
    # 12 successor head (also: a copying head, the predecessor)
    Case(
        "12_successor_head",
        "rotated by 2θ: the successor's successor",
        _twice_the_turn,
        "(wrong: 0 → 2, 1 → 3, 2 → 4, 3 → 5 …)",
    ),
    Case(
        "12_successor_head",
        "too small a γ",
        answer(params={"γ": 3}),
        "after position 0 '0' the expected next token has log-prob -0.888 < -0.1",
    ),
    Case("12_successor_head", "both value rows read mod:x", _one_coordinate, "(wrong: 0 → 2, 2 → 2, 3 → 7, 4 → 7 …)"),
    # 13 copy suppression (also: a positive head, a query on content)
    Case(
        "13_copy_suppression",
        "BOS scored like a match",
        bos_like_a_match("W_Q", 5, "pred:"),
        "at position 2 'b' the expected residual pred:a, pred:b, pred:c, pred:d, pred:e is [0, 0, 0, 0, 0], "
        "yours is [0, 0, 0.5, 0, 0]",
    ),
    Case(
        "13_copy_suppression",
        "suppresses the next token, not the attended one",
        _suppress_the_next,
        "is [0, 0, 0, 0, 0], yours is [0, 0, 1, -1, 0]",
    ),
    Case(
        "13_copy_suppression",
        "too small a sharpness",
        answer(params={"s": 2}),
        "is [0, 1, 0, 0, 0], yours is [-0.269, 1, 0, 0, 0]",
    ),
    Case(
        "13_copy_suppression",
        "the correct answer also writing into tok:a",
        cells("W_O", (("tok:a", 0), -1)),
        "head 0.0 writes into tok:a (1), but this puzzle lets it write only into pred:*",
    ),
    # 14 skip-trigram (also: one head for both, no BOS fallback)
    Case(
        "14_skip_trigram",
        "head 2 writes into out:mind, not out:bay",
        _mind_for_bay,
        "after position 2 'at' the expected next token has log-prob -10.000 < -0.1",
    ),
    Case(
        "14_skip_trigram",
        "BOS scored like a match",
        bos_like_a_match("W_Q1", 1, "tok:"),
        "at query 2 'in' the target is key 1 'keep', but head 0.0 puts only 0.500 there",
    ),
    Case(
        "14_skip_trigram",
        "too small a sharpness",
        answer(params={"s": 2, "γ": 10}),
        "at query 1 'keep' the target is key 0 '<bos>', but head 0.0 puts only 0.731 there",
    ),
    # 15 Q-composition (also: query on the current token, no start term, head 0 writing wrong)
    Case(
        "15_q_composition",
        "too small a sharpness",
        answer(params={"s": 2}),
        "at query 1 'a' the target is key 1 'a', but head 1.0 puts only 0.731 there",
    ),
    Case(
        "15_q_composition",
        "a start term twice too strong",
        _strong_start,
        "at query 1 'b' the target is key 0 'a', but head 1.0 puts only 0.500 there",
    ),
    # 16 XOR (also: one adding unit, no threshold, writing into x)
    Case(
        "16_xor_mlp",
        "unit 0 − unit 1: OR, not XOR",
        answer(W_out=[[0, 0], [0, 0], [0, 0], [1, -1]]),
        "at position 0 'd' the expected output of the MLP of layer 0 is 0, yours is xor 1",
    ),
    Case(
        "16_xor_mlp",
        "no bias on unit 1",
        answer(W_in=[[1, 1, 0, 0], [1, 1, 0, 0]]),
        "at position 0 'b' the expected output of the MLP of layer 0 is xor 1, yours is xor -1",
    ),
    # 17 key-value memory (also: no threshold, threshold 2, one unit per city)
    Case(
        "17_kv_memory",
        "keys on the current token only",
        _current_token_keys,
        "at position 0 'Lovelace' the expected output of the MLP of layer 0 is 0, yours is city:London 1",
    ),
    Case(
        "17_kv_memory",
        "two facts' cities swapped",
        _cities_swapped,
        "the expected output of the MLP of layer 0 is city:London 1, yours is city:Warsaw 1",
    ),
    # 18 histogram (also: no BOS, BOS twice as high, too little sharpness)
    Case(
        "18_histogram",
        "the value counts tokens, not BOS",
        answer(W_V=[[1, 1, 1, 1, 0]]),
        "at position 2 'a' the expected head 0.0 z (A·V) is [0.333], yours is [0.667]",
    ),
    Case(
        "18_histogram",
        "BOS at half a match, the habit of puzzle 09",
        _bos_at_half,
        "at query 1 'a' the targets are keys 0, 1, each needing ≥ 0.495 (an even share of 0.99), "
        "but head 0.0 puts only 0.000 on key 0",
    ),
    Case(
        "18_histogram",
        "the scale baked in, s parked on the BOS query",
        _baked_histogram,
        "with s at 0, so s does not control the attention the targets depend on",
    ),
    # 19 balanced parentheses (also: a shallow step, forgetting negatives, counting opens only)
    Case(
        "19_balanced_parens",
        "one unit for neg: relu(−20·bal) is not clipped at 1",
        answer(W_out0=[[0, 0], [0, 0], [0, 0], [0, 0], [1, 0], [0, 0], [0, 0]]),
        "at position 0 ')' the expected output of the MLP of layer 0 is neg 1, yours is neg 20",
    ),
    Case(
        "19_balanced_parens",
        "head 1.0 averages bal instead of neg",
        answer(W_V1=[[0, 0, 0, 1, 0, 0, 0]]),
        "head 1.0 writes ever",
    ),
    # 20 find the minimum (also: no position term, too strong a one, the latest copy, too little sharpness)
    Case(
        "20_find_min",
        "a position term that outweighs a value step from length 13",
        answer(W_Q=[[0, s, 0]], W_K=[[-1, 0, -1.4]], params={"s": 200}),
        "at query 12 '0' the target is key 12 '0', but head 0.0 puts only 0.000 there",
        examples=[],
    ),
    # 23 look back (also in test_invention: the tilt the wrong way, a pointer as a number, a parabola without its ½)
    Case(
        "23_look_back",
        "a previous-token head: one back, whatever the digit (a positional shortcut)",
        _one_back_always,
        "at query 1 '0' the target is key 1 '0', but head 0.0 puts only 0.000 there",
    ),
    Case(
        "23_look_back",
        "a bump around the query's own position, never moved by the digit",
        _no_tilt,
        "at query 1 '1' the target is key 0 '0', but head 0.0 puts only 0.007 there",
    ),
    # 21 IOI (also: a dup head finding itself, no S-inhibition, inhibiting the wrong way, the template whole)
    Case(
        "21_ioi_mini",
        "a positional S-inhibition head: two back from 'to'",
        _positional_s_inhibition,
        "at query 7 'to' the target is key 4 'Ann', but head 1.0 puts only 0.000 there",
        examples=[],
    ),
    Case(
        "21_ioi_mini",
        "a duplicate-token head fitted to the template's positions",
        _template_duplicate_token,
        "at query 2 'Ann' the target is key 1 'Ann', but head 0.0 puts only 0.000 there",
        examples=[],
    ),
    # 29 the smaller digits before, digits as numbers (also test_invention: ≤, no BOS score, a write into value,
    # a dead or too small sharpness)
    Case(
        "29_smaller_by_value",
        "puzzle 20's head on the value, the MLP left empty (a shortcut)",
        _puzzle_20s_head,
        "at query 2 '1' the targets are keys 0, 1, each needing ≥ 0.495 (an even share of 0.99), but head 1.0 "
        "puts only 0.000 on key 0 '<bos>'",
    ),
    Case(
        "29_smaller_by_value",
        "one ramp relu(x − k + 1) per digit, read as a one-hot code",
        _ramps_as_one_hot,
        "at query 1 '1' the target is key 0 '<bos>', but head 1.0 puts only 0.000 there (needs ≥ 0.99); its largest "
        "weight, 1.000, is on key 1 '1'",
    ),
    Case(
        "29_smaller_by_value",
        "one step [x ≥ k] per digit, read as a one-hot code",
        _steps_as_one_hot,
        "at query 1 '1' the target is key 0 '<bos>', but head 1.0 puts only 0.500 there (needs ≥ 0.99)",
    ),
    # reads outside what the mechanism uses: each passes every target, and is refused for what it reads
    # (21's two and 13's: the mechanism targets fail them first, by intervention; test_reads.py shows the reads)
    Case(
        "21_ioi_mini",
        "S-inhibition by the latest name, never reading dup",
        _latest_name,
        "head 1.0's attention does not depend on dup: with head 0.0's write into dup taken from",
    ),
    Case(
        "21_ioi_mini",
        "a name mover that also likes position 1",
        _mover_by_position,
        "head 2.0's attention does not depend on s:*: with head 1.0's write into s:* zeroed, it still puts 1.00",
    ),
    Case(
        "13_copy_suppression",
        "a query that also reads the current token",
        _also_current_token,
        "head 0.0's attention does not depend on pred:*: with the embedding's write into pred:* zeroed, it still",
    ),
    Case(
        "07_induction_k_composition",
        "keys that also read bos",
        cells("W_K2", ((0, "bos"), 0.1)),
        "W_K2 reads bos (W_K2[0, bos] = 0.1), but this puzzle lets it read only prev:*",
    ),
    Case(
        "07_induction_k_composition",
        "keys that also read a position",
        cells("W_K2", ((1, "cos:0"), 0.05)),
        "W_K2 reads cos:0 (W_K2[1, cos:0] = 0.05)",
    ),
    Case("15_q_composition", "a query that also reads start", cells("W_Q1", ((4, "start"), s / 4)), "W_Q1 reads start"),
    Case(
        "15_q_composition",
        "head 0.0's value also reads start",
        _copy_reads_bos,
        "W_V0 reads start (W_V0[0, start] = 0.01), but this puzzle lets it read only tok:*",
    ),
    Case(
        "08_induction_repeated",
        "a bigram bias in W_U",
        cells("W_U", (("b", "prev:a"), 0.5)),
        "W_U reads prev:a (W_U[b, prev:a] = 0.5), but this puzzle lets it read only out:*",
    ),
    Case(
        "06_induction_pointer",
        "(b) also reading a smaller pair",
        cells("W_Q_b", ((0, "cos:2"), s / 100)),
        "W_Q_b reads cos:2",
    ),
    # 27 split copy (also test_invention: too strong or too weak an e, a negative copy, γ too small, baked, leak)
    Case(
        "27_split_copy",
        "puzzle 11's pentagon in two of the four dimensions: a and c average to b",
        _split_copy(PENTAGON, [{f"out:{t}": c[d] for t, c in PENTAGON.items()} for d in range(2)]),
        "the one at i − 1 has log-prob ≥ −0.8: after position 2 'a' the expected next token has log-prob -2.708",
    ),
    Case(
        "27_split_copy",
        "one-hot for a … d, nothing left for e",
        _split_copy(_one_hot_abcd(0), [{f"out:{t}": 1} for t in "abcd"]),
        "the token each attended token raises most through head 0.0's W_U W_OV W_E (wrong: e → (tie))",
    ),
    Case(
        "27_split_copy",
        "a shortcut: one value dimension per token, five in all",
        _split_copy({t: [int(t == u) for u in "abcde"] for t in "abcde"}, [{f"out:{t}": 1} for t in "abcde"]),
        "W_V of head 0.0 has shape (5, 10): a value of 5 dimensions, at most 4 allowed",
    ),
    Case(
        "27_split_copy",
        "e lowers the other four by three times what each raises itself",
        _split_copy(_one_hot_abcd(-3), [{f"out:{t}": 1} for t in "abcd"]),
        "after position 2 'a' the expected next token has log-prob -12.000 < -0.8",
    ),
]


# the wrong answers the older catalogue files already reject, counted towards each puzzle's five
REUSED = {
    "00_attention": [
        "test_wrong_answers::test_00_an_upper_triangular_mask_is_caught",
        "test_wrong_answers::test_00_nan_on_fully_masked_rows_is_caught",
        "test_wrong_answers::test_00_a_missing_scale_is_caught",
    ],
    "01_consonants": [
        "test_wrong_answers::test_01_the_seed_answer_fails_on_a_long_vowel_run_ending_in_a_consonant",
        "test_wrong_answers::test_01_swapped_values_point_at_W_V",
        "test_wrong_answers::test_01_attending_to_vowels_points_at_W_Q_W_K",
    ],
    "02_first_consonant": [
        "test_wrong_answers::test_02_the_seed_answer_fails_once_the_string_is_long",
        "test_wrong_answers::test_02_reading_the_vowel_row_points_at_W_V",
    ],
    "03_uniform": [
        "test_wrong_answers::test_03_a_key_that_prefers_vowels_is_not_uniform",
        "test_wrong_answers::test_03_counting_consonants_points_at_W_V",
    ],
    "04_previous_token": [
        "test_wrong_answers::test_04_too_small_a_sharpness_fails_and_says_sharpen",
        "test_wrong_answers::test_04_the_wrong_rotation_direction_attends_elsewhere",
        "test_wrong_answers::test_04_numbers_with_the_scale_baked_in_must_declare_the_sharpness_symbol",
    ],
    "05_virtual_head": [
        "test_wrong_answers::test_05_reading_the_wrong_dimension_breaks_the_two_token_copy",
        "test_wrong_answers::test_05_writing_into_head_2s_dimensions_fails",
        "test_wrong_hints::test_05_a_head_that_writes_the_wrong_value_is_told_so",
    ],
    "06_induction_pointer": [
        "test_wrong_induction::test_06_previous_position_rotated_the_wrong_way_looks_two_back",
        "test_wrong_induction::test_06_induction_query_rotated_backwards_misses_the_next_position",
        "test_wrong_induction::test_06_a_missing_minus_on_beta_attends_to_itself",
        "test_wrong_induction::test_06_too_small_a_sharpness_says_sharpen",
        "test_wrong_induction::test_06_copying_sin_into_the_cos_slot_points_at_W_V",
        "test_wrong_induction::test_06_a_self_position_head_is_not_a_same_content_head",
        "test_wrong_hints::test_06_beta_too_large_blames_the_position_weight_and_later_parts_point_back",
    ],
    "07_induction_k_composition": [
        "test_wrong_induction::test_07_previous_token_head_rotated_the_wrong_way",
        "test_wrong_induction::test_07_keys_reading_the_current_token_make_a_duplicate_head_not_an_induction_head",
        "test_wrong_induction::test_07_writing_the_previous_token_where_head_2_does_not_read_fails_the_induction_target",
        "test_wrong_induction::test_07_too_small_a_sharpness_says_sharpen",
        "test_wrong_hints::test_07_keys_reading_what_nothing_writes_say_so_through_the_cli",
    ],
    "08_induction_repeated": [
        "test_wrong_induction::test_08_without_a_default_on_bos_the_first_half_is_not_flat",
        "test_wrong_induction::test_08_too_small_a_logit_scale_fails_the_second_half_and_points_at_W_U",
        "test_wrong_induction::test_08_unembedding_the_current_letter_instead_of_the_copied_one",
        "test_wrong_induction::test_08_too_small_an_attention_sharpness_fails_the_second_half",
        "test_wrong_induction::test_08_a_bos_key_scored_like_a_match_fails_whatever_the_logit_scale",
    ],
    "09_duplicate_token": [
        "test_wrong_curriculum_a::test_09_content_alone_ties_the_query_with_its_copy",
        "test_wrong_curriculum_a::test_09_no_bos_sink_leaves_a_new_token_on_itself",
    ],
    "10_seen_before": [
        "test_wrong_curriculum_a::test_10_keys_on_content_see_the_query_itself",
        "test_wrong_curriculum_a::test_10_a_value_that_reads_bos_writes_the_opposite",
    ],
    "11_copying_head": [
        "test_wrong_curriculum_a::test_11_writing_each_token_at_its_neighbours_corner_is_not_copying",
        "test_wrong_curriculum_a::test_11_too_small_a_gamma_copies_but_not_surely",
    ],
    "12_successor_head": [
        "test_wrong_curriculum_a::test_12_a_copying_head_is_not_a_successor_head",
        "test_wrong_curriculum_a::test_12_turning_the_wrong_way_gives_the_predecessor",
    ],
    "13_copy_suppression": [
        "test_wrong_curriculum_a::test_13_a_positive_head_copies_instead_of_suppressing",
        "test_wrong_curriculum_a::test_13_a_query_on_content_suppresses_the_current_token",
    ],
    "14_skip_trigram": [
        "test_wrong_curriculum_a::test_14_one_head_for_both_trigrams_has_the_bug",
        "test_wrong_curriculum_a::test_14_a_head_without_a_bos_fallback_leaks_into_the_other_trigram",
    ],
    "15_q_composition": [
        "test_wrong_curriculum_a::test_15_a_query_on_the_current_token_is_a_duplicate_token_head",
        "test_wrong_curriculum_a::test_15_without_the_start_term_position_0_ties_with_a_repeat",
        "test_wrong_curriculum_a::test_15_head_0_writing_the_wrong_directions_is_reported_at_head_0",
    ],
    "16_xor_mlp": [
        "test_wrong_curriculum_b::test_16_one_unit_that_adds_the_features_fails_at_d",
        "test_wrong_curriculum_b::test_16_units_without_a_threshold_fail_where_one_feature_is_on",
        "test_wrong_curriculum_b::test_16_writing_into_x_is_caught",
    ],
    "17_kv_memory": [
        "test_wrong_curriculum_b::test_17_keys_without_a_threshold_fire_on_half_a_name",
        "test_wrong_curriculum_b::test_17_a_threshold_of_two_forgets_every_fact",
        "test_wrong_curriculum_b::test_17_one_unit_per_city_mixes_up_the_london_names",
    ],
    "18_histogram": [
        "test_wrong_curriculum_b::test_18_without_bos_the_head_sees_only_the_copies",
        "test_wrong_curriculum_b::test_18_bos_scored_twice_as_high_takes_the_attention",
        "test_wrong_curriculum_b::test_18_too_little_sharpness_leaks_onto_other_tokens",
    ],
    "19_balanced_parens": [
        "test_wrong_curriculum_b::test_19_a_shallow_step_misses_a_small_negative_balance",
        "test_wrong_curriculum_b::test_19_forgetting_that_the_balance_went_negative_is_caught_in_the_last_stage",
        "test_wrong_curriculum_b::test_19_counting_only_the_opens_fails_first_and_later_stages_say_so",
    ],
    "20_find_min": [
        "test_wrong_curriculum_b::test_20_without_the_position_term_copies_of_the_minimum_tie",
        "test_wrong_curriculum_b::test_20_a_position_term_that_outweighs_the_value_keeps_an_earlier_larger_digit",
        "test_wrong_curriculum_b::test_20_favouring_the_latest_copy_is_caught",
        "test_wrong_curriculum_b::test_20_too_little_sharpness_fails_on_a_long_tie",
    ],
    "21_ioi_mini": [
        "test_wrong_curriculum_b::test_21_a_duplicate_token_head_that_finds_itself_fails_and_later_heads_say_so",
        "test_wrong_curriculum_b::test_21_a_name_mover_without_s_inhibition_splits_over_the_names",
        "test_wrong_curriculum_b::test_21_inhibiting_the_wrong_way_round_picks_the_subject",
    ],
    # the challenges and the capstone: their misconceptions are in tests/test_invention.py
    "22_recent_vowel": [
        "test_invention::test_22_content_alone_splits_between_the_vowels",
        "test_invention::test_22_recency_alone_attends_to_the_latest_letter",
        "test_invention::test_22_a_vowel_bonus_below_the_position_spread_loses_to_a_late_consonant",
        "test_invention::test_22_the_earliest_vowel_is_the_wrong_one",
        "test_invention::test_22_a_sharpness_baked_into_the_numbers_is_refused",
        "test_invention::test_22_a_sharpness_symbol_parked_on_a_dead_entry_is_refused",
        "test_invention::test_22_too_little_sharpness_fails_on_a_close_earlier_vowel",
    ],
    "23_look_back": [
        "test_invention::test_23_a_tilt_the_wrong_way_looks_forward_and_the_mask_leaves_the_query_itself",
        "test_invention::test_23_a_pointer_as_a_number_is_a_product_not_a_match",
        "test_invention::test_23_a_parabola_without_its_half_has_its_top_half_way_back",
        "test_invention::test_23_too_little_sharpness_says_by_how_much",
        "test_invention::test_23_a_sharpness_symbol_parked_on_a_dead_entry_is_refused",
    ],
    "24_other_kind": [
        "test_invention::test_24_matching_the_same_kind_is_puzzle_09s_head_not_this_one",
        "test_invention::test_24_without_a_score_for_bos_a_lone_kind_spreads_over_itself",
        "test_invention::test_24_bos_above_the_other_kind_takes_the_attention",
        "test_invention::test_24_a_vowel_query_that_asks_for_nothing_settles_on_bos",
        "test_invention::test_24_a_sharpness_symbol_parked_on_a_dead_entry_is_refused",
        "test_invention::test_24_too_little_sharpness_leaks_to_bos_and_the_same_kind",
    ],
    "25_equal_mlp": [
        "test_invention::test_25_one_threshold_finds_a_corner_but_not_the_middle",
        "test_invention::test_25_falling_with_the_distance_without_stopping_goes_negative",
        "test_invention::test_25_a_bump_on_one_side_only_misses_y_above_x",
        "test_invention::test_25_a_sum_that_adds_x_and_y_is_the_wrong_algorithm",
        "test_invention::test_25_an_mlp_that_writes_into_one_is_refused",
    ],
    "26_modular_addition": [
        "test_invention::test_26_no_additive_readout_can_add_summed_over_all_pairs",
        "test_invention::test_26_adding_a_and_bs_features_predicts_a_or_b_not_their_sum",
        "test_invention::test_26_reading_only_b_is_a_positional_shortcut",
        "test_invention::test_26_the_cos_identity_alone_cannot_tell_c_from_minus_c",
        "test_invention::test_26_the_wrong_sign_in_the_identity_computes_a_minus_b",
        "test_invention::test_26_a_readout_scale_baked_into_the_numbers_is_refused",
        "test_invention::test_26_a_sharpness_that_moves_every_logit_alike_is_dead",
        "test_invention::test_26_an_mlp_that_writes_outside_sum_is_refused",
        "test_invention::test_26_too_little_sharpness_leaves_the_answer_below_the_bar",
    ],
    "29_smaller_by_value": [
        "test_invention::test_29_smaller_or_equal_counts_the_digit_itself",
        "test_invention::test_29_without_a_score_for_bos_a_zero_spreads_over_everything",
        "test_invention::test_29_an_mlp_that_writes_into_value_is_refused",
        "test_invention::test_29_a_sharpness_symbol_parked_on_a_dead_entry_is_refused",
        "test_invention::test_29_too_little_sharpness_leaks_onto_the_digit_itself",
    ],
    "27_split_copy": [
        "test_invention::test_27_an_e_that_lowers_the_others_too_little_loses_every_pair_it_is_in",
        "test_invention::test_27_a_negative_copy_suppresses_what_it_attends_to",
        "test_invention::test_27_too_little_sharpness_ties_the_two_but_not_surely",
        "test_invention::test_27_a_sharpness_baked_into_the_numbers_is_refused",
        "test_invention::test_27_a_head_that_writes_back_into_the_embedding_is_refused",
    ],
    "28_same_predecessor": [
        "test_invention::test_28_without_self_exclusion_every_query_finds_itself",
        "test_invention::test_28_an_induction_head_asks_for_the_query_itself_not_its_predecessor",
        "test_invention::test_28_a_key_on_content_finds_the_earlier_copy_not_what_followed_it",
        "test_invention::test_28_bos_above_a_match_takes_the_attention",
        "test_invention::test_28_without_a_score_for_bos_a_query_with_no_match_spreads_out",
        "test_invention::test_28_self_exclusion_that_stops_short_fails_late_in_the_context",
        "test_invention::test_28_a_layer_0_that_writes_nothing_leaves_no_predecessor_to_match",
        "test_invention::test_28_a_layer_0_that_writes_outside_prev_is_refused",
        "test_invention::test_28_a_sharpness_symbol_parked_on_a_dead_entry_is_refused",
        "test_invention::test_28_too_little_sharpness_leaks_from_bos",
    ],
}
STEMS = sorted(p.stem for p in SOLUTIONS.glob("[0-9][0-9]_*.py"))


def _param(case: Case):
    marks = [pytest.mark.xfail(strict=True, reason=f"framework guarantee: {case.xfail}")] if case.xfail else []
    return pytest.param(case, id=f"{case.stem[:2]}-{case.name}", marks=marks)


@pytest.mark.parametrize("case", [_param(c) for c in CASES])
def test_the_misconception_is_rejected_with_its_report(reference, case):
    result = check(wrong(reference(case.stem), case.edit, case.examples), n_random=2000, margins=False)
    assert result.status in ("failing", "error"), [(t.label, t.status, words.said(t)) for t in result.targets]
    line = key_line(result)
    assert case.expect in line, f"{case.expect!r} is not in the report's key line:\n{line}"


@pytest.mark.parametrize("stem", STEMS)
def test_every_puzzle_has_five_misconceptions(stem):
    """Counted without the xfail cases: those are not rejected yet."""
    here = [c.name for c in CASES if c.stem == stem and not c.xfail]
    reused = REUSED.get(stem, [])
    for name in reused:
        module, test = name.split("::")
        assert hasattr(importlib.import_module(module), test), f"{name} no longer exists: update REUSED"
    assert len(here) + len(reused) >= 5, f"{stem}: {len(here)} here + {len(reused)} reused < 5"


def test_the_harness_changes_nothing_by_itself(reference):
    """The edits are what fail, not the copying: an unedited copy of a reference passes, worked examples removed."""
    result = check(wrong(reference("21_ioi_mini"), lambda a, g: None, examples=[]), n_random=2000, margins=False)
    assert result.status == "solved", [(t.label, t.status, words.said(t)) for t in result.targets]
