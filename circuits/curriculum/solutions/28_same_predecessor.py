"""Puzzle 28 · Challenge: attend to what followed your predecessor before

Challenge for the chapter on composition (puzzles 14–15). Puzzle 15 composed two heads in
one way; this behaviour needs a composition the chapter did not walk through. The worksheet
gives the behaviour, the givens and the constraints; the mechanism is yours.

Letters a, b, c, d after a BOS token. Each letter has a one-hot direction tok:a … tok:d, BOS
has bos, and the position embedding is one-hot, pos:0 … pos:10 (n_ctx = 11, BOS included).
Four directions start empty, prev:a … prev:d (d_model = 4 + 1 + 11 + 4 = 20).

  head 0.0  has a given pattern: each position attends to the previous one (BOS to itself).
            Write its OV circuit, W_V0 (4 × 20) and W_O0 (20 × 4); it may write only into
            prev:*.
  head 1.0  write W_Q1 and W_K1 (d_head × 20, d_head of your choice); raw dot-product scores,
            causal mask. Its value is given and writes nothing.

A letter's predecessor is the letter just before it. Head 1.0, at every letter whose
predecessor is x, must put ≥ 0.9 of its attention, together, on the earlier letters whose
predecessor is also x: the letters that followed an earlier copy of x. Where there are none
(and at the first letter, whose predecessor is BOS), it attends to BOS (≥ 0.9). This holds
for every string of 1 to 10 letters after BOS, the whole context. Multiply W_Q1 by a
sharpness symbol `s`, bound in `params`.

The predecessors must come from head 0.0, and this is checked by intervention (activation
patching): with prev:* taken from the run on another string of the same length, head 1.0
must attend as that string's predecessors say (≥ 0.9); with prev:* zeroed, it must lose
every target but BOS.

The behaviour, for "aabab" (0 BOS, 1 a, 2 a, 3 b, 4 a, 5 b):

    query    predecessor    head 1.0 attends to
    1 a      BOS            0 BOS
    2 a      1 a            0 BOS    (2 itself follows an a, but it is not earlier)
    3 b      2 a            2 a      (it followed the a at 1)
    4 a      3 b            0 BOS
    5 b      4 a            2 a, 3 b (together)

An induction head (puzzle 07) asks for the letters whose predecessor is the query's own
letter: at 5 b it would attend to 4 a, which followed the b at 3. This head asks for the
query's predecessor instead.
"""

import sympy

from circuits import Attention, Basis, blank, Copies, Depends, Head, Inputs, Model, Puzzle, Uniform, Vocab
from circuits import FILL_ME_IN  # noqa: F401  (marks an unanswered puzzle)

# ── givens ───────────────────────────────────────────────────────────────────────────────
TOKENS = "abcd"
N_CTX = 11  # BOS and up to 10 letters
vocab = Vocab.chars_of(TOKENS, bos="<bos>")
CONTENT = [f"tok:{t}" for t in TOKENS]
POS = [f"pos:{i}" for i in range(N_CTX)]
PREV = [f"prev:{t}" for t in TOKENS]
resid = Basis(CONTENT + ["bos"] + POS + PREV)  # d_model = 20

W_E = blank(resid, vocab.tokens)  # [20, 5]: tok:t is 1 for letter t, bos for BOS
W_E["bos", "<bos>"] = 1
for t in TOKENS:
    W_E[f"tok:{t}", t] = 1
W_pos = blank(resid, N_CTX)  # [20, 11]: pos:i is 1 at position i
for i in range(N_CTX):
    W_pos[f"pos:{i}", i] = 1
s = sympy.Symbol("s")  # the sharpness


def same_predecessor(letters: list[str]) -> list[list[int]]:
    """The target, in plain Python (letter indices, BOS is −1): the earlier letters whose predecessor is the
    query's predecessor, else BOS. The first letter's predecessor is BOS: it attends to BOS."""
    return [[k for k in range(1, q) if letters[k - 1] == letters[q - 1]] or [-1] if q else [-1]
            for q in range(len(letters))]


def prev_from(base: list[str], source: list[str]) -> list[list[int]]:
    """Head 1.0 with head 0.0's prev:* taken from `source`: the predecessors it reads are source's."""
    return same_predecessor(source)


def build(answer) -> Model:
    return Model(vocab, W_E, W_pos=W_pos, params=answer.params, name="same_predecessor", layers=[
        [Head(W_V=answer.W_V0, W_O=answer.W_O0, pattern="previous")],
        [Head(W_Q=answer.W_Q1, W_K=answer.W_K1, W_V=[[0] * len(resid)])],
    ])


puzzle = Puzzle(
    number=28,
    name="same_predecessor",
    title="Challenge: attend to what followed your predecessor before",
    answer=["W_V0", "W_O0", "W_Q1", "W_K1"],
    build=build,
    targets=[Attention(1, 0, same_predecessor, per_input=True, min_mass=0.9,
                       description="head 1.0 puts ≥ 0.9 on the earlier letters with the query's predecessor "
                                   "(BOS if none)"),
             Depends((1, 0), "head 0.0", ["prev:*"], prev_from,
                     description="head 1.0 reads the predecessors head 0.0 wrote into prev:* (patched and zeroed)")],
    inputs=Inputs(list(TOKENS), min_len=1, max_len=N_CTX - 1,
                  families=[Uniform(), Copies(tokens=list(TOKENS))]),
    examples=["aabab", "abcabca", "aaaaaaaaaa", "dcbadcbadc"],
    sharpness=["s"],
    writes={"head 0.0": ["prev:*"], "head 1.0": []},
    reads={},  # the mechanism is yours: each matrix may read any direction
    source="issue 28: a challenge whose mechanism the composition chapter did not walk through",
)

# ── your answer ──────────────────────────────────────────────────────────────────────────
# Head 0.0: the previous letter, copied into prev.
W_V0 = blank(4, resid)
W_O0 = blank(resid, 4)
for k, t in enumerate(TOKENS):
    W_V0[k, f"tok:{t}"] = 1
    W_O0[f"prev:{t}", k] = 1

# Head 1.0. Rows 0–3: "my predecessor is x" against "yours is x". Row 4: every query against
# BOS, at half a match. Rows 5–15: a query against its own position, −1: the query itself,
# which always matches, falls below BOS.
W_Q1 = blank(5 + N_CTX, resid)
W_K1 = blank(5 + N_CTX, resid)
for k, t in enumerate(TOKENS):
    W_Q1[k, f"prev:{t}"] = s
    W_K1[k, f"prev:{t}"] = 1
W_K1[4, "bos"] = 1
for i in range(N_CTX):
    W_Q1[4, f"pos:{i}"] = s / 2
    W_Q1[5 + i, f"pos:{i}"] = s
    W_K1[5 + i, f"pos:{i}"] = -1

params = {"s": 20}


# ── stub: what `circuits reset` restores below the answer line ─────────────────────────
# # Head 0.0: W_V0 (4, 20), W_O0 (20, 4). Head 1.0: W_Q1, W_K1 (d_head, 20), d_head of your choice;
# # multiply W_Q1 by s and bind s in params. blank(2, resid) gives a zero matrix to fill by name.
# W_V0 = FILL_ME_IN("(4, 20)")
# W_O0 = FILL_ME_IN("(20, 4)")
# W_Q1 = FILL_ME_IN("(d_head, 20)")
# W_K1 = FILL_ME_IN("(d_head, 20)")
