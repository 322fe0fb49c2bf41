"""Puzzle 20 · Find the minimum: a head that attends to the smallest token   (adapted from tracr's make_sort)

Chapter: Algorithms from RASP / tracr. Sorting starts with a head that can find the
smallest element. Here the tokens are digits whose embedding holds their *value*. Two
copies of the smallest digit must not split the attention: as in tracr's `make_sort`, a
tie goes to one of them, here the earliest copy.

What is adapted: tracr compiles sort non-causally, and without a head like this one: a
SelectorWidth counts, for each key, how many keys are smaller (its place in the sorted
order), and an Aggregate then moves each token to its place. Here a causal head finds the
smallest digit so far directly, with make_sort's rule for ties.

Tokens 0 1 2 3 4; no BOS; n_ctx = 16. The residual stream (d_model = 3):

                    0  1  2  3  4          positions 0 1 2 … 15
    value           0  1  2  3  4          (W_E)
    one             1  1  1  1  1          (W_E)
    pos             0  0  0  0  0          i / 16   (W_pos: 0, 1/16, 2/16, … 15/16)

Write one head: W_Q, W_K (d_head × 3), scores raw dot products q·k with a causal mask, that
puts ≥ 0.9 of its attention, at every position i, on the earliest copy of the smallest digit
among positions 0..i, for strings of 1 to 16 digits, the whole context (checked on every
string of 1 to 6 digits and on random strings of up to 16). (Its values are given: W_V reads
value, so its result is the minimum.) Multiply W_Q by a sharpness symbol `s`, bound in
`params`.

Worked example, "2130":

    query        smallest so far   its earliest copy (the target key)
    0 '2'        2                 0
    1 '1'        1                 1
    2 '3'        1                 1
    3 '0'        0                 3

and on "1010" the query at 3 must attend to key 1, not to key 3: the tie goes to the earlier
copy. Being early wins nothing else: on "1222222222220" the last query must attend to the
'0' at 12, however far back the '1' at 0 is.
"""

import sympy

from circuits import Attention, Basis, blank, Head, Inputs, Model, Puzzle, Runs, Uniform, Vocab
from circuits import FILL_ME_IN  # noqa: F401  (marks an unanswered puzzle)

# ── givens ───────────────────────────────────────────────────────────────────────────────
DIGITS = "01234"
N_CTX = 16
vocab = Vocab.chars_of(DIGITS)
resid = Basis(["value", "one", "pos"])  # d_model = 3
W_E = blank(resid, vocab.tokens)  # [3, 5]
for d in DIGITS:
    W_E["value", d], W_E["one", d] = int(d), 1
W_pos = blank(resid, N_CTX)  # [3, 16]
for i in range(N_CTX):
    W_pos["pos", i] = sympy.Rational(i, N_CTX)
W_V = [[1, 0, 0]]  # given: the head's result is the value it attends to
s = sympy.Symbol("s")  # the sharpness


def earliest_min(digits: list[str]) -> list[int]:
    """The target, in plain Python: at each position, the earliest position holding the smallest digit so far."""
    out = []
    for i in range(len(digits)):
        prefix = digits[: i + 1]
        out.append(prefix.index(min(prefix)))
    return out


def build(answer) -> Model:
    return Model(vocab, W_E, W_pos=W_pos, layers=[[Head(W_Q=answer.W_Q, W_K=answer.W_K, W_V=W_V)]],
                 name="find_min", params=answer.params)


puzzle = Puzzle(
    number=20,
    name="find_min",
    title="Find the minimum: a head that attends to the smallest token",
    answer=["W_Q", "W_K"],
    build=build,
    targets=[Attention(0, 0, earliest_min, per_input=True, min_mass=0.9,
                       description="head 0.0 puts ≥ 0.9 of its attention on the earliest copy of the smallest digit so far")],
    inputs=Inputs(list(DIGITS), min_len=1, max_len=N_CTX,
                  families=[Uniform(), Runs({"0": "0", "1": "1", "2": "2", "3": "3", "4": "4"})]),
    examples=["2130", "1010", "432101234", "444444444440"],
    sharpness=["s"],
    source="RASP (Weiss et al. 2021), sort; tracr (Lindner et al. 2023), make_sort (its tie-break)",
)

# ── your answer ──────────────────────────────────────────────────────────────────────────
# W_Q and W_K: (d_head, 3), d_head of your choice; write W_Q with the symbol s.
W_Q = FILL_ME_IN("(d_head, 3)")
W_K = FILL_ME_IN("(d_head, 3)")
