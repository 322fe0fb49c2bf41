"""Puzzle 10 · Has this token appeared before?             (from TransformerLens's head detector, read out)

Puzzle 09's head knew where the earlier copies were; here the model must *say* whether
there is one, as a number in the residual stream that later layers can read:

    seen ≈ 1   at a token that appeared earlier in the string,
    seen ≈ 0   at a token seen for the first time,

within 0.1, at every position of a string of 1 to 12 tokens after BOS (checked on every
string of 1 to 6 tokens and on random strings of up to 12).

The model (d_model = 10). Every input starts with BOS. Tokens a b c d have one-hot content
directions tok:a … tok:d; BOS has its own direction, bos; prev:a … prev:d and seen start
empty. There are no positions this time. Layer 0 is given: a previous-token head (fixed
pattern: position n attends to n − 1, BOS to itself) that copies tok:* into prev:*, so
after it, position n holds "I am t" in tok:t and "the token before me was u" in prev:u.

Write layer 1's head, head 1.0 (scores are raw dot products, causal mask):

  W_Q, W_K (d_head × 10)  decide where it looks;
  W_V (1 × 10), W_O (10 × 1)  decide what it writes into seen.

Multiply W_Q by a sharpness symbol `s`, bound in `params`.

Where it looks is checked too, by intervention (activation patching): head 1.0 must find
what it looks for through what layer 0 wrote into prev:*. With prev:* taken from the run
on another string of the same length, its attention (≥ 0.9) must move to where that
string's prev:* leads it; with prev:* zeroed, it must lose its target.

Worked examples (the target; nothing is asked at BOS):

    "abca"      position   1 a   2 b   3 c   4 a
                seen       0     0     0     1
    "aaaa"      position   1 a   2 a   3 a   4 a
                seen       0     1     1     1
    "abcdabcd"  position   1 a   2 b   3 c   4 d   5 a   6 b   7 c   8 d
                seen       0     0     0     0     1     1     1     1
"""

import sympy

from circuits import (
    Basis, blank, Copies, Depends, Head, Inputs, Model, Output, Puzzle, Residual, Uniform, Vocab,
)
from circuits import FILL_ME_IN  # noqa: F401  (marks an unanswered puzzle)

# ── givens ───────────────────────────────────────────────────────────────────────────────
vocab = Vocab.chars_of("abcd", bos="<bos>")
CONTENT = [f"tok:{t}" for t in "abcd"]
PREV = [f"prev:{t}" for t in "abcd"]
resid = Basis(CONTENT + ["bos"] + PREV + ["seen"])  # d_model = 10

#            <bos> a  b  c  d
W_E = blank(resid, vocab.tokens)  # [10, 5]: tok:t is 1 for token t, bos is 1 for BOS
W_E["bos", "<bos>"] = 1
for t in "abcd":
    W_E[f"tok:{t}", t] = 1

# Layer 0, given: the previous-token head. W_V0 reads the content, W_O0 writes it into prev.
W_V0 = blank(4, resid)  # [4, 10]
W_O0 = blank(resid, 4)  # [10, 4]
for k, t in enumerate("abcd"):
    W_V0[k, f"tok:{t}"] = 1
    W_O0[f"prev:{t}", k] = 1
s = sympy.Symbol("s")  # the sharpness


def seen_before(tokens: list[str]) -> list[int]:
    """The target, in plain Python: 1 where the token appeared earlier in the string, else 0."""
    return [1 if t in tokens[:i] else 0 for i, t in enumerate(tokens)]


def prev_from(base: list[str], source: list[str]) -> list[object]:
    """Head 1.0 with layer 0's prev:* taken from `source`: the keys k whose prev, source[k − 1], is the query's
    token, else BOS (−1)."""
    return [[k for k in range(1, q + 1) if source[k - 1] == t] or -1 for q, t in enumerate(base)]


def build(answer) -> Model:
    return Model(vocab, W_E, residual=resid, params=answer.params, name="seen_before", layers=[
        [Head(W_V=W_V0, W_O=W_O0, pattern="previous")],
        [Head(W_Q=answer.W_Q, W_K=answer.W_K, W_V=answer.W_V, W_O=answer.W_O)],
    ])


puzzle = Puzzle(
    number=10,
    name="seen_before",
    title="Has this token appeared before?",
    answer=["W_Q", "W_K", "W_V", "W_O"],
    build=build,
    targets=[
        Output(Residual(("seen",)), seen_before, tol=0.1,
               description="the final residual's seen is 1 where the token appeared earlier, 0 where it is new (±0.1)"),
        Depends((1, 0), "head 0.0", ["prev:*"], prev_from, min_mass=0.9,
                description="head 1.0 looks where layer 0's prev:* points (patched and zeroed)"),
    ],
    inputs=Inputs(list("abcd"), min_len=1, max_len=12, families=[Uniform(), Copies(tokens=list("abcd"))]),
    examples=["abca", "aaaa", "abcdabcd", "dcbaabcd"],
    sharpness=["s"],
    source="TransformerLens, head detector: duplicate_token_head; the readout, as later heads consume it",
)

# ── your answer ──────────────────────────────────────────────────────────────────────────
# W_Q, W_K: (d_head, 10), d_head of your choice; multiply W_Q by s and bind s in params.
# W_V: (1, 10). W_O: (10, 1).
W_Q = FILL_ME_IN("(d_head, 10)")
W_K = FILL_ME_IN("(d_head, 10)")
W_V = FILL_ME_IN("(1, 10)")
W_O = FILL_ME_IN("(10, 1)")
