"""Puzzle 19 · Balanced parentheses (Dyck-1) with frac_prevs  (adapted from tracr's make_shuffle_dyck)

Chapter: Algorithms from RASP / tracr. A string of ( and ) is balanced when its running
balance (+1 for each (, −1 for each )) never drops below zero and ends at zero. tracr's
`make_shuffle_dyck` (here with one pair of brackets) builds this check from uniform
attention, its `frac_prevs`: a head that attends evenly to positions 0..i averages what it
reads there, so it writes the balance as a *fraction*, (opens − closes) / (i + 1). MLPs then
make decisions from such fractions. tracr's program is non-causal: whether the balance went
negative anywhere is read by a head attending to every position of the whole string, and
whether it ends at zero by a head reading the last one, so every position gets the one
verdict on the whole string. Adapted here to a causal model: the same steps, read over each
prefix only, give a verdict for every prefix of the input. Build that whole program.

Tokens ( and ); no BOS. The residual stream (d_model = 7):

              (   )
    open      1   0
    close     0   1
    one       1   1
    bal, neg, ever, balanced    0 (free: your layers write them)

The model is two layers, each a head with a fixed uniform pattern (position i attends with
weight 1/(i + 1) to each of 0..i) followed by a ReLU MLP. Write four stages; at every position
i each writes its own direction, within 0.01, and nothing at all into any other: the rows of
its W_O or W_out for them must be 0 (any entry above 10⁻⁹ there is refused):

  head 0.0 (W_V0 1 × 7, W_O0 7 × 1)   writes  bal  = (opens − closes in 0..i) / (i + 1);
  MLP 0 (W_in0 d × 7, W_out0 7 × d)   writes  neg  = 1 if bal < 0 else 0;
  head 1.0 (W_V1 1 × 7, W_O1 7 × 1)   writes  ever = the fraction of prefixes 0..j, j ≤ i, with neg = 1;
  MLP 1 (W_in1 d × 7, W_out1 7 × d)   writes  balanced = 1 if the prefix 0..i is balanced else 0.

for every string of 1 to 12 brackets (all 8,190 of them). Each stage reads what the ones
before it wrote (the residual stream adds them up), and only that, as checked: MLP 0 reads
bal (and one), head 1.0's values neg, MLP 1 bal and ever (and one). A negative balance is at most −1/(i + 1), which gets
small as i grows: your MLPs must tell it from zero at every length up to 12. The margin then
searches longer inputs, to show how far your slopes carry.

Worked example, "())(":

    position  token   bal     neg   ever    balanced
    0         (       1       0     0       0
    1         )       0       0     0       1
    2         )       −1/3    1     1/3     0
    3         (       0       0     1/4     0        (back to zero, but it went below)
"""

from circuits import (
    Basis, blank, Head, HeadOutput, Inputs, Layer, MLP, MLPOut, MLPOutput, Model, Output,
    Puzzle, Runs, Uniform, Vocab,
)
from circuits import FILL_ME_IN  # noqa: F401  (marks an unanswered puzzle)

# ── givens ───────────────────────────────────────────────────────────────────────────────
vocab = Vocab.chars_of("()")
resid = Basis(["open", "close", "one", "bal", "neg", "ever", "balanced"])  # d_model = 7
W_E = blank(resid, vocab.tokens)  # [7, 2]
W_E["open", "("] = W_E["close", ")"] = 1
W_E["one", "("] = W_E["one", ")"] = 1


def dyck(brackets: list[str]) -> list[dict[str, float]]:
    """The program, in plain Python: each stage's value at each position."""
    out, depth, negatives = [], 0, 0
    for i, b in enumerate(brackets):
        depth += 1 if b == "(" else -1
        negatives += depth < 0
        out.append({"bal": depth / (i + 1), "neg": float(depth < 0), "ever": negatives / (i + 1),
                    "balanced": float(depth == 0 and negatives == 0)})
    return out


def writes(direction: str):
    """The spec of one stage: `direction` holds the program's value, every other direction 0."""
    def spec(brackets: list[str]) -> list[list[float]]:
        return [[row[direction] if label == direction else 0.0 for label in resid.labels] for row in dyck(brackets)]
    spec.__name__ = f"writes_{direction}"
    return spec


def build(answer) -> Model:
    return Model(vocab, W_E, name="balanced_parens", params=answer.params, layers=[
        Layer(heads=[Head(pattern="uniform", W_V=answer.W_V0, W_O=answer.W_O0)],
              mlp=MLP(W_in=answer.W_in0, W_out=answer.W_out0)),
        Layer(heads=[Head(pattern="uniform", W_V=answer.W_V1, W_O=answer.W_O1)],
              mlp=MLP(W_in=answer.W_in1, W_out=answer.W_out1)),
    ])


puzzle = Puzzle(
    number=19,
    name="balanced_parens",
    title="Balanced parentheses (Dyck-1) with frac_prevs",
    answer=["W_V0", "W_O0", "W_in0", "W_out0", "W_V1", "W_O1", "W_in1", "W_out1"],
    build=build,
    targets=[
        Output(HeadOutput(0, 0), writes("bal"), tol=0.01,
               description="head 0.0 writes bal = (opens − closes) / (i + 1) (±0.01) and nothing else"),
        MLPOutput(MLPOut(0), writes("neg"), tol=0.01,
                  description="MLP 0 writes neg = 1 where bal < 0, else 0 (±0.01), and nothing else"),
        Output(HeadOutput(1, 0), writes("ever"), tol=0.01,
               description="head 1.0 writes ever = the fraction of prefixes so far with neg = 1 (±0.01), nothing else"),
        MLPOutput(MLPOut(1), writes("balanced"), tol=0.01,
                  description="MLP 1 writes balanced = 1 where the prefix is balanced, else 0 (±0.01), nothing else"),
    ],
    inputs=Inputs(vocab.tokens, min_len=1, max_len=12, n_random=2000,
                  families=[Uniform(), Runs({"open": "(", "close": ")"}, max_runs=4)]),
    examples=["())(", "(())", "()()", ")("],
    source="tracr (Lindner et al. 2023), lib.make_shuffle_dyck with one pair, built on make_frac_prevs",
)

# ── your answer ──────────────────────────────────────────────────────────────────────────
# Stage by stage; L = 20 is the step's slope (holds to 20 brackets).
#        open close one  bal  neg ever balanced
W_V0 = [[ 1,   -1,   0,   0,   0,   0,   0]]
W_O0 = [[0], [0], [0], [1], [0], [0], [0]]          # into bal
W_in0 = [[0,    0,   0, -20,   0,   0,   0],         # relu(−20·bal)
         [0,    0,  -1, -20,   0,   0,   0]]         # relu(−20·bal − 1)
W_out0 = [[0, 0], [0, 0], [0, 0], [0, 0], [1, -1], [0, 0], [0, 0]]   # neg = the difference
W_V1 = [[ 0,    0,   0,   0,   1,   0,   0]]
W_O1 = [[0], [0], [0], [0], [0], [1], [0]]          # into ever
W_in1 = [[0,    0,   1, -20,   0, -420,  0]]         # relu(1 − 20·bal − 420·ever)
W_out1 = [[0], [0], [0], [0], [0], [0], [1]]        # into balanced


# ── stub: what `circuits reset` restores below the answer line ─────────────────────────
# # Shapes: W_V0, W_V1 (1, 7); W_O0, W_O1 (7, 1); W_in0, W_in1 (d_mlp, 7); W_out0, W_out1 (7, d_mlp).
# # Columns (and W_O/W_out rows) in the order open, close, one, bal, neg, ever, balanced.
# W_V0 = FILL_ME_IN("(1, 7)")
# W_O0 = FILL_ME_IN("(7, 1)")
# W_in0 = FILL_ME_IN("(d_mlp, 7)")
# W_out0 = FILL_ME_IN("(7, d_mlp)")
# W_V1 = FILL_ME_IN("(1, 7)")
# W_O1 = FILL_ME_IN("(7, 1)")
# W_in1 = FILL_ME_IN("(d_mlp, 7)")
# W_out1 = FILL_ME_IN("(7, d_mlp)")
