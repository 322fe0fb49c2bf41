"""Puzzle 23 · Challenge: a head that looks two tokens back, through a window

Challenge for the chapter on positions and induction (puzzles 04–08). Puzzle 04 found the
previous token by rotating sinusoidal positions; here the positions are one-hot and the
head is local. The worksheet gives the behaviour, the givens and the constraints; the
mechanism is yours.

Tokens a, b, c, d (one-hot tok:a … tok:d); the position embedding is one-hot, pos:0 …
pos:11 (d_model = 4 + 12 = 16). The head is given a window of 3: query i sees only keys
i − 2, i − 1 and i (fewer at the start), and its value reads the token it attends to.

Write W_Q and W_K (d_head × 16, d_head of your choice), raw dot-product scores, so that at
every position i ≥ 2 the head puts ≥ 0.9 of its attention on position i − 2, for every
string of 1 to 12 tokens (the whole context, n_ctx = 12). Nothing is asked at positions 0
and 1. Multiply W_Q by a sharpness symbol `s`, bound in `params`.

The behaviour, for "abcdab":

    query     0 a   1 b   2 c   3 d   4 a   5 b
    sees      0     0–1   0–2   1–3   2–4   3–5
    key        —     —     0     1     2     3

How little does the head need to know about where the query is?
"""

import sympy

from circuits import Attention, Basis, blank, Head, Inputs, Model, Puzzle, Uniform, Vocab
from circuits import FILL_ME_IN  # noqa: F401  (marks an unanswered puzzle)

# ── givens ───────────────────────────────────────────────────────────────────────────────
TOKENS = "abcd"
N_CTX = 12
WINDOW = 3
vocab = Vocab.chars_of(TOKENS)
resid = Basis([f"tok:{t}" for t in TOKENS] + [f"pos:{i}" for i in range(N_CTX)])  # d_model = 16
W_E = blank(resid, vocab.tokens)  # [16, 4]
for t in TOKENS:
    W_E[f"tok:{t}", t] = 1
W_pos = blank(resid, N_CTX)  # [16, 12]
for i in range(N_CTX):
    W_pos[f"pos:{i}", i] = 1
W_V = blank(len(TOKENS), resid)  # [4, 16], given: the result is the attended token, one-hot
for k, t in enumerate(TOKENS):
    W_V[k, f"tok:{t}"] = 1
s = sympy.Symbol("s")  # the sharpness


def two_back(tokens: list[str]) -> list[int | None]:
    """The target, in plain Python: query i attends to key i − 2 (nothing asked at 0 and 1)."""
    return [i - 2 if i >= 2 else None for i in range(len(tokens))]


def build(answer) -> Model:
    head = Head(W_Q=answer.W_Q, W_K=answer.W_K, W_V=W_V, window=WINDOW)
    return Model(vocab, W_E, W_pos=W_pos, layers=[[head]], name="two_back", params=answer.params)


puzzle = Puzzle(
    number=23,
    name="two_back",
    title="Challenge: a head that looks two tokens back, through a window",
    answer=["W_Q", "W_K"],
    build=build,
    targets=[Attention(0, 0, two_back, per_input=True,
                       description="head 0.0 puts ≥ 0.9 of its attention on position i − 2 at every i ≥ 2")],
    inputs=Inputs(vocab.tokens, min_len=1, max_len=N_CTX, families=[Uniform()]),
    examples=["abcdab", "aaaaaaaaaaaa", "dcbadcbadcba"],
    sharpness=["s"],
    reads={},  # the mechanism is yours: each matrix may read any direction
    source="issue 28: a challenge whose mechanism the positions chapter did not walk through",
)

# ── your answer ──────────────────────────────────────────────────────────────────────────
# The window leaves three keys; the oldest is the one wanted. Every query is the same, and a
# key scores minus its position: within any window the earliest key leads by s and 2s.
W_Q = blank(1, resid)
W_K = blank(1, resid)
for t in TOKENS:
    W_Q[0, f"tok:{t}"] = s
for i in range(N_CTX):
    W_K[0, f"pos:{i}"] = -i
params = {"s": 5}


# ── stub: what `circuits reset` restores below the answer line ─────────────────────────
# # W_Q, W_K: (d_head, 16), d_head of your choice; write W_Q with the symbol s.
# # blank(d_head, resid) gives a zero matrix you can fill by name: W_K[0, "pos:3"] = 1.
# W_Q = FILL_ME_IN("(d_head, 16)")
# W_K = FILL_ME_IN("(d_head, 16)")
