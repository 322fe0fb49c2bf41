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
import dataclasses
import importlib
import types
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pytest
import sympy
from helpers import SOLUTIONS

from circuits import blank
from circuits.checking.checker import check
from circuits.checking.loader import load

s, γ = sympy.symbols("s γ")


@pytest.fixture(scope="module")
def reference():
    """The reference attempts, loaded once per module and shared: reference(stem) -> Attempt (never edit it)."""
    loaded: dict = {}

    def get(stem: str):
        if stem not in loaded:
            loaded[stem] = load(SOLUTIONS / f"{stem}.py")
        return loaded[stem]

    return get


def wrong(attempt, edit: Callable, examples=None):
    """A copy of `attempt` whose answer (a deep copy of the reference's) `edit(answer, givens)` has changed."""
    answer = types.SimpleNamespace(**{k: copy.deepcopy(v) for k, v in vars(attempt.answer).items()})
    edit(answer, attempt.puzzle.build.__globals__ if attempt.puzzle.build else {})
    trial = copy.copy(attempt)
    trial.answer = answer
    if examples is not None:  # the puzzle without its worked examples: general inputs alone must find the flaw
        trial.puzzle = dataclasses.replace(attempt.puzzle, examples=examples)
    return trial


def key_line(result) -> str:
    """What a learner reads first about the failure: the first failing target's label and its one-line finding."""
    bad = [t for t in result.targets if t.status in ("failed", "error")]
    assert bad, f"the wrong answer passed: {[(t.label, t.status) for t in result.targets]}"
    t = bad[0]
    if t.status == "error":
        return f"{t.label}: {t.message}"
    f = t.failure
    said = f.explanation.summary if f.explanation is not None else f.text.splitlines()[0]
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
            a.W_Q.values[:, a.W_Q.cols.index(c)] = [x / 2 if x != 0 else 0 for x in a.W_Q.values[:, a.W_Q.cols.index(c)]]


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


def _baked_histogram(a, g):  # 18: numbers with s = 20 baked in, s parked on the BOS query
    a.W_Q = [[20 * sympy.sympify(x).subs(s, 1) for x in row] for row in a.W_Q]
    a.W_Q[0][4] = s
    a.params = {"s": 1}


def _positional_s_inhibition(a, g):  # 21: from position i to position i − 2, whatever stands there
    Q, K = blank(g["N_CTX"], g["resid"]), blank(g["N_CTX"], g["resid"])
    for i in range(2, g["N_CTX"]):
        Q[i, f"pos:{i}"], K[i, f"pos:{i - 2}"] = s, 1
    a.W_Q1, a.W_K1 = Q, K


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
    Case("00_attention", "softmax without subtracting the max", answer(attention=_attention_with(_naive)),
         "has NaN at"),
    Case("00_attention", "the max taken before masking", answer(attention=_attention_with(_max_before_mask)),
         "A differs at [0, 0, 0]: yours 0, expected 1"),
    Case("00_attention", "masked scores filled with −1e5", answer(attention=_attention_with(_finite_fill)),
         "A differs at [0, 0, 0]: yours 1, expected 0"),
    Case("00_attention", "one max for the whole batch", answer(attention=_attention_with(_one_max)),
         "A differs at"),
    # 01 consonants (also test_wrong_answers: the seed's sharpness, swapped values, attending to vowels)
    Case("01_consonants", "no preference: uniform attention", answer(W_K=[[0, 0]]), "expected"),
    Case("01_consonants", "the value drops the vowel coordinate", answer(W_V=[[0, 0], [0, 1]]), "expected"),
    Case("01_consonants", "only vowel queries look for consonants", answer(W_Q=[[1, 0]]), "expected"),
    # 02 first consonant (also: the seed's sharpness, the vowel row)
    Case("02_first_consonant", "puzzle 01's head: any consonant, not the first letter", answer(W_K=[[0, 20, 0]]),
         "expected"),
    Case("02_first_consonant", "the value writes the vowel flag", answer(W_V=[[1, 0, 0], [0, 0, 0]]), "expected"),
    Case("02_first_consonant", "only vowel queries read `first`", answer(W_Q=[[1, 0, 0]]), "expected"),
    # 03 uniform (also: a key preferring vowels, counting consonants)
    Case("03_uniform", "counting letters, not vowels", answer(W_V=[[1, 1]]), "expected"),
    Case("03_uniform", "vowels minus consonants", answer(W_V=[[1, -1]]), "expected"),
    Case("03_uniform", "a key preferring consonants", answer(W_Q=[[1, 1]], W_K=[[0, 1]]), "expected"),
    # 04 previous token (also: too small s, the rotation turned the wrong way, the scale baked in)
    Case("04_previous_token", "the previous-token query left unrotated", _unrotated, "head 0.1"),
    Case("04_previous_token", "only the first pair rotated", _fast_pair_only, "head 0.1"),
    # 05 virtual head (also: the wrong dimension, writing into head 2's dimensions, the wrong value)
    Case("05_virtual_head", "head 2 reads dimension 0 itself, not what head 1 wrote", _reads_the_token_not_head_1,
         "differs"),
    Case("05_virtual_head", "head 1 writes into 12–15, where head 2 writes", _head_1_writes_where_head_2_does,
         "differs"),
    # 08 induction on a repeated sequence (also test_wrong_induction, five cases)
    Case("08_induction_repeated", "a correct answer that also bets on 'a' at BOS",
         cells("W_U", (("a", "bos"), 2 * γ)), "above the band"),
    # 09 duplicate token (also test_wrong_curriculum_a: content alone, no BOS sink)
    Case("09_duplicate_token", "BOS scored like a match: a new token splits", bos_like_a_match("W_Q", 4, "tok:"),
         "the target is key 0"),
    Case("09_duplicate_token", "'not myself' half as strong: itself ties with BOS", _half_self_penalty,
         "the target is key 0"),
    Case("09_duplicate_token", "too small a sharpness", answer(params={"s": 2}), "puts only"),
    Case("09_duplicate_token", "the scale baked in, s parked on the BOS query", baked("W_Q", (0, "bos")),
         "sharpness", xfail="live sharpness symbol"),
    # 10 seen before (also: keys on content, a value reading bos)
    Case("10_seen_before", "BOS scored like a match", bos_like_a_match("W_Q", 4, "tok:"), "seen"),
    Case("10_seen_before", "writes 2 into seen", cells("W_O", (("seen", 0), 2)), "seen"),
    Case("10_seen_before", "too small a sharpness", answer(params={"s": 2}), "seen"),
    Case("10_seen_before", "the correct answer writing into every direction", answer(W_O=np.ones((10, 1))),
         "writes", xfail="declared writes"),
    # 11 copying head (also: the neighbour's corner, too small γ)
    Case("11_copying_head", "a negative γ suppresses instead of copying", answer(params={"γ": -10}), "copying score"),
    Case("11_copying_head", "angles doubled: token k written at corner 2k", _doubled_angles, "copying score"),
    Case("11_copying_head", "x and y swapped in W_O: a reflection", _xy_swapped, "copying score"),
    # 12 successor head (also: a copying head, the predecessor)
    Case("12_successor_head", "rotated by 2θ: the successor's successor", _twice_the_turn, "log-prob"),
    Case("12_successor_head", "too small a γ", answer(params={"γ": 3}), "log-prob"),
    Case("12_successor_head", "both value rows read mod:x", _one_coordinate, "log-prob"),
    # 13 copy suppression (also: a positive head, a query on content)
    Case("13_copy_suppression", "BOS scored like a match", bos_like_a_match("W_Q", 5, "pred:"), "pred"),
    Case("13_copy_suppression", "suppresses the next token, not the attended one", _suppress_the_next, "pred"),
    Case("13_copy_suppression", "too small a sharpness", answer(params={"s": 2}), "pred"),
    Case("13_copy_suppression", "the correct answer also writing into tok:a", cells("W_O", (("tok:a", 0), -1)),
         "writes", xfail="declared writes"),
    # 14 skip-trigram (also: one head for both, no BOS fallback)
    Case("14_skip_trigram", "head 2 writes into out:mind, not out:bay", _mind_for_bay, "out"),
    Case("14_skip_trigram", "BOS scored like a match", bos_like_a_match("W_Q1", 1, "tok:"), "head"),
    Case("14_skip_trigram", "too small a sharpness", answer(params={"s": 2, "γ": 10}), "head"),
    # 15 Q-composition (also: query on the current token, no start term, head 0 writing wrong)
    Case("15_q_composition", "too small a sharpness", answer(params={"s": 2}), "head 1.0"),
    Case("15_q_composition", "a start term twice too strong", _strong_start, "head 1.0"),
    # 16 XOR (also: one adding unit, no threshold, writing into x)
    Case("16_xor_mlp", "unit 0 − unit 1: OR, not XOR", answer(W_out=[[0, 0], [0, 0], [0, 0], [1, -1]]), "xor"),
    Case("16_xor_mlp", "no bias on unit 1", answer(W_in=[[1, 1, 0, 0], [1, 1, 0, 0]]), "xor"),
    # 17 key-value memory (also: no threshold, threshold 2, one unit per city)
    Case("17_kv_memory", "keys on the current token only", _current_token_keys, "city"),
    Case("17_kv_memory", "two facts' cities swapped", _cities_swapped, "city"),
    # 18 histogram (also: no BOS, BOS twice as high, too little sharpness)
    Case("18_histogram", "the value counts tokens, not BOS", answer(W_V=[[1, 1, 1, 1, 0]]), "expected"),
    Case("18_histogram", "the scale baked in, s parked on the BOS query", _baked_histogram, "sharpness",
         xfail="live sharpness symbol"),
    # 19 balanced parentheses (also: a shallow step, forgetting negatives, counting opens only)
    Case("19_balanced_parens", "one unit for neg: relu(−20·bal) is not clipped at 1",
         answer(W_out0=[[0, 0], [0, 0], [0, 0], [0, 0], [1, 0], [0, 0], [0, 0]]), "neg"),
    Case("19_balanced_parens", "head 1.0 averages bal instead of neg", answer(W_V1=[[0, 0, 0, 1, 0, 0, 0]]), "ever"),
    # 20 find the minimum (also: no position term, too strong a one, the latest copy, too little sharpness)
    Case("20_find_min", "a position term that outweighs a value step from length 13",
         answer(W_Q=[[0, s, 0]], W_K=[[-1, 0, -1.4]], params={"s": 200}), "the target is key 12", examples=[]),
    # 21 IOI (also: a dup head finding itself, no S-inhibition, inhibiting the wrong way, the template whole)
    Case("21_ioi_mini", "a positional S-inhibition head: two back from 'to'", _positional_s_inhibition, "head 1.0",
         examples=[]),
    Case("21_ioi_mini", "a duplicate-token head fitted to the template's positions", _template_duplicate_token,
         "head 0.0", examples=[]),
]
