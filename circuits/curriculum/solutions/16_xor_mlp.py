"""Puzzle 16 · XOR with a ReLU MLP            (from Goodfellow, Bengio & Courville, Deep Learning, §6.1)

Chapter: MLPs. Attention moves information between positions; the MLP after it computes
with what one position holds. Its simplest task that no linear map can do is XOR.

Each token carries two features, x and y, and a constant direction `one`; the direction
`xor` starts empty:

              a  b  c  d
    x         0  0  1  1
    y         0  1  0  1
    one       1  1  1  1
    xor       0  0  0  0

Write one MLP (no attention): W_in (d_mlp × 4) and W_out (4 × d_mlp), with a ReLU between,
so that at every position it writes

    x XOR y   into xor      (within 0.1),

and nothing at all into x, y or one: their rows of W_out must be 0 (any entry above 10⁻⁹
there is refused). Checked on every string of 1 to 6 tokens and on random strings of up
to 8. The MLP reads the residual vector r at its position
and writes W_out · relu(W_in r); a row of W_in is one hidden unit, and the ReLU passes
only what is above zero, so a unit's weight on `one` sets its threshold.

Worked example, "abcd", with one hidden unit that adds the features, W_in = [[1, 1, 0, 0]]
and W_out's xor row = [1]:

    token   x  y   W_in r   relu   writes into xor   expected
    a       0  0     0       0          0               0
    b       0  1     1       1          1               1
    c       1  0     1       1          1               1
    d       1  1     2       2          2               0      ✗

One unit cannot do it: what x + y says at d must be taken back. (Goodfellow et al. solve
XOR with two ReLU units; find them.)
"""

from circuits import (
    Basis, blank, Inputs, Layer, MLP, MLPOut, MLPOutput, Model, Puzzle, Uniform, Vocab,
)
from circuits import FILL_ME_IN  # noqa: F401  (marks an unanswered puzzle)

# ── givens ───────────────────────────────────────────────────────────────────────────────
FEATURES = {"a": (0, 0), "b": (0, 1), "c": (1, 0), "d": (1, 1)}  # token -> (x, y)
vocab = Vocab.chars_of("abcd")
resid = Basis(["x", "y", "one", "xor"])  # d_model = 4
W_E = blank(resid, vocab.tokens)  # [4, 4]
for t, (x, y) in FEATURES.items():
    W_E["x", t], W_E["y", t], W_E["one", t] = x, y, 1


def spec(tokens: list[str]) -> list[list[int]]:
    """The target, in plain Python: what the MLP writes into x, y, one, xor at each position."""
    return [[0, 0, 0, FEATURES[t][0] ^ FEATURES[t][1]] for t in tokens]


def build(answer) -> Model:
    return Model(vocab, W_E, layers=[Layer(mlp=MLP(W_in=answer.W_in, W_out=answer.W_out))], name="xor_mlp",
                 params=answer.params)


puzzle = Puzzle(
    number=16,
    name="xor_mlp",
    title="XOR with a ReLU MLP",
    answer=["W_in", "W_out"],
    build=build,
    targets=[MLPOutput(MLPOut(0), spec, tol=0.1,
                       description="the MLP writes x XOR y into xor (±0.1) and nothing into x, y, one")],
    inputs=Inputs(vocab.tokens, min_len=1, max_len=8, families=[Uniform()]),
    examples=["abcd", "dcba"],
    source="Goodfellow, Bengio & Courville, Deep Learning (2016), §6.1 'Example: Learning XOR'",
)

# ── your answer ──────────────────────────────────────────────────────────────────────────
# W_in: (d_mlp, 4), d_mlp of your choice (2 is enough).  W_out: (4, d_mlp).
#         x   y  one xor
W_in = [[ 1,  1,  0,  0],    # unit 0: relu(x + y)
        [ 1,  1, -1,  0]]    # unit 1: relu(x + y − 1), on only when both are
W_out = [[0,  0],            # x
         [0,  0],            # y
         [0,  0],            # one
         [1, -2]]            # xor = unit 0 − 2 · unit 1


# ── stub: what `circuits reset` restores below the answer line ─────────────────────────
# # W_in: (d_mlp, 4), d_mlp of your choice (2 is enough).  W_out: (4, d_mlp).
# W_in = FILL_ME_IN("roughly 5 non-zero entries")
# W_out = FILL_ME_IN("roughly 2 non-zero entries")
