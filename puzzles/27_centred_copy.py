"""Puzzle 27 · Challenge: a copying head that must ignore BOS

Challenge for the chapter on OV circuits and the unembedding (puzzles 11–13). Puzzle 11's
head copied from one-hot tokens; here the letters are not centred and half of the head's
attention rests on BOS, as in real models. The worksheet gives the behaviour, the givens and
the constraints; the mechanism is yours.

Five letters a … e and BOS, which starts every input. The embedding is narrow: the letters
sit on a pentagon in (emb:x, emb:y) that is not centred on the origin, every token has
one = 1, and BOS also has bos = 1 (θ = 2π/5; d_model = 6, with out:x and out:y empty):

    token   emb:x                 emb:y              one   bos
    <bos>   1                     0                   1     1
    a       1 + cos 0·θ = 2       sin 0·θ =  0        1     0
    b       1 + cos 1·θ = 1.309   sin 1·θ =  .951     1     0
    c       1 + cos 2·θ =  .191   sin 2·θ =  .588     1     0
    d       1 + cos 3·θ =  .191   sin 3·θ = −.588     1     0
    e       1 + cos 4·θ = 1.309   sin 4·θ = −.951     1     0

W_U reads letter k at the pentagon's corner k, (cos kθ, sin kθ), from out:x and out:y (BOS's
logit is 0). The head's pattern is given: BOS keeps half of every query's attention, and the
other half goes to the previous position (so the first letter, whose previous position is
BOS, attends to BOS alone). Write its OV circuit, W_V (2 × 6) and W_O (6 × 2), so that

  (a) its full OV circuit over the letters copies: copying score Σλ/Σ|λ| ≥ 0.9, and each
      letter's column of W_U W_O W_V W_E is largest at that letter itself;
  (b) where the head attends to BOS alone (the first letter), it writes nothing into out:x
      and out:y (each within 0.1);
  (c) after every letter after the first, the letter before it gets log-prob ≥ −0.1,
for every string of 1 to 10 letters after BOS. Multiply W_O by a sharpness symbol `γ`,
bound in `params`.

The behaviour, for "cab" (0 BOS, 1 c, 2 a, 3 b):

    query   attends to          (b) out:x, out:y   (c) must predict
    1 c     BOS                 0, 0               —
    2 a     ½ BOS, ½ c          —                  c
    3 b     ½ BOS, ½ a          —                  a

Why puzzle 11's construction is not enough: a head that reads emb:x and emb:y as they are and
writes them, times γ, into out:x and out:y turns c into γ·(.191, .588). The logits that adds,
γ·(W_U row)·(.191, .588), are a .191γ, b .618γ, c .191γ, d −.500γ, e −.500γ: b, not c. And
BOS, at (1, 0), writes γ·(1, 0): a's corner.
"""

import numpy as np
import sympy

from circuits import Basis, blank, Head, HeadOutput, Inputs, Model, NextToken, Output, OVCircuit, Puzzle, Vocab
from circuits import FILL_ME_IN  # noqa: F401  (marks an unanswered puzzle)

# ── givens ───────────────────────────────────────────────────────────────────────────────
TOKENS = "abcde"
THETA = 2 * sympy.pi / 5  # exact: write corners with sympy.cos / sympy.sin
vocab = Vocab.chars_of(TOKENS, bos="<bos>")
resid = Basis(["emb:x", "emb:y", "one", "bos", "out:x", "out:y"])  # d_model = 6

W_E = blank(resid, vocab.tokens)  # [6, 6]: the letters on a pentagon centred at (1, 0); BOS at (1, 0)
W_U = blank(vocab.tokens, resid)  # [6, 6]: letter k read at the pentagon's corner k; BOS's row 0
W_E["emb:x", "<bos>"], W_E["one", "<bos>"], W_E["bos", "<bos>"] = 1, 1, 1
for k, t in enumerate(TOKENS):
    W_E["emb:x", t], W_E["emb:y", t], W_E["one", t] = 1 + sympy.cos(k * THETA), sympy.sin(k * THETA), 1
    W_U[t, "out:x"], W_U[t, "out:y"] = sympy.cos(k * THETA), sympy.sin(k * THETA)
γ = sympy.Symbol("γ")  # the sharpness of the prediction


def half_on_bos(T: int) -> np.ndarray:  # -> [query, key]
    """The given pattern: half of every query's attention on BOS (key 0), half on the previous position."""
    pattern = np.zeros((T, T))
    pattern[:, 0] += 0.5
    pattern[np.arange(T), np.maximum(np.arange(T) - 1, 0)] += 0.5
    return pattern


def bos_alone(tokens: list[str]) -> list[list[int] | None]:
    """Target (b), in plain Python: out:x, out:y = 0 at the first letter (it attends to BOS alone)."""
    return [[0, 0]] + [None] * (len(tokens) - 1)


def letter_before(tokens: list[str]) -> list[str | None]:
    """Target (c), in plain Python: after every letter after the first, the letter before it."""
    return [None] + tokens[:-1]


def build(answer) -> Model:
    return Model(vocab, W_E, W_U=W_U, residual=resid, params=answer.params, name="centred_copy",
                 layers=[[Head(W_V=answer.W_V, W_O=answer.W_O, pattern=half_on_bos)]])


puzzle = Puzzle(
    number=27,
    name="centred_copy",
    title="Challenge: a copying head that must ignore BOS",
    answer=["W_V", "W_O"],
    build=build,
    targets=[
        OVCircuit("(a) head 0.0's full OV circuit over the letters copies: copying score ≥ 0.9, each letter "
                  "raises itself most", min_score=0.9, raises=lambda t: t),
        Output(HeadOutput(0, 0, ("out:x", "out:y")), bos_alone, tol=0.1,
               description="(b) attending to BOS alone (the first letter), head 0.0 writes nothing into out:* (±0.1)"),
        NextToken(letter_before, lo=-0.1,
                  description="(c) after every letter after the first, the letter before it has log-prob ≥ −0.1"),
    ],
    inputs=Inputs(list(TOKENS), min_len=1, max_len=10),
    examples=["cab", "abcde", "eeee"],
    sharpness=["γ"],
    reads={},  # the mechanism is yours: each matrix may read any direction
    source="issue 28: a challenge whose mechanism the OV chapter did not walk through (a copying head that "
           "must ignore BOS)",
)

# ── your answer ──────────────────────────────────────────────────────────────────────────
# W_V: (2, 6), the value of each token. W_O: (6, 2), where the two value dimensions go, times γ.
W_V = FILL_ME_IN("(2, 6)")
W_O = FILL_ME_IN("(6, 2)")
