"""Puzzle 13 · Copy suppression                               (from McDougall et al. 2023, "Copy Suppression")

GPT-2 small's head L10H7 is a *negative* head: when earlier layers predict a token that
already appeared in the context, the prediction is taken back. McDougall et al. (2023)
call this copy suppression: it keeps the model from naively repeating what it has already
seen, and calibrates overconfident predictions. Where the head looks, and what it writes
from there, is yours to work out.

The model (d_model = 11). Every input starts with BOS. Tokens a … e have one-hot content
directions tok:a … tok:e, BOS has bos, and pred:a … pred:e hold the model's prediction.
Another path, given, predicts the next token from the current one alone, as a bigram:
the embedding writes pred:y = 1 for y = NEXT[t],

    t         a  b  c  d  e
    NEXT[t]   b  c  d  e  a

and W_U reads the logits from pred:* (logit of y = 5·pred:y). Write one head (scores are
raw dot products, causal mask): W_Q, W_K (d_head × 11), W_V (5 × 11), W_O (11 × 5), so that

  (a) after the head, at every position of every string of 1 to 10 tokens, pred:* is
      the one-hot NEXT[t] when NEXT[t] has not appeared earlier in the string, and all
      zeros when it has (each within 0.1): the prediction is suppressed;
  (b) the head's full OV circuit W_U W_OV W_E has a copying score Σλ/Σ|λ| ≤ −0.9 (puzzle
      11 asked for ≥ 0.9);
  (c) the suppression must follow the bigram path's prediction, checked by intervention
      (activation patching): with the embedding's pred:* taken from another string of the
      same length, the head's attention (≥ 0.9) must move to where it would be had that
      string's predictions been made here; with pred:* zeroed, it must lose its target.

Multiply W_Q by a sharpness symbol `s`, bound in `params`.

Worked example, "cab", read as 0 BOS, 1 c, 2 a, 3 b. The bigram path predicts d, b, c.
At position 3, c is predicted and c was already said at position 1: that prediction must
go. The targets (nothing is asked at BOS):

    position   predicts   said earlier?   pred:a … pred:e after the head
    1 'c'      d          no              0 0 0 1 0
    2 'a'      b          no              0 1 0 0 0
    3 'b'      c          yes, at 1       0 0 0 0 0

The logits (a … e) at position 3 go from (0, 0, 5, 0, 0), c at 0.967, to flat: 1/6 each
(BOS has a logit too, always 0).
"""

import numpy as np
import sympy

from circuits import (
    Basis, blank, Copies, Depends, Head, Inputs, Model, Output, OVCircuit, Puzzle, Residual,
    Uniform, Vocab,
)
from circuits import FILL_ME_IN  # noqa: F401  (marks an unanswered puzzle)

# ── givens ───────────────────────────────────────────────────────────────────────────────
TOKENS = "abcde"
NEXT = {"a": "b", "b": "c", "c": "d", "d": "e", "e": "a"}  # the bigram path's prediction
vocab = Vocab.chars_of(TOKENS, bos="<bos>")
CONTENT = [f"tok:{t}" for t in TOKENS]
PRED = [f"pred:{t}" for t in TOKENS]
resid = Basis(CONTENT + ["bos"] + PRED)  # d_model = 11

#            <bos> a  b  c  d  e
W_E = blank(resid, vocab.tokens)  # [11, 6]: tok:t and pred:NEXT[t] are 1 for token t; bos for BOS
W_E["bos", "<bos>"] = 1
for t in TOKENS:
    W_E[f"tok:{t}", t] = 1
    W_E[f"pred:{NEXT[t]}", t] = 1
W_U = blank(vocab.tokens, resid)  # [6, 11]: the logit of y is 5·pred:y (BOS's logit 0)
for t in TOKENS:
    W_U[t, f"pred:{t}"] = 5
s = sympy.Symbol("s")  # the sharpness


def suppressed(tokens: list[str]) -> list[list[int]]:
    """The target, in plain Python: pred:* after the head, the bigram prediction unless already in context."""
    out = []
    for i, t in enumerate(tokens):
        y = NEXT[t]
        out.append([0] * len(TOKENS) if y in tokens[:i] else [int(u == y) for u in TOKENS])
    return out


def suppressed_batched(tokens):
    """The same as suppressed on a whole batch at once (for the checker's speed): tokens [b, L] -> [b, L, 5]."""
    order = np.array(list(TOKENS))
    t = np.searchsorted(order, tokens)  # [b, L]: each token's index in TOKENS
    y = np.searchsorted(order, np.array([NEXT[u] for u in TOKENS]))[t]  # [b, L]: the index of NEXT[t]
    earlier = np.tri(tokens.shape[1], k=-1, dtype=bool)  # [query, key]: the keys before each query
    seen = ((t[:, None, :] == y[:, :, None]) & earlier).any(-1)  # [b, L]: NEXT[t] already in the string
    return np.where(seen[..., None], 0, y[..., None] == np.arange(len(TOKENS))).astype(float)


def pred_from(base: list[str], source: list[str]) -> list[object]:
    """The head with the embedding's pred:* taken from `source`: at query i, the keys of `base` holding the token
    the patched prediction names, NEXT[source[i]], else BOS (−1)."""
    return [[j for j in range(i + 1) if base[j] == NEXT[source[i]]] or -1 for i in range(len(base))]


def build(answer) -> Model:
    return Model(vocab, W_E, W_U=W_U, residual=resid, params=answer.params, name="copy_suppression",
                 layers=[[Head(W_Q=answer.W_Q, W_K=answer.W_K, W_V=answer.W_V, W_O=answer.W_O)]])


puzzle = Puzzle(
    number=13,
    name="copy_suppression",
    title="Copy suppression",
    answer=["W_Q", "W_K", "W_V", "W_O"],
    build=build,
    targets=[
        Output(Residual(tuple(PRED)), suppressed, tol=0.1, batched=suppressed_batched,
               description="(a) pred:* after the head: the bigram prediction, or all 0 where it already appeared (±0.1)"),
        OVCircuit("(b) head 0.0's full OV circuit W_U W_OV W_E suppresses: copying score ≤ −0.9", max_score=-0.9),
        Depends((0, 0), "embed", ["pred:*"], pred_from, min_mass=0.9,
                description="(c) what head 0.0 looks for follows the prediction pred:* (patched and zeroed)"),
    ],
    inputs=Inputs(list(TOKENS), min_len=1, max_len=10, families=[Uniform(), Copies(tokens=list(TOKENS))]),
    examples=["cab", "abcde", "edcba", "aaaa"],
    sharpness=["s"],
    source="McDougall, Conmy, Rushing, McGrath, Nanda (2023), Copy Suppression: Comprehensively Understanding "
           "an Attention Head (GPT-2 small L10H7)",
)

# ── your answer ──────────────────────────────────────────────────────────────────────────
# W_Q, W_K: (d_head, 11), d_head of your choice; multiply W_Q by s and bind s in params.
# W_V: (5, 11). W_O: (11, 5).
W_Q = FILL_ME_IN("(d_head, 11)")
W_K = FILL_ME_IN("(d_head, 11)")
W_V = FILL_ME_IN("(5, 11)")
W_O = FILL_ME_IN("(11, 5)")
