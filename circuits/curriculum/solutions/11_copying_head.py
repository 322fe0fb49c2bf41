"""Puzzle 11 · A copying head through a narrow unembedding   (from A Mathematical Framework for Transformer Circuits)

A head's full OV circuit, W_U W_O W_V W_E (n_vocab × n_vocab), says what attending to a
token does to every logit: column t is what the head adds to the logits when it attends
to a position holding t. A Mathematical Framework for Transformer Circuits finds many heads
of small models whose full OV circuit *copies*: attending to t raises the logit of t itself.
Its signature is in the eigenvalues λ: mostly positive, summarised by the copying score
Σλ / Σ|λ| (+1 for a pure copier, −1 for a head that suppresses what it attends to).

Here the unembedding is narrow. Five tokens a … e are read from only two directions, out:x
and out:y, as the five corners of a regular pentagon (the givens, W_U below):

    token   out:x            out:y                   (θ = 2π/5)
    a       cos 0·θ =  1     sin 0·θ =  0
    b       cos 1·θ =  .309  sin 1·θ =  .951
    c       cos 2·θ = −.809  sin 2·θ =  .588
    d       cos 3·θ = −.809  sin 3·θ = −.588
    e       cos 4·θ =  .309  sin 4·θ = −.951

Tokens are embedded one-hot (tok:a … tok:e; d_model = 7, with out:x and out:y starting
empty). The head's pattern is given: each position attends to the previous one (position 0
to itself). Write its OV circuit, W_V (2 × 7) and W_O (7 × 2), so that

  (a) its full OV circuit copies: copying score Σλ/Σ|λ| ≥ 0.9, and each token's column of
      W_U W_O W_V W_E is largest at that token itself;
  (b) after every position n ≥ 1 of every string of 1 to 10 tokens, the token at n − 1 (the
      one the head attends to) gets log-prob ≥ −0.1.

There are only two directions to write into, so a value cannot be "token t, one-hot".
Multiply W_O by a sharpness symbol `γ`, bound in `params`: it sets how sure the prediction is.

Worked behaviour, "ccaeb" (the targets of (b)): the head attends to the token before, and
that token must be predicted:

    position      0 c   1 c   2 a   3 e   4 b
    attends to    0     0     1     2     3
    predicted     —     c     c     a     e          (log-prob ≥ −0.1)

The logit of token u is u's row of W_U dotted with (out:x, out:y) after the head.
"""

import sympy

from circuits import Basis, blank, Head, Inputs, Model, NextToken, OVCircuit, Puzzle, Vocab
from circuits import FILL_ME_IN  # noqa: F401  (marks an unanswered puzzle)

# ── givens ───────────────────────────────────────────────────────────────────────────────
TOKENS = "abcde"
THETA = 2 * sympy.pi / 5  # exact: write corners with sympy.cos / sympy.sin
vocab = Vocab.chars_of(TOKENS)
resid = Basis([f"tok:{t}" for t in TOKENS] + ["out:x", "out:y"])  # d_model = 7

W_E = blank(resid, vocab.tokens)  # [7, 5]: tok:t is 1 for token t
W_U = blank(vocab.tokens, resid)  # [5, 7]: token k is read at the pentagon's corner k
for k, t in enumerate(TOKENS):
    W_E[f"tok:{t}", t] = 1
    W_U[t, "out:x"], W_U[t, "out:y"] = sympy.cos(k * THETA), sympy.sin(k * THETA)
γ = sympy.Symbol("γ")  # the sharpness of the prediction


def attended(tokens: list[str]) -> list[str | None]:
    """The target, in plain Python: after position n ≥ 1, the token at n − 1 (the attended one)."""
    return [None] + tokens[:-1]


def build(answer) -> Model:
    return Model(vocab, W_E, W_U=W_U, residual=resid, params=answer.params, name="copying_head",
                 layers=[[Head(W_V=answer.W_V, W_O=answer.W_O, pattern="previous")]])


puzzle = Puzzle(
    number=11,
    name="copying_head",
    title="A copying head through a narrow unembedding",
    answer=["W_V", "W_O"],
    build=build,
    targets=[
        OVCircuit("(a) head 0.0's full OV circuit W_U W_OV W_E copies: copying score ≥ 0.9, each token raises "
                  "itself most", min_score=0.9, raises=lambda t: t),
        NextToken(attended, lo=-0.1,
                  description="(b) after every position n ≥ 1 the attended token (at n − 1) has log-prob ≥ −0.1"),
    ],
    inputs=Inputs(list(TOKENS), min_len=1, max_len=10),
    examples=["abcde", "ccaeb"],
    sharpness=["γ"],
    source="A Mathematical Framework for Transformer Circuits (Elhage et al. 2021): copying heads, OV eigenvalues",
)

# ── your answer ──────────────────────────────────────────────────────────────────────────
# The value of token k is its own corner of the pentagon, W_U's row k …
W_V = blank(2, resid)
for k, t in enumerate(TOKENS):
    W_V[0, f"tok:{t}"], W_V[1, f"tok:{t}"] = sympy.cos(k * THETA), sympy.sin(k * THETA)
# … written into the two directions W_U reads, times γ.
W_O = blank(resid, 2)
W_O["out:x", 0] = γ
W_O["out:y", 1] = γ

params = {"γ": 10}


# ── stub: what `circuits reset` restores below the answer line ─────────────────────────
# # W_V: (2, 7), the value of each token. W_O: (7, 2), where the two value dimensions go, times γ.
# W_V = FILL_ME_IN("(2, 7)")
# W_O = FILL_ME_IN("(7, 2)")
