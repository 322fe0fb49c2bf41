"""Puzzle 29 · Challenge: how many smaller digits came before?

Challenge for the chapter on RASP / tracr algorithms (puzzles 18–20). Puzzle 18 counted the
keys a selector picks when it picks by `==`, and puzzle 20 ranked its keys to find the
smallest. tracr's `make_sort` needs a third kind: it counts, for each token, how many tokens
are smaller (RASP's SelectorWidth of Select(tokens, tokens, <)), since that count is where
the token goes in the sorted order. Here, causally: the smaller digits *before* each one.
The worksheet gives the behaviour, the givens and the constraints; the mechanism is yours.

Digits 0 … 4 after a BOS token, one direction each (d_model = 6):

              <bos>  0  1  2  3  4
    tok:0       0    1  0  0  0  0
    tok:1       0    0  1  0  0  0
    tok:2       0    0  0  1  0  0
    tok:3       0    0  0  0  1  0
    tok:4       0    0  0  0  0  1
    bos         1    0  0  0  0  0

Write one head, W_Q and W_K (d_head × 6, d_head of your choice), raw dot-product scores with
a causal mask, so that every digit splits its attention evenly over BOS and every earlier
digit *smaller* than itself: each of those n + 1 keys gets ≥ 0.99 / (n + 1). Its values are
given (W_V reads bos), so its result is then 1 / (n + 1), as tracr's SelectorWidth makes it,
and it must be within 0.001 of that. For strings of 1 to 16 digits after BOS: checked on
every string of 1 to 6 digits and on random strings of up to 16. Multiply W_Q by a sharpness
symbol `s`, bound in `params`.

The behaviour, for "20313" read as 0 BOS, 1 '2', 2 '0', 3 '3', 4 '1', 5 '3':

    query    keys it attends to, evenly       n    result
    1 '2'    0 BOS                            0    1
    2 '0'    0 BOS                            0    1
    3 '3'    0 BOS, 1 '2', 2 '0'              2    1/3
    4 '1'    0 BOS, 2 '0'                     1    1/2
    5 '3'    0 BOS, 1 '2', 2 '0', 4 '1'       3    1/4

Smaller means strictly smaller: the '3' at 5 does not count the '3' at 3, nor itself. Nothing
is asked at BOS itself.
"""

import numpy as np
import sympy

from circuits import Attention, Basis, blank, Head, HeadZ, Inputs, Model, Output, Puzzle, Runs, Uniform, Vocab
from circuits import FILL_ME_IN  # noqa: F401  (marks an unanswered puzzle)

# ── givens ───────────────────────────────────────────────────────────────────────────────
DIGITS = "01234"
vocab = Vocab.chars_of(DIGITS, bos="<bos>")
resid = Basis([f"tok:{d}" for d in DIGITS] + ["bos"])  # d_model = 6
W_E = blank(resid, vocab.tokens)  # [6, 6]
W_E["bos", "<bos>"] = 1
for d in DIGITS:
    W_E[f"tok:{d}", d] = 1
W_V = blank(1, resid)  # [1, 6], given: the result is the share of attention on BOS
W_V[0, "bos"] = 1
s = sympy.Symbol("s")  # the sharpness


def smaller_before(digits: list[str]) -> list[int]:
    """n at each digit, in plain Python: how many earlier digits are smaller than it."""
    return [sum(e < d for e in digits[:i]) for i, d in enumerate(digits)]


def spec(digits: list[str]) -> list[list[float]]:
    """The target result, in plain Python: 1 / (n + 1)."""
    return [[1 / (n + 1)] for n in smaller_before(digits)]


def picked(ids):  # token ids [b, T] (BOS at 0) -> [b, query, key]: BOS and every earlier digit smaller than the query's
    value = np.array([DIGITS.find(t) for t in vocab.tokens])[ids]  # [b, T]: each digit's value, −1 for BOS
    letter = value >= 0
    smaller = (value[:, None, :] < value[:, :, None]) & letter[:, None, :]
    bos = np.arange(ids.shape[1]) == 0
    return (smaller | bos) & letter[:, :, None] & np.tri(ids.shape[1], dtype=bool)


def build(answer) -> Model:
    return Model(vocab, W_E, layers=[[Head(W_Q=answer.W_Q, W_K=answer.W_K, W_V=W_V)]], name="smaller_before",
                 params=answer.params)


puzzle = Puzzle(
    number=29,
    name="smaller_before",
    title="Challenge: how many smaller digits came before?",
    answer=["W_Q", "W_K"],
    build=build,
    targets=[Attention(0, 0, picked, evenly=True, min_mass=0.99,
                       description="head 0.0 splits its attention evenly over BOS and the earlier smaller digits "
                                   "(each ≥ 0.99/(n + 1))"),
             Output(HeadZ(0, 0), spec, tol=1e-3,
                    description="head 0.0's result is 1/(n + 1), n = the earlier digits smaller than this one "
                                "(±0.001)")],
    inputs=Inputs(list(DIGITS), min_len=1, max_len=16,
                  families=[Uniform(), Runs({"0": "0", "1": "1", "2": "2", "3": "3", "4": "4"})]),
    examples=["20313", "0000", "43210", "01234", "4444444444444440"],
    sharpness=["s"],
    reads={},  # the mechanism is yours: each matrix may read any direction
    source="RASP (Weiss et al. 2021), SelectorWidth of a < selector; tracr (Lindner et al. 2023), make_sort",
)

# ── your answer ──────────────────────────────────────────────────────────────────────────
# One row per key digit y: a query x reads it (with s) when y < x, so W_Qᵀ W_K is s on the
# strict lower triangle of the digits' table; the last row gives every digit's query s on BOS.
#         tok:0 tok:1 tok:2 tok:3 tok:4 bos
W_Q = [[   0,    s,    s,    s,    s,   0],
       [   0,    0,    s,    s,    s,   0],
       [   0,    0,    0,    s,    s,   0],
       [   0,    0,    0,    0,    s,   0],
       [   s,    s,    s,    s,    s,   0]]
W_K = [[   1,    0,    0,    0,    0,   0],
       [   0,    1,    0,    0,    0,   0],
       [   0,    0,    1,    0,    0,   0],
       [   0,    0,    0,    1,    0,   0],
       [   0,    0,    0,    0,    0,   1]]
params = {"s": 20}


# ── stub: what `circuits reset` restores below the answer line ─────────────────────────
# # W_Q, W_K: (d_head, 6), d_head of your choice; write W_Q with the symbol s.
# W_Q = FILL_ME_IN("(d_head, 6)")
# W_K = FILL_ME_IN("(d_head, 6)")
