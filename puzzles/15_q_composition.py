"""Puzzle 15 · Q-composition: a query built by an earlier head   (from A Mathematical Framework for Transformer Circuits)

Heads in later layers read what earlier heads wrote, in three ways (A Mathematical
Framework for Transformer Circuits): through their keys (K-composition, puzzle 07), their
values (V-composition, puzzle 05), or their queries (Q-composition). Here you build the
third: a head whose query is nothing but what an earlier head wrote.

Task: at every position, attend to the *later repeats of the string's first token*: the
positions j ≥ 1 (up to the query) holding the same token as position 0. Where the first
token has not come back yet, attend to position 0 itself.

The embedding (d_model = 9). Tokens a b c d have one-hot content directions tok:a … tok:d;
the position embedding writes one direction, start, which is 1 at position 0 and 0 at
every other position (n_ctx = 16). first:a … first:d start empty.

  head 0.0  has a given pattern: every position attends to position 0. Write its OV
            circuit, W_V0 (4 × 9) and W_O0 (9 × 4), so that it copies the token at
            position 0 into first:*.
  head 1.0  write W_Q1 and W_K1 (d_head × 9): its query reads what head 0.0 wrote.

For strings of 1 to 16 tokens (checked on every string of 1 to 6 tokens and on random
strings of up to 16; scores are raw dot products, causal mask):

  (a) head 0.0's output on first:* is the one-hot first token, at every position (±0.1);
  (b) head 1.0 puts ≥ 0.9 of its attention on the later repeats of the first token,
      together, or on position 0 while there are none;
  (c) head 1.0's query reads what head 0.0 wrote, checked by intervention (activation
      patching): with first:* taken from the run on another string of the same length,
      head 1.0 must put ≥ 0.9 on the repeats of that string's first token; with first:*
      zeroed, it must lose its target.

Position 0 holds the first token too, but it is not a repeat: it is the target only while
no repeat has come. Multiply W_Q1 by a sharpness symbol `s`, bound in `params`.

Worked example, "abcab" (positions 0 a, 1 b, 2 c, 3 a, 4 b). The targets:

    query    (a) first:* after head 0.0    (b) head 1.0 attends to
    0 'a'    first:a = 1                   key 0   (no repeat yet)
    1 'b'    first:a = 1                   key 0
    2 'c'    first:a = 1                   key 0
    3 'a'    first:a = 1                   key 3   (the first repeat of 'a')
    4 'b'    first:a = 1                   key 3

and on "aaaa", query 3 spreads its attention over keys 1, 2 and 3 together, not key 0.

Once you have an answer, `circuits analyze 15` measures the composition. The reference's
Q-composition score, ‖W_QK¹ᵀ W_OV⁰‖ / (‖W_QK¹‖ ‖W_OV⁰‖), is 0.500, and its K-composition
0.000 (the keys read nothing head 0.0 wrote). Random matrices of the same shape and rank
score 0.321 ± 0.077, so 0.500 is only "near" (z = +2.3): at d_model = 9 the statistic is
blunt, and reading which directions each head reads and writes says more.
"""

import sympy

from circuits import (
    Attention, Basis, blank, Copies, Depends, Head, HeadOutput, Inputs, Model, Output, Puzzle,
    Uniform, Vocab,
)
from circuits import FILL_ME_IN  # noqa: F401  (marks an unanswered puzzle)

# ── givens ───────────────────────────────────────────────────────────────────────────────
N_CTX = 16
vocab = Vocab.chars_of("abcd")
CONTENT = [f"tok:{t}" for t in "abcd"]
FIRST = [f"first:{t}" for t in "abcd"]
resid = Basis(CONTENT + ["start"] + FIRST)  # d_model = 9

W_E = blank(resid, vocab.tokens)  # [9, 4]: tok:t is 1 for token t
for t in "abcd":
    W_E[f"tok:{t}", t] = 1
W_pos = blank(resid, N_CTX)  # [9, 16]: start is 1 at position 0 only
W_pos["start", 0] = 1
s = sympy.Symbol("s")  # the sharpness


def first_token(tokens: list[str]) -> list[list[int]]:
    """Target (a), in plain Python: the one-hot first token, at every position."""
    return [[int(u == tokens[0]) for u in "abcd"] for _ in tokens]


def repeats_of_the_first(tokens: list[str]) -> list[list[int]]:
    """Target (b), in plain Python: the later repeats of the first token so far, else position 0."""
    return [[j for j in range(1, i + 1) if tokens[j] == tokens[0]] or [0] for i in range(len(tokens))]


def first_from(base: list[str], source: list[str]) -> list[object]:
    """Head 1.0 with head 0.0's first:* taken from `source`: the later repeats in `base` of source's first token
    (position 0 too while none has come, when that token is base's own first; else None)."""
    fallback = [0] if base[0] == source[0] else None
    return [[j for j in range(1, i + 1) if base[j] == source[0]] or fallback for i in range(len(base))]


def build(answer) -> Model:
    return Model(vocab, W_E, W_pos=W_pos, params=answer.params, name="q_composition", layers=[
        [Head(W_V=answer.W_V0, W_O=answer.W_O0, pattern="first")],
        [Head(W_Q=answer.W_Q1, W_K=answer.W_K1, W_V=[[0] * len(resid)])],
    ])


puzzle = Puzzle(
    number=15,
    name="q_composition",
    title="Q-composition: a query built by an earlier head",
    answer=["W_V0", "W_O0", "W_Q1", "W_K1"],
    build=build,
    targets=[
        Output(HeadOutput(0, 0, tuple(FIRST)), first_token, tol=0.1,
               description="(a) head 0.0 writes the first token into first:* at every position (±0.1)"),
        Attention(1, 0, repeats_of_the_first, per_input=True, min_mass=0.9,
                  description="(b) head 1.0 puts ≥ 0.9 on the later repeats of the first token (position 0 if none)"),
        Depends((1, 0), "head 0.0", ["first:*"], first_from,
                description="(c) head 1.0's query reads what head 0.0 wrote into first:* (patched and zeroed)"),
    ],
    inputs=Inputs(list("abcd"), min_len=1, max_len=N_CTX, families=[Uniform(), Copies(tokens=list("abcd"))]),
    examples=["abcab", "aaaa", "abcdbcd", "dcbadcba"],
    sharpness=["s"],
    source="A Mathematical Framework for Transformer Circuits (Elhage et al. 2021): Q-, K- and V-composition",
)

# ── your answer ──────────────────────────────────────────────────────────────────────────
# Head 0.0: W_V0 (4, 9), W_O0 (9, 4). Head 1.0: W_Q1, W_K1 (d_head, 9), d_head of your choice;
# multiply W_Q1 by s and bind s in params.
W_V0 = FILL_ME_IN("(4, 9)")
W_O0 = FILL_ME_IN("(9, 4)")
W_Q1 = FILL_ME_IN("(d_head, 9)")
W_K1 = FILL_ME_IN("(d_head, 9)")
