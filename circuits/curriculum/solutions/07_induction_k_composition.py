"""Puzzle 07 · An induction head by K-composition                 (from Transformer Circuit Exercises, 3)

Puzzle 06 moved *positions* through a head's values. Some position schemes (rotary
attention, for one) never show positions to W_V, yet models that use them still grow
induction heads, by a second algorithm, in which one head uses what another wrote
(composition). Here a previous-token head writes *which token came before* into a spare
subspace, and a second head must find, from what the first wrote, what followed the last
copy of the current token. How it finds that key is yours to work out.

The embedding (d_model = 13, n_ctx = 16). Every input starts with a BOS token at position
0. Tokens a b c d have orthonormal content directions tok:a … tok:d, and BOS has its own
direction, bos. Positions are the two largest pairs of puzzle 06, α = (π/8, 3π/4) and
λ = (1, 0.8): position n → cos:i = λᵢ·cos(αᵢn), sin:i = λᵢ·sin(αᵢn). Four more directions,
prev:a … prev:d, start empty.

Write two heads (scores are raw dot products q·k, with a causal mask):

  head 1 = head 0.0, the previous-token head.  W_Q1, W_K1 (4 × 13) decide where it looks,
      W_V1 (4 × 13) and W_O1 (13 × 4) what it writes: after it, prev:a … prev:d at each
      position say which token stood just before (the worked example shows them).
  head 2 = head 1.0, the induction head.  W_Q2, W_K2 (4 × 13). It must find its target
      through what head 0.0 wrote into prev:*, checked by intervention (activation
      patching): with prev:* taken from the run on another string of the same length,
      head 1.0 must attend (≥ 0.9) where an induction head would if the string's
      predecessors were the other string's; with prev:* zeroed, it must lose its target.

For strings of 1 to 15 tokens after BOS (checked on every string of 1 to 6 tokens and on
random strings of up to 15):

  head 0.0 puts ≥ 0.9 of its attention on the previous position (on BOS, for the first token);
  head 1.0 puts ≥ 0.9 of its attention on the position right after the previous copy of
      the current token, wherever the token appeared before. (If it appeared k times before,
      the k positions right after those copies together; nothing is asked of a new token.)

Why BOS? Position 0 has no previous position, so the previous-token head can only attend
to itself there, and would write position 0's own token into prev. With BOS at position 0
that token has no content: prev stays empty at positions 0 and 1.

The K-composition score of the two heads, ‖W_QK² W_OV¹‖ / (‖W_QK²‖ ‖W_OV¹‖), measures how
much of what head 2 reads head 1 wrote, against random matrices of the same rank (not
checked: a measurement to compare yours with): the reference scores 0.500 against
0.264 ± 0.062, z = +3.8, which `circuits analyze 07` calls "above" (beyond 3 standard
deviations; run it once you have an answer). Multiply both queries by a sharpness symbol
`s`, bound in `params`: a blurred previous-token pattern blurs
every key of head 2.

Worked example, "abcab", which the model reads as  0 BOS, 1 a, 2 b, 3 c, 4 a, 5 b.
After head 1, prev holds at each position the token before it: —, —, a, b, c, a.
The targets (—: no target there):

    query        head 0.0 attends to    head 1.0 attends to
    1 'a'        0 BOS                  —   (a new token)
    2 'b'        1 'a'                  —
    3 'c'        2 'b'                  —
    4 'a'        3 'c'                  2 'b'   (the token after the first 'a')
    5 'b'        4 'a'                  3 'c'   (the token after the first 'b')
"""

import numpy as np
import sympy

from circuits import (
    Attention, Basis, blank, Depends, Head, Inputs, Model, Puzzle, Repeated, sinusoidal,
    sinusoidal_names, Uniform, Vocab,
)
from circuits import FILL_ME_IN  # noqa: F401  (marks an unanswered puzzle)

# ── givens ───────────────────────────────────────────────────────────────────────────────
N_CTX = 16
ALPHA = (sympy.pi / 8, 3 * sympy.pi / 4)  # exact, so sympy.cos/sin of their multiples stay exact
MAGNITUDES = (1, 0.8)
vocab = Vocab.chars_of("abcd", bos="<bos>")
CONTENT = [f"tok:{t}" for t in "abcd"]  # tok:a … tok:d
POSITION = sinusoidal_names(2)  # cos:0, sin:0, cos:1, sin:1
PREV = [f"prev:{t}" for t in "abcd"]  # prev:a … prev:d: which token came before
resid = Basis(CONTENT + ["bos"] + POSITION + PREV)  # d_model = 13

#            <bos> a  b  c  d
W_E = blank(resid, vocab.tokens)  # [13, 5]: tok:x is 1 for token x, bos is 1 for BOS
W_E["bos", "<bos>"] = 1
for t in "abcd":
    W_E[f"tok:{t}", t] = 1
W_pos = blank(resid, N_CTX)  # [13, 16]: rows cos:0 … sin:1 hold the position pairs
W_pos[POSITION, list(range(N_CTX))] = sinusoidal(N_CTX, [float(a) for a in ALPHA], MAGNITUDES)
s = sympy.Symbol("s")  # the sharpness


def after_copies(ids):  # token ids [b, T] -> [b, query, key]: the key right after an earlier copy of the query's token
    before = np.concatenate([np.full_like(ids[:, :1], -1), ids[:, :-1]], axis=1)  # [b, T]: the token before each key
    return (ids[:, :, None] == before[:, None, :]) & np.tri(ids.shape[1], dtype=bool)


def prev_from(base: list[str], source: list[str]) -> list[object]:
    """Head 1.0 with head 0.0's prev:* taken from `source`: the keys j whose prev holds the query's token,
    source[j − 1] = base[q] (None where no key does)."""
    return [[j for j in range(1, q + 1) if source[j - 1] == t] or None for q, t in enumerate(base)]


def build(answer) -> Model:
    read_content = np.eye(len(resid))[:4]  # head 2 writes nothing; its values show the attended token
    return Model(vocab, W_E, W_pos=W_pos, params=answer.params, name="induction_k_composition", layers=[
        [Head(W_Q=answer.W_Q1, W_K=answer.W_K1, W_V=answer.W_V1, W_O=answer.W_O1)],
        [Head(W_Q=answer.W_Q2, W_K=answer.W_K2, W_V=read_content)],
    ])


puzzle = Puzzle(
    number=7,
    name="induction_k_composition",
    title="An induction head by K-composition",
    answer=["W_Q1", "W_K1", "W_V1", "W_O1", "W_Q2", "W_K2"],
    build=build,
    targets=[
        Attention(0, 0, "previous-token", min_mass=0.9,
                  description="head 0.0 puts ≥ 0.9 of its attention on the previous position"),
        Attention(1, 0, after_copies, min_mass=0.9,
                  description="head 1.0 puts ≥ 0.9 of its attention on the token after the previous copy (induction)"),
        Depends((1, 0), "head 0.0", ["prev:*"], prev_from,
                description="head 1.0's keys read what head 0.0 wrote into prev:* (patched and zeroed)"),
    ],
    inputs=Inputs(list("abcd"), min_len=1, max_len=N_CTX - 1,
                  families=[Uniform(), Repeated(), Repeated(distinct=True)]),
    examples=["abcab", "abcdabcd", "aaaa", "dcbaabcd"],
    sharpness=["s"],
    source="seed 003: Transformer Circuit Exercises, exercise 3",
)

# ── your answer ──────────────────────────────────────────────────────────────────────────
# Head 1: the query turns each position pair back by αᵢ, so position n lines up with key n − 1.
#        cos:0      sin:0      cos:1      sin:1
W_Q1 = blank(4, resid)
W_K1 = blank(4, resid)
for i, a in enumerate(ALPHA):
    c, d = POSITION[2 * i], POSITION[2 * i + 1]
    W_Q1[2 * i, c], W_Q1[2 * i, d] = s * sympy.cos(a), s * sympy.sin(a)
    W_Q1[2 * i + 1, c], W_Q1[2 * i + 1, d] = -s * sympy.sin(a), s * sympy.cos(a)
    W_K1[2 * i, c], W_K1[2 * i + 1, d] = 1, 1
# … and copies the attended token's content into prev.
W_V1 = blank(4, resid)
W_O1 = blank(resid, 4)
for k, t in enumerate("abcd"):
    W_V1[k, f"tok:{t}"] = 1
    W_O1[f"prev:{t}", k] = 1

# Head 2: "I am x" against "the token before me was x".
W_Q2 = blank(4, resid)
W_K2 = blank(4, resid)
for k, t in enumerate("abcd"):
    W_Q2[k, f"tok:{t}"] = s
    W_K2[k, f"prev:{t}"] = 1

params = {"s": 30}


# ── stub: what `circuits reset` restores below the answer line ─────────────────────────
# # Six 4 × 13 matrices (W_O1 is 13 × 4), each built with blank(…) and written by name, and params.
# W_Q1 = FILL_ME_IN("(4, 13)")
# W_K1 = FILL_ME_IN("(4, 13)")
# W_V1 = FILL_ME_IN("(4, 13)")
# W_O1 = FILL_ME_IN("(13, 4)")
# W_Q2 = FILL_ME_IN("(4, 13)")
# W_K2 = FILL_ME_IN("(4, 13)")
# params = {"s": 1}  # raise s until both heads are sharp
