"""Puzzle 24 · Challenge: attend to every letter of the other kind

Challenge for the chapter on attention basics (puzzles 09–10). Puzzle 09's head attended to
the copies of its own token; this one must attend to what it is not. The worksheet gives the
behaviour, the givens and the constraints; the mechanism is yours.

Letters a … z after a BOS token; each letter is a vowel or a consonant (d_model = 3):

              <bos>  a  b  c  …  z
    vowel       0    1  0  0  …  0
    consonant   0    0  1  1  …  1
    bos         1    0  0  0  …  0

Write one head, W_Q and W_K (d_head × 3, d_head of your choice), raw dot-product scores with
a causal mask, so that every letter splits its attention evenly over the earlier letters of
the other kind (a vowel over the consonants before it, a consonant over the vowels before
it): each of those k keys gets ≥ 0.99 / k. A letter with none before it attends to BOS
(≥ 0.9). For strings of 1 to 16 letters after BOS: checked on every string of 1 to 3 letters
and on random strings of up to 16. Multiply W_Q by a sharpness symbol `s`, bound in `params`.

The behaviour, for "bacde" read as 0 BOS, 1 b, 2 a, 3 c, 4 d, 5 e:

    query    keys it attends to, evenly
    1 b      0 BOS
    2 a      1 b
    3 c      2 a
    4 d      2 a
    5 e      1 b, 3 c, 4 d

With a letter of the other kind before it, a query leaves (almost) nothing on BOS or on the
letters of its own kind; with none, its attention rests on BOS.
"""

import numpy as np
import sympy

from circuits import Attention, Basis, blank, Head, Inputs, Model, Puzzle, Runs, Uniform, Vocab
from circuits import FILL_ME_IN  # noqa: F401  (marks an unanswered puzzle)

# ── givens ───────────────────────────────────────────────────────────────────────────────
VOWELS = "aeiou"
LETTERS = "abcdefghijklmnopqrstuvwxyz"
vocab = Vocab.chars_of(LETTERS, bos="<bos>")
resid = Basis(["vowel", "consonant", "bos"])  # d_model = 3
W_E = blank(resid, vocab.tokens)  # [3, 27]
W_E["bos", "<bos>"] = 1
for letter in LETTERS:
    W_E["vowel" if letter in VOWELS else "consonant", letter] = 1
W_V = blank(1, resid)  # [1, 3], given: the result is the share of attention on vowels
W_V[0, "vowel"] = 1
s = sympy.Symbol("s")  # the sharpness


def other_kind(ids):  # token ids [b, T] (BOS at 0) -> [b, query, key]: the earlier letters of the other kind
    vowel_ids = [vocab.id(v) for v in VOWELS]
    bos = ids == vocab.id("<bos>")
    vowel = np.isin(ids, vowel_ids)
    letter = ~bos
    other = (vowel[:, :, None] != vowel[:, None, :]) & letter[:, :, None] & letter[:, None, :]
    return other & np.tri(ids.shape[1], k=-1, dtype=bool)


def bos_when_none(ids):  # [b, T] -> [b, T]: key 0 (BOS) for a letter with no earlier letter of the other kind
    none = ~other_kind(ids).any(-1) & (ids != vocab.id("<bos>"))
    return np.where(none, 0, -1)


def build(answer) -> Model:
    return Model(vocab, W_E, layers=[[Head(W_Q=answer.W_Q, W_K=answer.W_K, W_V=W_V)]], name="other_kind",
                 params=answer.params)


puzzle = Puzzle(
    number=24,
    name="other_kind",
    title="Challenge: attend to every letter of the other kind",
    answer=["W_Q", "W_K"],
    build=build,
    targets=[Attention(0, 0, other_kind, evenly=True, min_mass=0.99,
                       description="head 0.0 splits its attention evenly over the earlier letters of the other kind "
                                   "(each ≥ 0.99/k)"),
             Attention(0, 0, bos_when_none, min_mass=0.9,
                       description="a letter with no earlier letter of the other kind attends to BOS (≥ 0.9)")],
    inputs=Inputs(list(LETTERS), min_len=1, max_len=16,
                  families=[Uniform(), Runs({"vowels": VOWELS, "consonants": "bcdfghjklmnpqrstvwxyz"}, max_runs=4)]),
    examples=["bacde", "aaaa", "bbbbbbbbbbbbbbba"],
    sharpness=["s"],
    reads={},  # the mechanism is yours: each matrix may read any direction
    source="issue 28: a challenge whose mechanism the attention-basics chapter did not walk through",
)

# ── your answer ──────────────────────────────────────────────────────────────────────────
# W_Q, W_K: (d_head, 3), d_head of your choice; write W_Q with the symbol s.
W_Q = FILL_ME_IN("(d_head, 3)")
W_K = FILL_ME_IN("(d_head, 3)")
