"""Puzzle 27 · Challenge: copy two tokens at once through four dimensions

Challenge for the chapter on OV circuits and the unembedding (puzzles 11–13). The worksheet
gives the behaviour, the givens and the shapes; the mechanism is yours.

Five tokens a … e, embedded one-hot in tok:a … tok:e. Five more directions, out:a … out:e,
start empty, and the unembedding reads each token's logit from its own (d_model = 10):

                 tok:a … tok:e    out:a  out:b  out:c  out:d  out:e
    W_U   a          0 … 0          1      0      0      0      0
          b          0 … 0          0      1      0      0      0
          …
          e          0 … 0          0      0      0      0      1

One head, whose pattern is given: from every position i ≥ 2 it splits its attention evenly
between the two positions before it, i − 1 and i − 2; position 1 attends to position 0
alone, and position 0 to itself. Write its OV circuit with a value of four dimensions,
W_V (4 × 10) and W_O (10 × 4), so that, for every string of 1 to 10 tokens,

  (a) where the head attends to one token (at position 1, or where i − 1 and i − 2 hold the
      same token), that token has log-prob ≥ −0.1 (probability ≥ e^−0.1 ≈ 0.905);
  (b) where it attends to two different tokens, each of the two has log-prob ≥ −0.8
      (probability ≥ e^−0.8 ≈ 0.449);
  (c) its full OV circuit W_U W_O W_V W_E copies: copying score Σλ/Σ|λ| ≥ 0.9, and each
      token's column is largest at that token itself;
  (d) its value has at most four dimensions: W_V has at most 4 rows.

Nothing is asked at position 0. Multiply W_O by a sharpness symbol `γ`, bound in `params`.

The behaviour, for "abbce" (0 a, 1 b, 2 b, 3 c, 4 e):

    position   attends to       must predict
    0 a        itself           —
    1 b        0 a              a              (≥ 0.905)
    2 b        ½ a, ½ b         a and b        (≥ 0.449 each)
    3 c        ½ b, ½ b         b              (≥ 0.905)
    4 e        ½ b, ½ c         b and c        (≥ 0.449 each)

The head sees the two tokens only through the average of their values, W_O (½ v_x + ½ v_y),
and the five logits are read from what that average writes.
"""

import numpy as np
import sympy

from circuits import Basis, blank, Head, Inputs, Model, NextToken, OVCircuit, Puzzle, ValueWidth, Vocab
from circuits import FILL_ME_IN  # noqa: F401  (marks an unanswered puzzle)

# ── givens ───────────────────────────────────────────────────────────────────────────────
TOKENS = "abcde"
vocab = Vocab.chars_of(TOKENS)
resid = Basis([f"tok:{t}" for t in TOKENS] + [f"out:{t}" for t in TOKENS])  # d_model = 10

W_E = blank(resid, vocab.tokens)  # [10, 5]: tok:t is 1 for token t
W_U = blank(vocab.tokens, resid)  # [5, 10]: the logit of t is out:t
for t in TOKENS:
    W_E[f"tok:{t}", t] = 1
    W_U[t, f"out:{t}"] = 1
γ = sympy.Symbol("γ")  # the sharpness of the prediction


def last_two(T: int) -> np.ndarray:  # -> [query, key]
    """The given pattern: ½ on i − 1 and ½ on i − 2 from i ≥ 2; position 1 on 0 alone; position 0 on itself."""
    pattern = np.zeros((T, T))
    pattern[0, 0] = 1
    if T > 1:
        pattern[1, 0] = 1
    for i in range(2, T):
        pattern[i, i - 1] = pattern[i, i - 2] = 0.5
    return pattern


def one_token(tokens: list[str]) -> list[str | None]:
    """Target (a), in plain Python: the token attended to where the head attends to one token only."""
    out: list[str | None] = [None] * len(tokens)
    for i in range(1, len(tokens)):
        if i == 1 or tokens[i - 1] == tokens[i - 2]:
            out[i] = tokens[i - 1]
    return out


def nearer(tokens: list[str]) -> list[str | None]:
    """Target (b), the token at i − 1, where the head attends to two different tokens."""
    return [tokens[i - 1] if i >= 2 and tokens[i - 1] != tokens[i - 2] else None for i in range(len(tokens))]


def farther(tokens: list[str]) -> list[str | None]:
    """Target (b), the token at i − 2, where the head attends to two different tokens."""
    return [tokens[i - 2] if i >= 2 and tokens[i - 1] != tokens[i - 2] else None for i in range(len(tokens))]


def build(answer) -> Model:
    return Model(vocab, W_E, W_U=W_U, residual=resid, params=answer.params, name="split_copy",
                 layers=[[Head(W_V=answer.W_V, W_O=answer.W_O, pattern=last_two)]])


puzzle = Puzzle(
    number=27,
    name="split_copy",
    title="Challenge: copy two tokens at once through four dimensions",
    answer=["W_V", "W_O"],
    build=build,
    targets=[
        ValueWidth("(d) head 0.0's value has at most four dimensions (rows of W_V)", most=4),
        OVCircuit("(c) head 0.0's full OV circuit W_U W_OV W_E copies: copying score ≥ 0.9, each token raises "
                  "itself most", min_score=0.9, raises=lambda t: t),
        NextToken(one_token, lo=-0.1,
                  description="(a) where head 0.0 attends to one token, that token has log-prob ≥ −0.1"),
        NextToken(nearer, lo=-0.8,
                  description="(b) where head 0.0 attends to two tokens, the one at i − 1 has log-prob ≥ −0.8"),
        NextToken(farther, lo=-0.8,
                  description="(b) where head 0.0 attends to two tokens, the one at i − 2 has log-prob ≥ −0.8"),
    ],
    inputs=Inputs(list(TOKENS), min_len=1, max_len=10),
    examples=["abbce", "acac", "eaeb", "ddee"],
    sharpness=["γ"],
    reads={},  # the mechanism is yours: each matrix may read any direction
    source="issue 37: a challenge whose mechanism the OV chapter did not walk through (a copying head whose "
           "attention is split between two tokens, through a value narrower than the vocabulary)",
)

# ── your answer ──────────────────────────────────────────────────────────────────────────
# W_V: (4, 10), the value of each token. W_O: (10, 4), where the four value dimensions go, times γ.
W_V = FILL_ME_IN("(4, 10)")
W_O = FILL_ME_IN("(10, 4)")
