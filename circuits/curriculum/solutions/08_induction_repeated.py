"""Puzzle 08 · Induction on a repeated random sequence            (from Exercise Class 5, exercise 1, parts 8–10)

Seed 000 gives GPT-2 small a BOS token and 20 random tokens (ids 0–99), then the same 20
tokens again, and averages the log-probability it gives each next token over either half:

    GPT-2 small     first half −6.289     second half −0.843

Nothing could predict random tokens the first time round. The second time, each token
followed the same token 20 positions earlier, and GPT-2's induction heads copy it from
there. In this puzzle you finish a whole model (embedding, a previous-token head, an
induction head, unembedding) and hold it to the same measurement.

The model (d_model = 79, n_ctx = 41). Tokens are BOS and the 26 letters; every input starts
with BOS. The residual stream has the directions

    tok:a … tok:z   the letter's content (one-hot)        bos            1 on BOS only
    prev:a … prev:z  the letter before (layer 0 writes it)  out:a … out:z  free, for your head

Layer 0 is given: a previous-token head with a fixed pattern (each position attends to the
one before it, BOS to itself) that copies tok into prev. Puzzle 07 built this head from
positions; here its pattern is given, so the model needs no position embedding.

Write layer 1's head and the unembedding:

  W_Q, W_K (d_head × 79)        where head 1.0 looks (its pattern is checked, below);
  W_V (26 × 79), W_O (79 × 26)  what it writes into out:*;
  W_U (27 × 79)                 the logits (rows in vocabulary order: <bos>, a, …, z).

Both behaviours are checked, the pattern as well as the log-probs: a pattern that is only
half right can hide behind a large γ in the log-probs alone. Sharpness comes from two
symbols bound in `params`: `s` in W_Q (how peaked the attention is) and `γ` in W_U (how
confident the prediction is).

The check runs on BOS + 2–20 random letters written twice, up to the model's n_ctx = 41
(half of them drawn with no letter twice in the first copy), on the worked examples (two of
seed 000's size: 20 distinct letters, and seed 000's own 20 tokens renamed to letters, each
written twice), and on anything the shrinker makes of them. Per input:

  head 1.0     ≥ 0.9 of its attention right after the earlier copies of the current letter,
               or on BOS when the letter is new;
  first half   at BOS and after a letter seen for the first time, the context says nothing
               about the next letter: the mean log-prob of the next letter there must stay
               within ±0.25 of log(1/26) = −3.258, the score of an honest uniform guess;
  second half  after a letter seen exactly once before, where the same letter followed it
               then: the mean log-prob of that letter must be ≥ −0.1.

On a repeated string of H distinct letters, the first half predicts letters 1 … H+1 (the
first letter, predicted at BOS, and the repeat's first letter, neither of which anything
in the context foretells) and the second half letters H+2 … 2H: every prediction the model
makes is read, as in seed 000's measurement. Seed 000 splits the same 2H predictions H / H,
so its second half counts the repeat's first token, and GPT-2's −0.843 includes one guess
that cannot be better than chance. When a letter recurs inside the first copy, the
predictions after it (a successor that differs from last time, or a letter seen twice
before) belong to neither half and are not read.

Worked example, "abcabc" (H = 3), read as 0 BOS, 1 a, 2 b, 3 c, 4 a, 5 b, 6 c:

    position           0 BOS   1 a     2 b     3 c     4 a     5 b     6 c
    next letter        a       b       c       a       b       c       —
    half               first   first   first   first   second  second  —
    head 1.0 attends   BOS     BOS     BOS     BOS     2 'b'   3 'c'   4 'a'
    prediction         flat    flat    flat    flat    b       c       a
    log-prob of next   ≈ −3.26 ≈ −3.26 ≈ −3.26 ≈ −3.26 ≥ −0.1  ≥ −0.1  —

(≈ −3.26: the half's mean within ±0.25 of log(1/26); flat over all 27 tokens, BOS
included, gives log(1/27) = −3.296, inside the band.)
"""

import math

import numpy as np
import sympy

from circuits import (
    Attention, Basis, blank, Head, Inputs, Model, NextToken, Puzzle, Repeated, Vocab,
)
from circuits import FILL_ME_IN  # noqa: F401  (marks an unanswered puzzle)

# ── givens ───────────────────────────────────────────────────────────────────────────────
LETTERS = "abcdefghijklmnopqrstuvwxyz"
N_CTX = 41  # BOS + 20 letters + the same 20 again, as in seed 000
vocab = Vocab.chars_of(LETTERS, bos="<bos>")  # ids: <bos> 0, a 1, …, z 26
CONTENT = [f"tok:{t}" for t in LETTERS]
PREV = [f"prev:{t}" for t in LETTERS]
OUT = [f"out:{t}" for t in LETTERS]
resid = Basis(CONTENT + ["bos"] + PREV + OUT)  # d_model = 79
UNIFORM = math.log(1 / len(LETTERS))  # −3.258
s, γ = sympy.symbols("s γ")  # the sharpness of the attention and of the logits

#            <bos> a  b  …  z
W_E = blank(resid, vocab.tokens)  # [79, 27]: tok:x is 1 for letter x, bos is 1 for BOS
W_E["bos", "<bos>"] = 1
for t in LETTERS:
    W_E[f"tok:{t}", t] = 1

# Layer 0, given: the previous-token head. W_V0 reads the content, W_O0 writes it into prev.
W_V0 = blank(len(LETTERS), resid)  # [26, 79]
W_O0 = blank(resid, len(LETTERS))  # [79, 26]
for k, t in enumerate(LETTERS):
    W_V0[k, f"tok:{t}"] = 1
    W_O0[f"prev:{t}", k] = 1


def first_half(tokens: list[str]) -> list[str | None]:
    """After a letter seen for the first time: the next letter (None elsewhere)."""
    out: list[str | None] = []
    seen: set[str] = set()
    for i, t in enumerate(tokens):
        out.append(tokens[i + 1] if i + 1 < len(tokens) and t not in seen else None)
        seen.add(t)
    return out


def first_letter(tokens: list[str]) -> str:
    """What the model predicts at BOS: the first letter, which nothing foretells."""
    return tokens[0]


def second_half(tokens: list[str]) -> list[str | None]:
    """After a letter seen exactly once before, where the same letter followed it then: that letter."""
    out: list[str | None] = []
    seen: dict[str, list[int]] = {}
    for i, t in enumerate(tokens):
        copies = seen.setdefault(t, [])
        follows = i + 1 < len(tokens) and len(copies) == 1 and tokens[copies[0] + 1] == tokens[i + 1]
        out.append(tokens[i + 1] if follows else None)
        copies.append(i)
    return out


def after_a_copy(tokens: list[str]) -> list[list[int]]:
    """Where head 1.0 should look from each letter: right after its earlier copies, else BOS (position −1)."""
    return [[j + 1 for j in range(i) if tokens[j] == t] or [-1] for i, t in enumerate(tokens)]


GIVEN = {name: np.asarray(M) for name, M in [("W_E", W_E), ("W_V0", W_V0), ("W_O0", W_O0)]}  # as numbers, once


def build(answer) -> Model:
    return Model(vocab, GIVEN["W_E"], residual=resid, W_U=answer.W_U, params=answer.params, name="induction_repeated",
                 layers=[[Head(W_V=GIVEN["W_V0"], W_O=GIVEN["W_O0"], pattern="previous")],
                         [Head(W_Q=answer.W_Q, W_K=answer.W_K, W_V=answer.W_V, W_O=answer.W_O)]], n_ctx=N_CTX)


puzzle = Puzzle(
    number=8,
    name="induction_repeated",
    title="Induction on a repeated random sequence",
    answer=["W_Q", "W_K", "W_V", "W_O", "W_U"],
    build=build,
    targets=[
        Attention(1, 0, after_a_copy, per_input=True, min_mass=0.9,
                  description="head 1.0 puts ≥ 0.9 of its attention right after an earlier copy of the letter, "
                              "or on BOS when there is none"),
        NextToken(first_half, lo=UNIFORM - 0.25, hi=UNIFORM + 0.25, mean=True, after_bos=first_letter,
                  description="first half: mean log-prob at BOS and after a new letter within ±0.25 of "
                              "log(1/26) = −3.258 (GPT-2 small: −6.289)"),
        NextToken(second_half, lo=-0.1, hi=0.0, mean=True,
                  description="second half: mean log-prob of the letter that followed last time ≥ −0.1 "
                              "(GPT-2 small: −0.843)"),
    ],
    inputs=Inputs(list(LETTERS), min_len=4, max_len=24,
                  families=[Repeated(distinct=True), Repeated()]),
    examples=["abcabc", "thequickbrownfxjmpsv" * 2, "abcdefghijklmdaniopo" * 2],
    sharpness=["s", "γ"],
    source="seed 000: Exercise Class 5, exercise 1.8–1.10 (GPT-2 small on a repeated random sequence)",
)

# ── your answer ──────────────────────────────────────────────────────────────────────────
# Query "I am x" (rows 0–25) and, in row 26, "I am some letter" (the content always sums to 1);
# key "the letter before me was x" (rows 0–25) and, in row 26, "I am BOS". A match scores s,
# BOS s/2, anything else 0.
W_Q = blank(27, resid)
W_K = blank(27, resid)
for k, t in enumerate(LETTERS):
    W_Q[k, f"tok:{t}"] = s
    W_Q[26, f"tok:{t}"] = s / 2
    W_K[k, f"prev:{t}"] = 1
W_K[26, "bos"] = 1

# Copy the attended letter into out, and read out as the logits.
W_V = blank(len(LETTERS), resid)
W_O = blank(resid, len(LETTERS))
W_U = blank(vocab.tokens, resid)  # [27, 79]; the <bos> row stays 0
for k, t in enumerate(LETTERS):
    W_V[k, f"tok:{t}"] = 1
    W_O[f"out:{t}", k] = 1
    W_U[t, f"out:{t}"] = γ

params = {"s": 30, "γ": 12}

# What this answer scores (measured): first half −3.296 = log(1/27) on every checked input (flat over
# BOS and the 26 letters), second half −0.0002 on the worst one. Split seed 000's way (all 40 predictions, from BOS on,
# 20 / 20): 20 distinct letters repeated give −3.296 / −0.165 (the repeat's first letter costs 3.3 / 20); seed 000's
# own sequence with its tokens renamed to letters, "abcdefghijklmdaniopo" twice, gives −4.60 / −1.35,
# worse than GPT-2's −0.843: after a letter seen before, this head bets everything on what followed it
# then (log-prob −12 when that is wrong, and a split bet after a letter seen twice), where GPT-2 hedges.


# ── stub: what `circuits reset` restores below the answer line ─────────────────────────
# # Five matrices, each built with blank(…) and written by name (e.g. W_Q[0, "tok:a"] = s), and params.
# W_Q = FILL_ME_IN("(d_head, 79)")
# W_K = FILL_ME_IN("(d_head, 79)")
# W_V = FILL_ME_IN("(26, 79)")
# W_O = FILL_ME_IN("(79, 26)")
# W_U = FILL_ME_IN("(27, 79)")
# params = {"s": 1, "γ": 1}  # raise them until the attention and the predictions are sharp
