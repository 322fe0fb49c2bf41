"""Puzzle 25 · Challenge: an MLP that tells whether two numbers are equal

Challenge for the MLP chapter (puzzles 16–17). There, a unit fired above a threshold. Here
no single threshold will do. The worksheet gives the behaviour, the givens and the
constraints; the mechanism is yours.

Each token is a pair of numbers 0 … 3, written "xy" (16 tokens, "00" to "33"), carried in
two residual directions with a constant direction `one`; the direction `eq` starts empty:

              00  01  02  03  10  11  …  33
    x          0   0   0   0   1   1  …   3
    y          0   1   2   3   0   1  …   3
    one        1   1   1   1   1   1  …   1
    eq         0   0   0   0   0   0  …   0

Write one MLP (no attention): W_in (d_mlp × 4) and W_out (4 × d_mlp), a ReLU between, that
at every position writes

    1 into eq if x = y, else 0      (within 0.1),

and nothing at all into x, y or one: their rows of W_out must be 0 (any entry above 10⁻⁹
there is refused). Checked on every string of 1 to 3 tokens and on random strings of up
to 8. The behaviour, for "00 12 22 31 33":

    token    00   12   22   31   33
    eq        1    0    1    0    1

A ReLU unit fires on one side of a line through the (x, y) grid. Which pairs lie on one
side of a line, alone? Not 11 or 22.
"""

from circuits import (
    Basis, blank, Inputs, Layer, MLP, MLPOut, MLPOutput, Model, Puzzle, Uniform, Vocab,
)
from circuits import FILL_ME_IN  # noqa: F401  (marks an unanswered puzzle)

# ── givens ───────────────────────────────────────────────────────────────────────────────
PAIRS = {f"{x}{y}": (x, y) for x in range(4) for y in range(4)}  # token -> (x, y)
vocab = Vocab(list(PAIRS))
resid = Basis(["x", "y", "one", "eq"])  # d_model = 4
W_E = blank(resid, vocab.tokens)  # [4, 16]
for t, (x, y) in PAIRS.items():
    W_E["x", t], W_E["y", t], W_E["one", t] = x, y, 1


def spec(tokens: list[str]) -> list[list[int]]:
    """The target, in plain Python: what the MLP writes into x, y, one, eq at each position."""
    return [[0, 0, 0, int(PAIRS[t][0] == PAIRS[t][1])] for t in tokens]


def build(answer) -> Model:
    return Model(vocab, W_E, layers=[Layer(mlp=MLP(W_in=answer.W_in, W_out=answer.W_out))], name="equal_mlp",
                 params=answer.params)


puzzle = Puzzle(
    number=25,
    name="equal_mlp",
    title="Challenge: an MLP that tells whether two numbers are equal",
    answer=["W_in", "W_out"],
    build=build,
    targets=[MLPOutput(MLPOut(0), spec, tol=0.1,
                       description="the MLP writes 1 into eq where x = y, else 0 (±0.1), and nothing into x, y, one")],
    inputs=Inputs(vocab.tokens, min_len=1, max_len=8, families=[Uniform()]),
    examples=["00 12 22 31 33", "11 10 01"],
    reads={},  # the mechanism is yours: each matrix may read any direction
    source="issue 28: a challenge whose mechanism the MLP chapter did not walk through",
)

# ── your answer ──────────────────────────────────────────────────────────────────────────
# eq = 1 − |x − y| + relu(|x − y| − 1): a bump that is 1 at x = y and flat 0 one step away.
#         x   y  one eq
W_in = [[ 0,  0,  1, 0],    # 1
        [ 1, -1,  0, 0],    # relu(x − y)
        [-1,  1,  0, 0],    # relu(y − x)
        [ 1, -1, -1, 0],    # relu(x − y − 1)
        [-1,  1, -1, 0]]    # relu(y − x − 1)
W_out = [[0,  0,  0,  0,  0],    # x
         [0,  0,  0,  0,  0],    # y
         [0,  0,  0,  0,  0],    # one
         [1, -1, -1,  1,  1]]    # eq


# ── stub: what `circuits reset` restores below the answer line ─────────────────────────
# # W_in: (d_mlp, 4), d_mlp of your choice.  W_out: (4, d_mlp).
# W_in = FILL_ME_IN("(d_mlp, 4)")
# W_out = FILL_ME_IN("(4, d_mlp)")
