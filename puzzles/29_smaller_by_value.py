"""Puzzle 29 · Challenge: count smaller digits given as numbers

Challenge for the chapter on RASP / tracr algorithms (puzzles 18–20). Puzzle 18 counted the
keys a selector picks, over tokens that each had a direction of their own; puzzle 20 read
digits as numbers. Here both at once: tracr's `make_sort` needs, for each token, how many
tokens are smaller (RASP's SelectorWidth of Select(tokens, tokens, <)), and here the digits
come as numbers. Causally: the smaller digits *before* each one. The worksheet gives the
behaviour, the givens and the constraints; the mechanism is yours.

Digits 0 … 4 after a BOS token. As in puzzle 20, a digit is carried by its value; five
directions start empty, yours to write (d_model = 3 + 5 = 8):

              <bos>  0  1  2  3  4
    value       0    0  1  2  3  4
    one         0    1  1  1  1  1
    bos         1    0  0  0  0  0
    free:0 … free:4      0 everywhere

The model has two layers:

  layer 0   an MLP: W_in (d_mlp × 8) and W_out (8 × d_mlp), d_mlp of your choice, a ReLU
            between. It may write only into free:* (any entry above 10⁻⁹ in W_out's rows
            value, one or bos is refused).
  layer 1   one head: W_Q and W_K (d_head × 8, d_head of your choice), raw dot-product
            scores with a causal mask. Its values are given (W_V reads bos), so its result
            is the share of its attention on BOS.

Head 1.0 must split its attention, at every digit, evenly over BOS and every earlier digit
*smaller* than itself: each of those n + 1 keys gets ≥ 0.99 / (n + 1). Its result is then
1 / (n + 1), as tracr's SelectorWidth makes it, and it must be within 0.001 of that. For
strings of 1 to 16 digits after BOS: checked on every string of 1 to 6 digits and on random
strings of up to 16. Multiply W_Q by a sharpness symbol `s`, bound in `params`.

The behaviour, for "20313" read as 0 BOS, 1 '2', 2 '0', 3 '3', 4 '1', 5 '3':

    query    keys it attends to, evenly       n    result
    1 '2'    0 BOS                            0    1
    2 '0'    0 BOS                            0    1
    3 '3'    0 BOS, 1 '2', 2 '0'              2    1/3
    4 '1'    0 BOS, 2 '0'                     1    1/2
    5 '3'    0 BOS, 1 '2', 2 '0', 4 '1'       3    1/4

Smaller means strictly smaller: the '3' at 5 does not count the '3' at 3, nor itself. Nothing
is asked at BOS itself.
"""

import numpy as np
import sympy

from circuits import (
    Attention, Basis, blank, Head, HeadZ, Inputs, Layer, MLP, Model, Output, Puzzle, Runs, Uniform, Vocab,
)
from circuits import FILL_ME_IN  # noqa: F401  (marks an unanswered puzzle)

# ── givens ───────────────────────────────────────────────────────────────────────────────
DIGITS = "01234"
vocab = Vocab.chars_of(DIGITS, bos="<bos>")
FREE = [f"free:{k}" for k in range(5)]
resid = Basis(["value", "one", "bos"] + FREE)  # d_model = 8
W_E = blank(resid, vocab.tokens)  # [8, 6]
W_E["bos", "<bos>"] = 1
for d in DIGITS:
    W_E["value", d], W_E["one", d] = int(d), 1
W_V = blank(1, resid)  # [1, 8], given: the result is the share of attention on BOS
W_V[0, "bos"] = 1
s = sympy.Symbol("s")  # the sharpness


def smaller_before(digits: list[str]) -> list[int]:
    """n at each digit, in plain Python: how many earlier digits are smaller than it."""
    return [sum(e < d for e in digits[:i]) for i, d in enumerate(digits)]


def spec(digits: list[str]) -> list[list[float]]:
    """The target result, in plain Python: 1 / (n + 1)."""
    return [[1 / (n + 1)] for n in smaller_before(digits)]


def spec_batched(digits):
    """The same as spec on a whole batch at once (for the checker's speed): digits [b, L] -> [b, L, 1]."""
    value = np.searchsorted(np.array(list(DIGITS)), digits)  # [b, L]: each digit's value
    earlier = np.tri(digits.shape[1], k=-1, dtype=bool)  # [query, key]: the keys before each query
    n = ((value[:, None, :] < value[:, :, None]) & earlier).sum(-1)  # [b, L]: the earlier smaller digits
    return (1 / (n + 1))[..., None]


def picked(ids):  # token ids [b, T] (BOS at 0) -> [b, query, key]: BOS and every earlier digit smaller than the query's
    value = np.array([DIGITS.find(t) for t in vocab.tokens])[ids]  # [b, T]: each digit's value, −1 for BOS
    digit = value >= 0
    smaller = (value[:, None, :] < value[:, :, None]) & digit[:, None, :]
    bos = np.arange(ids.shape[1]) == 0
    return (smaller | bos) & digit[:, :, None] & np.tri(ids.shape[1], dtype=bool)


def build(answer) -> Model:
    return Model(vocab, W_E, name="smaller_by_value", params=answer.params, layers=[
        Layer(mlp=MLP(W_in=answer.W_in, W_out=answer.W_out)),
        [Head(W_Q=answer.W_Q, W_K=answer.W_K, W_V=W_V)],
    ])


puzzle = Puzzle(
    number=29,
    name="smaller_by_value",
    title="Challenge: count smaller digits given as numbers",
    answer=["W_in", "W_out", "W_Q", "W_K"],
    build=build,
    targets=[Attention(1, 0, picked, evenly=True, min_mass=0.99,
                       description="head 1.0 splits its attention evenly over BOS and the earlier smaller digits "
                                   "(each ≥ 0.99/(n + 1))"),
             Output(HeadZ(1, 0), spec, tol=1e-3, batched=spec_batched,
                    description="head 1.0's result is 1/(n + 1), n = the earlier digits smaller than this one "
                                "(±0.001)")],
    inputs=Inputs(list(DIGITS), min_len=1, max_len=16,
                  families=[Uniform(), Runs({"0": "0", "1": "1", "2": "2", "3": "3", "4": "4"})]),
    examples=["20313", "0000", "43210", "01234", "4444444444444440"],
    sharpness=["s"],
    writes={"mlp 0": ["free:*"], "head 1.0": []},
    reads={},  # the mechanism is yours: each matrix may read any direction
    source="RASP (Weiss et al. 2021), SelectorWidth of a < selector; tracr (Lindner et al. 2023), make_sort",
)

# ── your answer ──────────────────────────────────────────────────────────────────────────
# W_in: (d_mlp, 8), d_mlp of your choice.  W_out: (8, d_mlp).
# W_Q, W_K: (d_head, 8), d_head of your choice; write W_Q with the symbol s.
# Columns (and W_out's rows) in the order value, one, bos, free:0 … free:4.
W_in = FILL_ME_IN("(d_mlp, 8)")
W_out = FILL_ME_IN("(8, d_mlp)")
W_Q = FILL_ME_IN("(d_head, 8)")
W_K = FILL_ME_IN("(d_head, 8)")
