"""Puzzle 06 · An induction head by pointer arithmetic       (from Transformer Circuit Exercises, 2(a)–(f))

An induction head looks back at what followed the last time the current token appeared,
so that a model can predict it will follow again. This puzzle builds one in six checked
parts, from positions alone ("pointer arithmetic"): the parts' behaviours are given below,
how each head gets there is yours.

The embedding (d_model = 20, n_ctx = 16). Tokens a b c d have orthonormal content
directions tok:a … tok:d. Positions are four cos/sin pairs with descending magnitudes λᵢ:

    position n  →  cos:i = λᵢ·cos(αᵢn),  sin:i = λᵢ·sin(αᵢn)
                   α = (π/8, 3π/4, π/4, π/2),   λ = (1, 0.8, 0.6, 0.4)

Eight more directions, v:0 … v:7, start empty: scratch space for part (e). A fact about
the givens: through pairs 0 and 1, two positions n and m have

    p_n · p_m = cos(α₀(n − m)) + 0.64·cos(α₁(n − m))
    |n − m|   0     1     2     3     4     5     6     7     8     9  …  15
    p_n·p_m  1.64  0.47  0.71  0.84 −0.64  0.07 −0.71 −1.38 −0.36 −1.38 …  0.47   (symmetric about 8)

Write six heads. Scores are raw dot products q·k, with a causal mask.

  (a) head 0.0  attends evenly to every position holding the current token, itself included.
  (b) head 0.1  attends to its own position.
  (c) head 0.2  attends to the previous position.
  (d) head 0.3  attends to earlier copies of the current token, never to itself.
  (e) head 0.3's values write the 8 position numbers of the key it attends to into the
                scratch, cos:i into v:2i and sin:i into v:2i+1, and nothing elsewhere.
  (f) head 1.0  (layer 1) attends to the position right after the earlier copy.

The shapes: W_Q_a, W_K_a, W_Q_b, W_K_b, W_Q_c, W_K_c, W_Q_f, W_K_f are 4 × 20; W_Q_d and
W_K_d are 8 × 20; W_V_e is 8 × 20 and W_O_e 20 × 8. Each matrix may read only these
directions (a query or key through the scores, a value through W_O_e); a read of anything
else, such as the smaller pairs 2 and 3, is refused:

    (a)  content                     (d)  content and pairs 0 and 1
    (b)  pairs 0 and 1               (e)  the 8 position numbers
    (c)  pairs 0 and 1               (f)  query: v:0 … v:3 only;  key: pairs 0 and 1

Each part is checked on strings of 1 to 16 tokens (every pair of positions for a token
seen once before), by where its head looks:

  (a) each of the k positions holding the current token gets ≥ 0.9 / k of head 0.0's attention;
  (b) ≥ 0.9 on the query's own position;   (c) ≥ 0.9 on the previous position;
  (d) ≥ 0.9 on the earlier copies together, wherever the current token appeared before;
  (e) where the current token appeared exactly once before, head 0.3 writes that copy's
      8 position numbers into v:0 … v:7 (±0.05); everywhere, it writes nothing (±0.05) into
      the other 12 directions, which later heads read as content and position;
  (f) there, ≥ 0.9 of head 1.0's attention is on the position right after the copy; and
      its query reads the copy's position from the scratch, checked by intervention
      (activation patching): with head 0.3's write into v:* taken from the run on another
      string of the same length, head 1.0 must attend right after that string's copy;
      with v:* zeroed, it must lose its target.

(e) and (f) skip a token seen twice or more before: head 0.3 then blends two positions
into the scratch, and the blend points nowhere. That is a limit of this algorithm, not of
your answer. Scores of the size these numbers give make a flat softmax: multiply your
queries by a sharpness symbol `s`, bound in `params`; `β` is a second symbol, there for any
weight you want to tune in `params` as well.

Worked example, "abcab" (the targets; —: no target there):

    query   (a) evenly on   (b)   (c)   (d)      (e) v:0 … v:7                      (f)
    0 a     0               0     —     —        —                                   —
    1 b     1               1     0     —        —                                   —
    2 c     2               2     1     —        —                                   —
    3 a     0, 3            3     2     0        position 0 = (1, 0, .8, 0, .6, 0, .4, 0)   1
    4 b     1, 4            4     3     1        position 1                          2

(d) must hold wherever the copy stands, 1 to 15 places back, whatever other tokens stand
between it and the query.
"""

import numpy as np
import sympy

from circuits import (
    Attention, Basis, blank, Copies, Depends, Head, HeadOutput, Inputs, Model, names, Output, Puzzle,
    Repeated, sinusoidal, sinusoidal_names, Uniform, Vocab,
)
from circuits import FILL_ME_IN  # noqa: F401  (marks an unanswered puzzle)

# ── givens ───────────────────────────────────────────────────────────────────────────────
N_CTX = 16
ALPHA = (sympy.pi / 8, 3 * sympy.pi / 4, sympy.pi / 4, sympy.pi / 2)  # exact: sympy.cos/sin of them stay exact
MAGNITUDES = (1, 0.8, 0.6, 0.4)
vocab = Vocab.chars_of("abcd")
CONTENT = [f"tok:{t}" for t in vocab.tokens]  # tok:a … tok:d
POSITION = sinusoidal_names(4)  # cos:0, sin:0, cos:1, sin:1, …, cos:3, sin:3
SCRATCH = names("v", 8)  # v:0 … v:7
resid = Basis(CONTENT + POSITION + SCRATCH)  # d_model = 20
P = sinusoidal(N_CTX, [float(a) for a in ALPHA], MAGNITUDES)  # [8, n_ctx]: position n is the column P[:, n]
POSITIONS = P.T.tolist()  # POSITIONS[n]: the 8 numbers of position n

#            a  b  c  d
W_E = blank(resid, vocab.tokens)  # [20, 4]: tok:x is 1 for token x; position and scratch rows 0
for t in vocab.tokens:
    W_E[f"tok:{t}", t] = 1
W_pos = blank(resid, N_CTX)  # [20, 16]: rows cos:0 … sin:3 hold P; content and scratch rows 0
W_pos[POSITION, list(range(N_CTX))] = P
s, β = sympy.symbols("s β")  # the sharpness, and a second symbol for any weight you want to tune


def same_token(ids):  # (a) token ids [b, T] -> [b, query, key]: the key holds the query's token (itself included)
    return (ids[:, :, None] == ids[:, None, :]) & np.tri(ids.shape[1], dtype=bool)


def earlier_copies(ids):  # (d) [b, T] -> [b, query, key]: the key holds the query's token and comes before it
    return same_token(ids) & np.tri(ids.shape[1], k=-1, dtype=bool)


def after_the_copy(ids):  # (f) [b, T] -> [b, T]: the key right after the one earlier copy (−1: none, or several)
    copies = earlier_copies(ids)
    return np.where(copies.sum(-1) == 1, copies.argmax(-1) + 1, -1)


def scratch_from(base: list[str], source: list[str]) -> list:  # (f), patched: after source's one earlier copy
    copies = [[j for j in range(q) if source[j] == t] for q, t in enumerate(source)]
    return [c[0] + 1 if len(c) == 1 else None for c in copies]


def copied_position(tokens: list[str]) -> list:  # (e): the one earlier copy's 8 position numbers (None: no copy, several)
    first: dict[str, int] = {}
    seen: dict[str, int] = {}
    out = []
    for i, t in enumerate(tokens):
        out.append(POSITIONS[first[t]] if seen.get(t) == 1 else None)
        first.setdefault(t, i)
        seen[t] = seen.get(t, 0) + 1
    return out


def nothing(tokens: list[str]) -> list:  # (e): head 0.3 leaves content and position alone, at every position
    return [[0.0] * len(CONTENT + POSITION)] * len(tokens)


def build(answer) -> Model:
    read_content = np.eye(len(resid))[:4]  # heads 0.0–0.2 write nothing; their values show the attended token
    return Model(vocab, W_E, W_pos=W_pos, params=answer.params, name="induction_pointer", layers=[
        [Head(W_Q=answer.W_Q_a, W_K=answer.W_K_a, W_V=read_content),
         Head(W_Q=answer.W_Q_b, W_K=answer.W_K_b, W_V=read_content),
         Head(W_Q=answer.W_Q_c, W_K=answer.W_K_c, W_V=read_content),
         Head(W_Q=answer.W_Q_d, W_K=answer.W_K_d, W_V=answer.W_V_e, W_O=answer.W_O_e)],
        [Head(W_Q=answer.W_Q_f, W_K=answer.W_K_f, W_V=read_content)],
    ])


puzzle = Puzzle(
    number=6,
    name="induction_pointer",
    title="An induction head by pointer arithmetic",
    answer=["W_Q_a", "W_K_a", "W_Q_b", "W_K_b", "W_Q_c", "W_K_c", "W_Q_d", "W_K_d", "W_V_e", "W_O_e",
            "W_Q_f", "W_K_f"],
    build=build,
    targets=[
        Attention(0, 0, same_token, evenly=True, min_mass=0.9,
                  description="(a) head 0.0 spreads ≥ 0.9 of its attention evenly over the current token's positions"),
        Attention(0, 1, "current-token", min_mass=0.9,
                  description="(b) head 0.1 puts ≥ 0.9 of its attention on its own position"),
        Attention(0, 2, "previous-token", min_mass=0.9,
                  description="(c) head 0.2 puts ≥ 0.9 of its attention on the previous position"),
        Attention(0, 3, earlier_copies, min_mass=0.9,
                  description="(d) head 0.3 puts ≥ 0.9 of its attention on earlier copies of the current token"),
        Output(HeadOutput(0, 3, tuple(SCRATCH)), copied_position, tol=0.05,
               description="(e) head 0.3 writes the position of the one earlier copy into v:0 … v:7 (±0.05)"),
        Output(HeadOutput(0, 3, tuple(CONTENT + POSITION)), nothing, tol=0.05,
               description="(e) head 0.3 writes nothing outside v:0 … v:7 (±0.05)"),
        Attention(1, 0, after_the_copy, min_mass=0.9,
                  description="(f) head 1.0 puts ≥ 0.9 of its attention on the position right after the earlier copy"),
        Depends((1, 0), "head 0.3", ["v:*"], scratch_from,
                description="(f) head 1.0's query reads the copy's position from head 0.3's scratch v:* (patched and "
                            "zeroed)"),
    ],
    inputs=Inputs(vocab.tokens, min_len=1, max_len=N_CTX,
                  families=[Uniform(), Repeated(), Repeated(distinct=True), Copies(vocab.tokens)],
                  exhaustive_budget=1_500),
    examples=["abcab", "abcdabcd", "aabbccdd", "dcbaabcd"],
    sharpness=["s"],
    reads={  # what the worksheet says each part reads (pairs 0 and 1: the first four position directions)
        "head 0.0 W_Q": CONTENT, "head 0.0 W_K": CONTENT,
        "head 0.1 W_Q": POSITION[:4], "head 0.1 W_K": POSITION[:4],
        "head 0.2 W_Q": POSITION[:4], "head 0.2 W_K": POSITION[:4],
        "head 0.3 W_Q": CONTENT + POSITION[:4], "head 0.3 W_K": CONTENT + POSITION[:4], "head 0.3 W_V": POSITION,
        "head 1.0 W_Q": SCRATCH[:4], "head 1.0 W_K": POSITION[:4],
    },
    source="seed 003: Transformer Circuit Exercises, exercise 2(a)–(f)",
)

# ── your answer ──────────────────────────────────────────────────────────────────────────
# Twelve matrices, each built with blank(rows, resid) and written by name (e.g. W[0, "tok:a"] = s),
# and params. Rows of W_Q/W_K/W_V are head dimensions; W_O is 20 × 8.
W_Q_a = FILL_ME_IN("(d_head, 20)")
W_K_a = FILL_ME_IN("(d_head, 20)")
W_Q_b = FILL_ME_IN("(d_head, 20)")
W_K_b = FILL_ME_IN("(d_head, 20)")
W_Q_c = FILL_ME_IN("(d_head, 20)")
W_K_c = FILL_ME_IN("(d_head, 20)")
W_Q_d = FILL_ME_IN("(d_head, 20)")
W_K_d = FILL_ME_IN("(d_head, 20)")
W_V_e = FILL_ME_IN("(8, 20)")
W_O_e = FILL_ME_IN("(20, 8)")
W_Q_f = FILL_ME_IN("(d_head, 20)")
W_K_f = FILL_ME_IN("(d_head, 20)")
params = {"s": 1}  # raise s until every head is sharp (bind β here too if a weight of yours uses it)
