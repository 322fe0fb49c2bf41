"""Puzzle 21 · Indirect object identification, in miniature     (from Wang et al. 2022, the IOI circuit in GPT-2 small)

Chapter: A circuit from a paper, in miniature. "When Mary and John went to the store, John
gave a drink to" — GPT-2 small says "Mary", the indirect object (IO), and not "John", the
subject (S) named twice. Wang et al. traced how: duplicate-token heads notice, at the second
S, that this name came before; S-inhibition heads carry "S is John" to the last position; name
mover heads there attend to the names in the sentence, except the inhibited one, and copy the
one they find (Mary) into the logits. Build one head of each class.

The sentences: "X and Y then … S then … gave to", where {X, Y} are two of the names Ann,
Bob, Cat, Dan in either order (IO first or S first, as the paper's ABBA and BABA templates),
S is the one repeated, and "then" fills 0 to 5 places in all, before S, after it or both
("Ann and Bob then Bob then gave to"). The model must predict IO after "to". Every input
starts with BOS; n_ctx = 12, so a sentence has 6 to 11 tokens.

The residual stream (d_model = 30):

    tok:Ann … tok:Dan, tok:and, tok:then, tok:gave, tok:to   which token (one-hot)
    bos                          1 on BOS only
    pos:0 … pos:11               which position (one-hot, W_pos)
    dup                          written by head 0.0: "my name came before"
    s:Ann … s:Dan                written by head 1.0, at the end: "the subject is …"
    out:Ann … out:Dan            written by head 2.0: the answer; W_U reads it (γ = 10)

The values are given (W_V, W_O of each head, and W_U): head 0.0 writes into dup the
name-ness of the key it attends to (1 from a name, 0 from BOS or a filler); head 1.0 copies the
attended name into s:; head 2.0 copies it into out:, and W_U makes out:x the logit of x.
Each head reads what the one before it wrote, so the three sit in three layers.

Write the QK circuits (scores are raw q·k with a causal mask; multiply every W_Q by the
sharpness symbol `s`, bound in `params`). Checked per input, ≥ 0.9 of the attention on:

  head 0.0 (W_Q0, W_K0)  the duplicate-token head: from a name seen before, its earlier copy
                         (not itself); from any other token, BOS;
  head 1.0 (W_Q1, W_K1)  S-inhibition: from "to", the second S (the key whose dup is set);
  head 2.0 (W_Q2, W_K2)  the name mover: from "to", the IO (a name, but not the one in s:);

and the prediction after "to": IO with log-prob ≥ −0.1. Checked on every sentence of the
template (504: 12 ordered name pairs × 2 orders × 21 ways to place 0–5 fillers around S;
the report counts them among its random inputs) and on random sentences. Head 0.0's rule
is not about sentences: it is also checked on every string of 1 to 4 tokens, on random
strings of up to 11 ("Ann Ann Ann and Bob Bob") and on a name written twice at every pair of
positions of an 11-token string, where the other heads have no target.

The mechanism is checked too, by intervention, as Wang et al. checked theirs (activation
patching). Head 1.0 must find S2 by the dup head 0.0 wrote: on a pair of sentences of one
length, dup is taken from the other sentence's run, and head 1.0 must then put ≥ 0.9
where that dup points (the other sentence's S2 position); with dup zeroed, it must lose
S2. Head 2.0 must avoid the name head 1.0 wrote into s:*: with s:* taken from the other
sentence, it must attend to this sentence's names other than that sentence's S; with s:*
zeroed, it must lose the IO. A head 1.0 that attends to the last name by position passes
every sentence, but not these.

Worked example, "Ann and Bob then Bob gave to", read as 0 BOS, 1 Ann, 2 and, 3 Bob, 4 then,
5 Bob, 6 gave, 7 to:

    head 0.0   query 5 'Bob' → key 3 'Bob'  (dup = 1 at 5);  every other query → 0 BOS
    head 1.0   query 7 'to'  → key 5 'Bob'  (the only key with dup = 1);  s:Bob = 1 at 7
    head 2.0   query 7 'to'  → key 1 'Ann'  (a name, and not the one in s:)
    prediction 'Ann'

Head 0.0 must attend to the earlier copy and never to itself, though both hold the same
name.
"""

import itertools
from dataclasses import dataclass

import sympy

from circuits import (
    Attention, Basis, blank, CircuitError, Copies, Depends, Head, Inputs, Model, NextToken, Puzzle,
    Uniform, Vocab,
)
from circuits import FILL_ME_IN  # noqa: F401  (marks an unanswered puzzle)

# ── givens ───────────────────────────────────────────────────────────────────────────────
NAMES = ["Ann", "Bob", "Cat", "Dan"]
FILLERS = ["and", "then", "gave", "to"]
N_CTX = 12
GAMMA = 10
vocab = Vocab(NAMES + FILLERS, bos="<bos>")
TOK = [f"tok:{t}" for t in NAMES + FILLERS]
POS = [f"pos:{i}" for i in range(N_CTX)]
resid = Basis(TOK + ["bos"] + POS + ["dup"] + [f"s:{n}" for n in NAMES] + [f"out:{n}" for n in NAMES])  # 30
W_E = blank(resid, vocab.tokens)  # [30, 9]
W_E["bos", "<bos>"] = 1
for t in NAMES + FILLERS:
    W_E[f"tok:{t}", t] = 1
W_pos = blank(resid, N_CTX)  # [30, 12]
for i in range(N_CTX):
    W_pos[f"pos:{i}", i] = 1

# The values, given. Head 0.0: name-ness into dup. Heads 1.0 and 2.0: the name into s: and into out:.
W_V0, W_O0 = blank(1, resid), blank(resid, 1)
W_O0["dup", 0] = 1
W_V1, W_O1 = blank(len(NAMES), resid), blank(resid, len(NAMES))
W_V2, W_O2 = blank(len(NAMES), resid), blank(resid, len(NAMES))
W_U = blank(vocab.tokens, resid)  # [9, 30]: the logit of each name is γ · out:name
for k, n in enumerate(NAMES):
    W_V0[0, f"tok:{n}"] = W_V1[k, f"tok:{n}"] = W_V2[k, f"tok:{n}"] = 1
    W_O1[f"s:{n}", k] = W_O2[f"out:{n}", k] = 1
    W_U[n, f"out:{n}"] = GAMMA
s = sympy.Symbol("s")  # the sharpness


def parse(tokens: list[str]):
    """(IO, position of S2, position of IO) if `tokens` is a sentence of the template, else None."""
    if len(tokens) < 6 or tokens[1] != "and" or tokens[-2:] != ["gave", "to"]:
        return None
    middle = tokens[3:-2]  # then … S then …
    names = [i for i, t in enumerate(middle) if t != "then"]
    if len(names) != 1:
        return None
    x, y, subject = tokens[0], tokens[2], middle[names[0]]
    if not {x, y} <= set(NAMES) or x == y or subject not in (x, y):
        return None
    io = y if subject == x else x
    return io, 3 + names[0], tokens.index(io)


def earlier_copy(tokens: list[str]) -> list[object]:
    """Head 0.0's target keys: from a name seen before, its earlier copies; from anything else, BOS (−1)."""
    return [[j for j in range(i) if tokens[j] == t] if t in NAMES and t in tokens[:i] else -1
            for i, t in enumerate(tokens)]


def at_end(which: int):
    def keys(tokens: list[str]) -> list[object]:
        found = parse(tokens)
        return [None] * (len(tokens) - 1) + [found[which] if found else None]
    keys.__name__ = ["io", "second_subject", "io_position"][which]
    return keys


def dup_from(base: list[str], source: list[str]) -> list[object]:
    """Head 1.0 with head 0.0's dup taken from `source`: from 'to', the key where that dup is set (its S2)."""
    found = parse(base) and parse(source)
    return [None] * (len(base) - 1) + [parse(source)[1] if found else None]


def s_from(base: list[str], source: list[str]) -> list[object]:
    """Head 2.0 with head 1.0's s:* taken from `source`: from 'to', the names of `base` other than source's S."""
    if not (parse(base) and parse(source)):
        return [None] * len(base)
    subject = source[parse(source)[1]]
    return [None] * (len(base) - 1) + [[j for j, t in enumerate(base) if t in NAMES and t != subject]]


def next_is_io(tokens: list[str]) -> list[object]:
    """The prediction after the last token, "to": the indirect object."""
    found = parse(tokens)
    return [None] * (len(tokens) - 1) + [found[0] if found else None]


@dataclass(frozen=True)
class Sentences:
    """The IOI template with random names, order and fillers: "X and Y then … S then … gave to"."""

    name: str = "IOI sentences"

    @staticmethod
    def make(io: str, subject: str, io_first: bool, before: int, after: int = 0) -> list[str]:
        x, y = (io, subject) if io_first else (subject, io)
        return [x, "and", y] + ["then"] * before + [subject] + ["then"] * after + ["gave", "to"]

    def sample(self, rng, n, alphabet, lo, hi):
        if hi < 6:
            raise CircuitError("an IOI sentence has at least 6 tokens")
        out = []
        for fill in rng.integers(max(lo, 6) - 6, hi - 6 + 1, size=n):
            io, subject = (NAMES[int(i)] for i in rng.permutation(len(NAMES))[:2])
            before = int(rng.integers(0, fill + 1))
            out.append(self.make(io, subject, bool(rng.integers(2)), before, int(fill) - before))
        return out

    def extremes(self, lo: int, hi: int) -> list[list[str]]:
        """Every sentence of the template with lo..hi tokens."""
        return [self.make(io, subject, first, before, L - 6 - before) for L in range(max(lo, 6), hi + 1)
                for before in range(L - 6 + 1)
                for io, subject in itertools.permutations(NAMES, 2) for first in (True, False)]

    def strategy(self, alphabet, lo, hi):
        from hypothesis import strategies as st

        pairs = st.sampled_from(list(itertools.permutations(NAMES, 2)))
        fills = st.integers(max(lo, 6) - 6, hi - 6).flatmap(
            lambda fill: st.tuples(st.integers(0, fill), st.just(fill)))
        return st.builds(lambda p, first, f: self.make(p[0], p[1], first, f[0], f[1] - f[0]),
                         pairs, st.booleans(), fills)


def build(answer) -> Model:
    return Model(vocab, W_E, W_pos=W_pos, W_U=W_U, params=answer.params, name="ioi_mini", layers=[
        [Head(W_Q=answer.W_Q0, W_K=answer.W_K0, W_V=W_V0, W_O=W_O0)],
        [Head(W_Q=answer.W_Q1, W_K=answer.W_K1, W_V=W_V1, W_O=W_O1)],
        [Head(W_Q=answer.W_Q2, W_K=answer.W_K2, W_V=W_V2, W_O=W_O2)],
    ])


puzzle = Puzzle(
    number=21,
    name="ioi_mini",
    title="Indirect object identification, in miniature",
    answer=["W_Q0", "W_K0", "W_Q1", "W_K1", "W_Q2", "W_K2"],
    build=build,
    targets=[
        Attention(0, 0, earlier_copy, per_input=True, min_mass=0.9,
                  description="head 0.0 (duplicate token): from a repeated name its earlier copy, else BOS (≥ 0.9)"),
        Attention(1, 0, at_end(1), per_input=True, min_mass=0.9,
                  description="head 1.0 (S-inhibition): from 'to', the second S (≥ 0.9)"),
        Attention(2, 0, at_end(2), per_input=True, min_mass=0.9,
                  description="head 2.0 (name mover): from 'to', the indirect object (≥ 0.9)"),
        NextToken(next_is_io, lo=-0.1, description="after 'to' the indirect object has log-prob ≥ −0.1"),
        Depends((1, 0), "head 0.0", ["dup"], dup_from,
                description="head 1.0 finds S2 by what head 0.0 wrote into dup (patched and zeroed)"),
        Depends((2, 0), "head 1.0", ["s:*"], s_from,
                description="head 2.0 avoids the name head 1.0 wrote into s:* (patched and zeroed)"),
    ],
    inputs=Inputs(NAMES + FILLERS, min_len=1, max_len=N_CTX - 1, families=[Sentences(), Uniform(), Copies(NAMES + FILLERS)],
                  n_random=2000),
    examples=["Ann and Bob then Bob gave to", "Ann and Bob then Ann gave to", "Cat and Dan Dan gave to",
              "Ann and Bob then Bob then gave to", "Ann Ann Ann and Bob Bob"],
    sharpness=["s"],
    source="Wang, Variengien, Conmy, Shlegeris & Steinhardt (2022), Interpretability in the Wild: "
           "a Circuit for Indirect Object Identification in GPT-2 small",
)

# ── your answer ──────────────────────────────────────────────────────────────────────────
# Each W_Q and W_K: (d_head, 30), d_head of your choice; blank(rows, resid) gives a zero matrix
# you fill by name (W[row, "direction"] = x). Write every W_Q with the symbol s.
W_Q0 = FILL_ME_IN("(d_head, 30)")
W_K0 = FILL_ME_IN("(d_head, 30)")
W_Q1 = FILL_ME_IN("(d_head, 30)")
W_K1 = FILL_ME_IN("(d_head, 30)")
W_Q2 = FILL_ME_IN("(d_head, 30)")
W_K2 = FILL_ME_IN("(d_head, 30)")
