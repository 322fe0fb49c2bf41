"""Puzzle 05 · A virtual head that looks two tokens back       (from Transformer Circuit Exercises, 1(a)–(d))

Two heads, one in each layer, both attend to the previous token (their patterns are
given: position i attends to i − 1, and position 0 to itself). The residual stream has
16 dimensions, named "0" … "15"; each token writes its 8 numbers into dimensions 0–7
(W_E below) and leaves 8–15 free. Heads have 4-dimensional values.

Write W_V (4 × 16) and W_O (16 × 4) of both heads so that, at every position i of every
string of 1 to 12 tokens, dimensions 8–15 of the final residual stream hold

  8–14   dimensions 0–6 of the previous token (position i − 1);
  15     dimension 0 of the token *two* back (position i − 2),

taking "previous" as the heads' given patterns do (position 0 is its own previous). Head 1
(0.0) may write only into 8–11 and head 2 (1.0) only into 12–15: each head's W_net = W_O W_V,
and the products the exercise asks you to expand, are checked exactly, with a 0 wherever
the behaviour above does not force an entry:

  W_net¹, W_net²,  W_net² · W_net¹  and  W_net² + W_net¹.

Neither head sees position i − 2: each looks one step back and no further.

Worked example, "abc" (the target, from `spec`). Dimensions 0–7 of a, b and c are

    a    2  −3   1  −1   2   3  −3   0
    b   −3  −3   2   0  −2  −3   3  −3
    c   (not needed: nothing attends to the last token)

and dimensions 8–15 of the final residual stream must be

    position 0 'a'    2  −3   1  −1   2   3  −3   2
    position 1 'b'    2  −3   1  −1   2   3  −3   2
    position 2 'c'   −3  −3   2   0  −2  −3   3   2

Position 2 holds b's dimensions 0–6 (the previous token) and, in 15, a's dimension 0
(the token two back); position 0 is its own previous, so "two back" is itself there too.
"""

import numpy as np

from circuits import Basis, Head, Inputs, Model, Output, Puzzle, Residual, Structure, Vocab
from circuits import FILL_ME_IN  # noqa: F401  (marks an unanswered puzzle)

# ── givens ───────────────────────────────────────────────────────────────────────────────
vocab = Vocab.chars_of("abcdefgh")
resid = Basis(16)  # directions "0" … "15"
W_E = np.zeros((16, 8), dtype=int)  # [d_model, n_vocab]: each token's numbers in dimensions 0–7
W_E[:8] = np.random.default_rng(3).integers(-3, 4, size=(8, 8))


EMBED = {t: W_E[:, vocab.id(t)].tolist() for t in vocab.tokens}  # each token's 16 numbers


def spec(tokens: list[str]) -> list[list[int]]:
    """The target, in plain Python: dimensions 8–15 of the final residual stream at each position."""
    x = [EMBED[t] for t in tokens]
    prev = lambda i: max(i - 1, 0)  # noqa: E731 - position 0 attends to itself
    return [[*x[prev(i)][0:4], *x[prev(i)][4:7], x[prev(prev(i))][0]] for i in range(len(tokens))]


def unit(rows_cols: list[tuple[int, int]]) -> np.ndarray:
    m = np.zeros((16, 16), dtype=int)
    for r, c in rows_cols:
        m[r, c] = 1
    return m


NET_1 = unit([(8, 0), (9, 1), (10, 2), (11, 3)])
NET_2 = unit([(12, 4), (13, 5), (14, 6), (15, 8)])


def structure(answer, model):
    one, two = model.head(0, 0).exact("W_OV", bind=True), model.head(1, 0).exact("W_OV", bind=True)
    return [("W_net¹ = W_O¹ W_V¹", one, NET_1),
            ("W_net² = W_O² W_V²", two, NET_2),
            ("two-token copy W_net² · W_net¹", two * one, NET_2 @ NET_1),
            ("one-token copy W_net² + W_net¹", two + one, NET_2 + NET_1)]


def build(answer) -> Model:
    return Model(vocab, W_E, residual=resid, params=answer.params, name="virtual_head", layers=[
        [Head(W_V=answer.W_V1, W_O=answer.W_O1, pattern="previous")],
        [Head(W_V=answer.W_V2, W_O=answer.W_O2, pattern="previous")],
    ])


puzzle = Puzzle(
    number=5,
    name="virtual_head",
    title="A virtual head that looks two tokens back",
    answer=["W_V1", "W_O1", "W_V2", "W_O2"],
    build=build,
    targets=[
        Output(Residual(tuple(str(d) for d in range(8, 16))), spec, tol=1e-9,
               description="dimensions 8–15 of the final residual stream hold the copies (±1e-9)"),
        Structure("W_net¹, W_net², W_net²·W_net¹ and W_net² + W_net¹ are exactly as specified", structure),
    ],
    inputs=Inputs(vocab.tokens, min_len=1, max_len=12),
    examples=["ab", "abcdefgh"],
    source="seed 003: Transformer Circuit Exercises, exercise 1",
)

# ── your answer ──────────────────────────────────────────────────────────────────────────
# W_V: 4 × 16 (rows: value dimensions; columns: residual dimensions 0–15); W_O: 16 × 4.
W_V1 = np.zeros((4, 16), dtype=int)
W_O1 = np.zeros((16, 4), dtype=int)
for k in range(4):
    W_V1[k, k] = 1  # read dimension k …
    W_O1[8 + k, k] = 1  # … and write it to 8 + k

W_V2 = np.zeros((4, 16), dtype=int)
W_O2 = np.zeros((16, 4), dtype=int)
for k, source in enumerate([4, 5, 6, 8]):  # three untouched dimensions, and one that head 1 wrote
    W_V2[k, source] = 1
    W_O2[12 + k, k] = 1


# ── stub: what `circuits reset` restores below the answer line ─────────────────────────
# # W_V: 4 × 16 (rows: value dimensions; columns: residual dimensions 0–15); W_O: 16 × 4.
# W_V1 = FILL_ME_IN("(4, 16)")
# W_O1 = FILL_ME_IN("(16, 4)")
# W_V2 = FILL_ME_IN("(4, 16)")
# W_O2 = FILL_ME_IN("(16, 4)")
