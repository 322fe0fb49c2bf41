"""Puzzle 26 · Capstone: modular addition by Fourier features   (from Nanda et al. 2023, "Progress measures for grokking")

Capstone. Nanda, Chan, Lieberum, Smith & Steinhardt (2023) trained a one-layer transformer
to add modulo a prime and then read its weights: it had not learnt a table. It embeds a
number a as cos(w·a) and sin(w·a) for a few frequencies w = 2πk/p, brings a and b to one
position with attention, lets its MLP form the products of those features, and reads the
answer off with the angle-addition identities

    cos(w(a + b)) = cos wa · cos wb − sin wa · sin wb
    sin(w(a + b)) = sin wa · cos wb + cos wa · sin wb

and one more for the readout, a logit per answer c:

    cos(w(a + b − c)) = cos(w(a + b)) · cos wc + sin(w(a + b)) · sin wc,

largest exactly where c ≡ a + b (mod p). Build that model for p = 5 and one frequency,
w = 2π/5.

Tokens 0 1 2 3 4; an input is two of them, "a b", and after b the model predicts
(a + b) mod 5. The embedding and the attention are given (d_model = 7):

    token      0       1       2       3       4
    tok:cos  1.000   0.309  -0.809  -0.809   0.309     cos(w·t)
    tok:sin  0.000   0.951   0.588  -0.588  -0.951     sin(w·t)
    one      1       1       1       1       1
    prev:cos, prev:sin   written by the given head: the token before (a, at b's position)
    sum:cos, sum:sin     free, for your MLP

So at b's position the residual stream holds cos wb, sin wb (tok:), cos wa, sin wa (prev:)
and a 1 (one). Write the MLP (W_in, d_mlp × 7, and W_out, 7 × d_mlp, a ReLU between) and
the unembedding W_U (5 × 7), so that after every pair a, b the answer (a + b) mod 5 has
log-probability ≥ −0.1. Multiply W_U by a sharpness symbol `s`, bound in `params`: the
logits' gaps are s times what your features give. Checked on all 25 pairs.

Your MLP may not be a table either, and two more targets hold it to that. It has at most
24 hidden units (d_mlp ≤ 24), fewer than the 25 pairs. And it is checked alone, by
intervention, on inputs no token makes: with cos θ, sin θ in prev:, cos φ, sin φ in tok:
and 1 in one, for θ and φ every 3° around the circle (14,400 pairs, the tokens' own 25
among them), it must write cos(θ + φ) into sum:cos and sin(θ + φ) into sum:sin, within
0.5 in each. The identities hold at every angle; a table of the 25 pairs knows nothing
between them.

What fails, worked for a = 1, b = 2 (answer 3): the MLP writes nothing and W_U reads the
features it is given, W_U[c] = (cos wc, sin wc) on tok: and on prev: alike. At s = 1 the logit
of c is cos w(c − a) + cos w(c − b):

    c           0        1        2        3        4
    logit    -0.500    1.309    1.309   -0.500   -1.618      (top: 1 and 2, not 3)

No readout of a's features plus b's can add: summed over every a, b, its logit for
c = a + b is the same as for c = a + b + 1, so it cannot always win. Something must
multiply. A ReLU is not a product; find what a few ReLUs of sums of features can do.
"""

import numpy as np
import sympy

from circuits import (
    Basis, blank, Head, Inputs, Layer, MLP, MLPWidth, Model, NextToken, PatchedMLP, Puzzle, Uniform, Vocab,
)
from circuits import FILL_ME_IN  # noqa: F401  (marks an unanswered puzzle)

# ── givens ───────────────────────────────────────────────────────────────────────────────
P = 5
w = 2 * np.pi / P  # the one frequency, k = 1
vocab = Vocab([str(t) for t in range(P)])
resid = Basis(["tok:cos", "tok:sin", "one", "prev:cos", "prev:sin", "sum:cos", "sum:sin"])  # d_model = 7
W_E = blank(resid, vocab.tokens)  # [7, 5]
for t in range(P):
    W_E["tok:cos", str(t)], W_E["tok:sin", str(t)], W_E["one", str(t)] = np.cos(w * t), np.sin(w * t), 1

# The given head: a fixed previous-token pattern that copies tok:cos, tok:sin into prev:cos, prev:sin.
W_V0 = blank(2, resid)  # [2, 7]
W_O0 = blank(resid, 2)  # [7, 2]
for k, f in enumerate(("cos", "sin")):
    W_V0[k, f"tok:{f}"] = 1
    W_O0[f"prev:{f}", k] = 1
s = sympy.Symbol("s")  # the sharpness of the readout


def spec(tokens: list[str]) -> list[str | None]:
    """The target, in plain Python: after b, the token (a + b) mod 5; nothing is asked after a."""
    if len(tokens) != 2:
        return [None] * len(tokens)
    return [None, str((int(tokens[0]) + int(tokens[1])) % P)]


def between() -> list[tuple[str, dict, dict]]:
    """The intervention's cases: a's features at angle θ (prev:), b's at φ (tok:), every 3°; wanted: the angle θ + φ."""
    out = []
    for θ in range(0, 360, 3):  # 72°, the tokens' step, is a multiple of 3°: their own angles are among these
        for φ in range(0, 360, 3):
            a, b = np.radians(θ), np.radians(φ)
            fed = {"prev:cos": np.cos(a), "prev:sin": np.sin(a), "tok:cos": np.cos(b), "tok:sin": np.sin(b), "one": 1}
            out.append((f"θ = {θ}°, φ = {φ}°", fed, {"sum:cos": np.cos(a + b), "sum:sin": np.sin(a + b)}))
    return out


def build(answer) -> Model:
    head = Head(W_V=W_V0, W_O=W_O0, pattern="previous")
    return Model(vocab, W_E, layers=[Layer(heads=[head], mlp=MLP(W_in=answer.W_in, W_out=answer.W_out))],
                 W_U=answer.W_U, n_ctx=2, name="modular_addition", params=answer.params)


puzzle = Puzzle(
    number=26,
    name="modular_addition",
    title="Capstone: modular addition by Fourier features",
    answer=["W_in", "W_out", "W_U"],
    build=build,
    targets=[NextToken(spec, lo=-0.1,
                       description="after every pair a, b the answer (a + b) mod 5 has log-prob ≥ −0.1",
                       advice="To see where the sum goes wrong, compare what your MLP writes into sum:cos and "
                              "sum:sin for this pair (circuits show) with cos(w(a + b)) and sin(w(a + b)), then "
                              "W_U's rows for the expected answer and for your top guess"),
             MLPWidth("no table of the pairs: your MLP has at most 24 hidden units, fewer than the 25 pairs",
                      most=24),
             PatchedMLP("your MLP adds any two angles, not only the tokens': fed cos θ, sin θ in prev: and cos φ, "
                        "sin φ in tok:, it writes cos(θ + φ), sin(θ + φ) into sum:cos, sum:sin (±0.5)",
                        cases=between, tol=0.5)],
    inputs=Inputs(vocab.tokens, min_len=2, max_len=2, families=[Uniform()]),
    examples=["12", "34", "00", "44"],
    sharpness=["s"],
    reads={"head 0.0 W_V": ["tok:*"], "mlp 0 W_in": ["tok:*", "prev:*", "one"], "W_U": ["sum:*", "one"]},
    source="Nanda, Chan, Lieberum, Smith & Steinhardt (2023), Progress measures for grokking via mechanistic "
           "interpretability",
)

# ── your answer ──────────────────────────────────────────────────────────────────────────
# |x + y| − |x − y| = 2·sign(xy)·min(|x|, |y|) stands in for 2xy, and |z| = relu(z) + relu(−z).
# Each product in the identities becomes four units; sum:cos and sum:sin get the approximate
# cos(w(a + b)) and sin(w(a + b)), close enough that cos(w(a + b − c)) still peaks at the answer.
PRODUCTS = [  # (x, y, sign, into): sign · x·y goes into `into`
    ("prev:cos", "tok:cos", +1, "sum:cos"), ("prev:sin", "tok:sin", -1, "sum:cos"),
    ("prev:sin", "tok:cos", +1, "sum:sin"), ("prev:cos", "tok:sin", +1, "sum:sin"),
]
W_in = blank(4 * len(PRODUCTS), resid)  # [16, 7]
W_out = blank(resid, 4 * len(PRODUCTS))  # [7, 16]
for n, (x, y, sign, into) in enumerate(PRODUCTS):
    for m, (sy, sz) in enumerate(((1, 1), (1, -1), (-1, -1), (-1, 1))):  # relu(±(x + y)), relu(±(x − y))
        unit = 4 * n + m
        W_in[unit, x], W_in[unit, y] = sy, sy * sz
        W_out[into, unit] = sign * sz / 2  # + for |x + y|, − for |x − y|
# W_U's row c reads (cos wc, sin wc) from sum:cos, sum:sin, times s: its logit is ≈ s·cos(w(a + b − c)).
W_U = [[0, 0, 0, 0, 0, s * sympy.cos(2 * sympy.pi * c / P), s * sympy.sin(2 * sympy.pi * c / P)] for c in range(P)]
params = {"s": 10}


# ── stub: what `circuits reset` restores below the answer line ─────────────────────────
# # W_in: (d_mlp, 7), d_mlp ≤ 24.  W_out: (7, d_mlp).  W_U: (5, 7), written with s.
# # blank(d_mlp, resid) and blank(resid, d_mlp) give zero matrices you can fill by name: W_in[0, "tok:cos"] = 1.
# W_in = FILL_ME_IN("(d_mlp, 7)")
# W_out = FILL_ME_IN("(7, d_mlp)")
# W_U = FILL_ME_IN("(5, 7)")
