"""Puzzle 18 · Histogram: how often has this token appeared?     (from RASP's histogram, compiled by tracr)

Chapter: Algorithms from RASP / tracr. RASP (Weiss et al. 2021) writes programs as
sequence operations a transformer can run; its `histogram` counts, at every position, how
often the token there occurs. tracr (Lindner et al. 2023) compiles RASP's counting
(SelectorWidth) to one attention head and a BOS token, whose result is 1/(n + 1) when the
selector picks n keys. (tracr then turns 1/(n + 1) into n with an MLP; here you stop at
the fraction.) Build that head, causally: n counts the positions up to i.

Tokens a b c d; every input starts with BOS. The embedding (d_model = 5):

              <bos>  a  b  c  d
    tok:a       0    1  0  0  0
    tok:b       0    0  1  0  0
    tok:c       0    0  0  1  0
    tok:d       0    0  0  0  1
    bos         1    0  0  0  0

Write one head: W_Q, W_K (d_head × 5) and W_V (1 × 5), scores are raw dot products q·k with
a causal mask, whose result at each token's position i is

    1 / (n + 1),   n = how many of the tokens at positions 1..i equal the token at i (itself included),

within 0.001, for every string of 1 to 16 tokens after BOS; its attention must be the even
split over BOS and the n copies: each of those n + 1 keys gets ≥ 0.99 / (n + 1). Multiply
W_Q by a sharpness symbol `s`, bound in `params`.

Worked example, "abca", read as 0 BOS, 1 a, 2 b, 3 c, 4 a:

    query    keys it should attend to, evenly    result
    1 a      0 BOS, 1 a                          1/2
    2 b      0 BOS, 2 b                          1/2
    3 c      0 BOS, 3 c                          1/2
    4 a      0 BOS, 1 a, 4 a                     1/3

Nothing is asked at BOS itself.
"""

import numpy as np
import sympy

from circuits import (
    Attention, Basis, blank, Head, HeadZ, Inputs, Model, Output, Puzzle, Runs, Uniform, Vocab,
)
from circuits import FILL_ME_IN  # noqa: F401  (marks an unanswered puzzle)

# ── givens ───────────────────────────────────────────────────────────────────────────────
TOKENS = "abcd"
vocab = Vocab.chars_of(TOKENS, bos="<bos>")
resid = Basis([f"tok:{t}" for t in TOKENS] + ["bos"])  # d_model = 5
W_E = blank(resid, vocab.tokens)  # [5, 5]
W_E["bos", "<bos>"] = 1
for t in TOKENS:
    W_E[f"tok:{t}", t] = 1
s = sympy.Symbol("s")  # the sharpness


def spec(tokens: list[str]) -> list[list[float]]:
    """The target, in plain Python: 1 / (n + 1), n the count of the current token so far."""
    return [[1 / (tokens[: i + 1].count(t) + 1)] for i, t in enumerate(tokens)]


def picked(ids):  # token ids [b, T] (BOS at 0) -> [b, query, key]: BOS and every copy of the query's token so far
    same = ids[:, :, None] == ids[:, None, :]  # [b, T, T]
    return (same | (np.arange(ids.shape[1]) == 0)) & np.tri(ids.shape[1], dtype=bool)


def build(answer) -> Model:
    return Model(vocab, W_E, layers=[[Head(W_Q=answer.W_Q, W_K=answer.W_K, W_V=answer.W_V)]], name="histogram",
                 params=answer.params)


puzzle = Puzzle(
    number=18,
    name="histogram",
    title="Histogram: how often has this token appeared?",
    answer=["W_Q", "W_K", "W_V"],
    build=build,
    targets=[Attention(0, 0, picked, evenly=True, min_mass=0.99,
                       description="head 0.0 splits its attention evenly over BOS and the copies of the current token "
                                   "(each ≥ 0.99/(n + 1))"),
             Output(HeadZ(0, 0), spec, tol=1e-3,
                    description="head 0.0's result is 1/(n + 1), n = the count of the current token so far (±0.001)")],
    inputs=Inputs(list(TOKENS), min_len=1, max_len=16,
                  families=[Uniform(), Runs({"a": "a", "b": "b", "c": "c", "d": "d"})]),
    examples=["abca", "aaaa", "abcdabcd"],
    sharpness=["s"],
    source="RASP (Weiss, Goldberg & Yahav 2021), histogram; tracr (Lindner et al. 2023), SelectorWidth with BOS",
)

# ── your answer ──────────────────────────────────────────────────────────────────────────
# Rows 0–3: "I am x" against "I am x". Row 4: every token's query against BOS's key.
#        tok:a tok:b tok:c tok:d bos
W_Q = [[  s,    0,    0,    0,   0],
       [  0,    s,    0,    0,   0],
       [  0,    0,    s,    0,   0],
       [  0,    0,    0,    s,   0],
       [  s,    s,    s,    s,   0]]
W_K = [[  1,    0,    0,    0,   0],
       [  0,    1,    0,    0,   0],
       [  0,    0,    1,    0,   0],
       [  0,    0,    0,    1,   0],
       [  0,    0,    0,    0,   1]]
W_V = [[  0,    0,    0,    0,   1]]
params = {"s": 20}


# ── stub: what `circuits reset` restores below the answer line ─────────────────────────
# # W_Q, W_K: (d_head, 5), d_head of your choice; write W_Q with the symbol s.  W_V: (1, 5).
# W_Q = FILL_ME_IN("(d_head, 5)")
# W_K = FILL_ME_IN("(d_head, 5)")
# W_V = FILL_ME_IN("(1, 5)")
