"""Puzzle 17 · An MLP as a key-value memory          (from Geva et al. 2021, "Transformer Feed-Forward Layers Are Key-Value Memories")

Chapter: MLPs. Geva et al. read an MLP as a memory: a pattern in its input (a *key*)
makes it add a stored *value* to the residual stream. Here you store four facts: a
two-token name recalls a city.

    Ada Lovelace → London    Alan Turing → London    Marie Curie → Warsaw    Albert Einstein → Ulm

Tokens are the eight names. The residual stream (d_model = 16) has the directions

    tok:Ada … tok:Einstein   which name this is (one-hot)
    prev:Ada … prev:Albert   which first name came just before (the given head writes it)
    one                      1 at every position
    city:London, city:Warsaw, city:Ulm   free, for your MLP

Layer 0's head is given: a previous-token head with a fixed pattern (position i attends
to i − 1) that copies a first name into prev:. Position 0 has no previous token and
attends to itself, so a first name at position 0 sees its own name in prev:, which
completes no fact. The MLP after it reads both.

Write the MLP: W_in (d_mlp × 16) and W_out (16 × d_mlp), a ReLU between, so that at every
position it writes 1 into the city of the fact that the previous and the current token
complete and 0 into the other cities (within 0.1 in each): 0 into every city where the
pair is not one of the four facts, even where only half of it matches ("Alan Lovelace",
"Marie Turing"). It writes nothing at all into tok:, prev: or one: their rows of W_out
must be 0 (any entry above 10⁻⁹ there is refused). Checked on every string of 1 to 4
names and on random strings of up to 8.

Worked examples (the target, from `spec`):

    "Alan Lovelace Ada Lovelace"
    position   0 Alan    1 Lovelace   2 Ada     3 Lovelace
    writes     nothing   nothing      nothing   city:London

    "Marie Curie Albert Einstein Alan Turing"
    position   0 Marie   1 Curie       2 Albert  3 Einstein  4 Alan    5 Turing
    writes     nothing   city:Warsaw   nothing   city:Ulm    nothing   city:London

A half match ("Alan Lovelace", at 1) writes 0 into every city, and a whole match 1, not
more (each within 0.1).
"""

from circuits import (
    Basis, blank, Head, Inputs, Layer, MLP, MLPOut, MLPOutput, Model, Puzzle, Uniform, Vocab,
)
from circuits import FILL_ME_IN  # noqa: F401  (marks an unanswered puzzle)

# ── givens ───────────────────────────────────────────────────────────────────────────────
FIRST = ["Ada", "Alan", "Marie", "Albert"]
LAST = ["Lovelace", "Turing", "Curie", "Einstein"]
FACTS = {("Ada", "Lovelace"): "London", ("Alan", "Turing"): "London",
         ("Marie", "Curie"): "Warsaw", ("Albert", "Einstein"): "Ulm"}
CITIES = ["London", "Warsaw", "Ulm"]
vocab = Vocab(FIRST + LAST)
resid = Basis([f"tok:{t}" for t in FIRST + LAST] + [f"prev:{t}" for t in FIRST] + ["one"]
              + [f"city:{c}" for c in CITIES])  # d_model = 16
W_E = blank(resid, vocab.tokens)  # [16, 8]: tok:x is 1 for name x; one is 1 everywhere
for t in vocab.tokens:
    W_E[f"tok:{t}", t] = W_E["one", t] = 1

# Layer 0's head, given: a fixed previous-token pattern; W_V0 reads a first name, W_O0 writes it into prev:.
W_V0 = blank(len(FIRST), resid)  # [4, 16]
W_O0 = blank(resid, len(FIRST))  # [16, 4]
for k, t in enumerate(FIRST):
    W_V0[k, f"tok:{t}"] = 1
    W_O0[f"prev:{t}", k] = 1


def spec(names: list[str]) -> list[list[int]]:
    """The target, in plain Python: what the MLP writes at each position (a one-hot city, or nothing)."""
    out = []
    for i, name in enumerate(names):
        city = FACTS.get((names[i - 1], name)) if i > 0 else None
        out.append([1 if label == f"city:{city}" else 0 for label in resid.labels])
    return out


def build(answer) -> Model:
    head = Head(W_V=W_V0, W_O=W_O0, pattern="previous")
    return Model(vocab, W_E, layers=[Layer(heads=[head], mlp=MLP(W_in=answer.W_in, W_out=answer.W_out))],
                 name="kv_memory", params=answer.params)


puzzle = Puzzle(
    number=17,
    name="kv_memory",
    title="An MLP as a key-value memory",
    answer=["W_in", "W_out"],
    build=build,
    targets=[MLPOutput(MLPOut(0), spec, tol=0.1,
                       description="the MLP writes 1 into the city of a stored (previous, current) name pair, "
                                   "0 into the other cities (±0.1), and nothing into tok:, prev:, one")],
    inputs=Inputs(vocab.tokens, min_len=1, max_len=8, families=[Uniform()]),
    examples=["Alan Lovelace Ada Lovelace", "Marie Curie Albert Einstein Alan Turing", "Turing Alan Turing"],
    source="Geva, Schuster, Berant & Levy (2021), Transformer Feed-Forward Layers Are Key-Value Memories",
)

# ── your answer ──────────────────────────────────────────────────────────────────────────
# W_in: (d_mlp, 16), d_mlp of your choice.  W_out: (16, d_mlp).
# blank(d_mlp, resid) and blank(resid, d_mlp) give zero matrices you fill by name: W_in[unit, "direction"] = x.
W_in = FILL_ME_IN("(d_mlp, 16)")
W_out = FILL_ME_IN("(16, d_mlp)")
