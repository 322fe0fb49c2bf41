"""Puzzle 14 · Skip-trigrams, and the bug they bring   (from A Mathematical Framework for Transformer Circuits)

A one-layer attention-only transformer predicts with skip-trigrams, "A … B → C": the
current token B attends back to an earlier A, and A's OV circuit raises C. A Mathematical
Framework for Transformer Circuits reads them off real models, and notes their bug: a
head's OV circuit does not know which query attended. If one head learns both

    keep … in → mind        and        keep … at → bay,

it attends from "in" and from "at" to "keep", and from "keep" it raises mind *and* bay
every time, so it also predicts "keep … in bay" and "keep … at mind".

Words are tokens: keep in at mind bay the it, and BOS, which starts every input. Each word
t has a one-hot direction tok:t, BOS has bos, and two directions start empty, out:mind and
out:bay, which the unembedding reads (given: logit of mind = out:mind, logit of bay =
out:bay, every other logit 0; d_model = 10).

Worked example: the bug, in numbers. A single head that attends to keep from "in" and
from "at" adds the same logits from keep after either: if it raises mind enough after
"in", it raises bay as much. On "keep the in", raising both by 9.9995:

    after "in": logits  mind 9.9995, bay 9.9995, the other six 0  →  p(mind) = p(bay) = 0.4999

log-prob −0.693 for mind where the check asks ≥ −0.1, and the same 0.4999 for "keep … in bay".
The behaviour wanted, on "keep the in" and "keep it at":

    after "in" (with an earlier keep)   mind, log-prob ≥ −0.1
    after "at" (with an earlier keep)   bay,  log-prob ≥ −0.1

Fix it with two heads in one layer (scores are raw dot products, causal mask), each
W_Q, W_K (d_head × 10), W_V (1 × 10), W_O (10 × 1). For strings of 1 to 10 words after
BOS (checked on every string of 1 to 4 words and on random strings of up to 10):

  (a) head 0.0 puts ≥ 0.9 of its attention on the earlier keeps at an "in" that has one, and
      ≥ 0.9 on BOS at every other query;
  (b) head 0.1 does the same for "at";
  (c) after an "in" with an earlier "keep", mind has log-prob ≥ −0.1; after an "at" with an
      earlier "keep", bay has log-prob ≥ −0.1.

Multiply each W_Q by a sharpness symbol `s` and each W_O by `γ`, both bound in `params`.
"""

import sympy

from circuits import Attention, Basis, blank, Head, Inputs, Model, NextToken, Puzzle, Uniform, Vocab
from circuits import FILL_ME_IN  # noqa: F401  (marks an unanswered puzzle)

# ── givens ───────────────────────────────────────────────────────────────────────────────
WORDS = ["keep", "in", "at", "mind", "bay", "the", "it"]
vocab = Vocab(WORDS, bos="<bos>")
CONTENT = [f"tok:{w}" for w in WORDS]
resid = Basis(CONTENT + ["bos", "out:mind", "out:bay"])  # d_model = 10

W_E = blank(resid, vocab.tokens)  # [10, 8]: tok:w is 1 for word w, bos is 1 for BOS
W_E["bos", "<bos>"] = 1
for w in WORDS:
    W_E[f"tok:{w}", w] = 1
W_U = blank(vocab.tokens, resid)  # [8, 10]: the logits of mind and bay; every other row 0
W_U["mind", "out:mind"] = 1
W_U["bay", "out:bay"] = 1
s, γ = sympy.symbols("s γ")  # the sharpness of the attention and of the prediction
TRIGRAMS = {"in": "mind", "at": "bay"}  # keep … B → C


def looks_back(trigger: str):
    """The keys a head should attend to: from `trigger` with earlier keeps, those keeps; elsewhere BOS (−1)."""
    def where(words: list[str]) -> list[list[int]]:
        return [([j for j in range(i) if words[j] == "keep"] if w == trigger else []) or [-1]
                for i, w in enumerate(words)]
    where.__name__ = f"keep … {trigger}"
    return where


def completions(words: list[str]) -> list[str | None]:
    """The target, in plain Python: after "in" or "at" with an earlier "keep", mind or bay."""
    return [TRIGRAMS[w] if w in TRIGRAMS and "keep" in words[:i] else None for i, w in enumerate(words)]


def build(answer) -> Model:
    return Model(vocab, W_E, W_U=W_U, residual=resid, params=answer.params, name="skip_trigram", layers=[[
        Head(W_Q=answer.W_Q1, W_K=answer.W_K1, W_V=answer.W_V1, W_O=answer.W_O1),
        Head(W_Q=answer.W_Q2, W_K=answer.W_K2, W_V=answer.W_V2, W_O=answer.W_O2),
    ]])


puzzle = Puzzle(
    number=14,
    name="skip_trigram",
    title="Skip-trigrams, and the bug they bring",
    answer=["W_Q1", "W_K1", "W_V1", "W_O1", "W_Q2", "W_K2", "W_V2", "W_O2"],
    build=build,
    targets=[
        Attention(0, 0, looks_back("in"), per_input=True, min_mass=0.9,
                  description="(a) head 0.0: ≥ 0.9 on the earlier keeps from an \"in\", on BOS from every other query"),
        Attention(0, 1, looks_back("at"), per_input=True, min_mass=0.9,
                  description="(b) head 0.1: ≥ 0.9 on the earlier keeps from an \"at\", on BOS from every other query"),
        NextToken(completions, lo=-0.1,
                  description="(c) keep … in → mind and keep … at → bay, each with log-prob ≥ −0.1"),
    ],
    inputs=Inputs(WORDS, min_len=1, max_len=10, families=[Uniform()], exhaustive_budget=3000),
    examples=["keep the in", "keep it at", "in keep at keep in", "the keep keep it at in"],
    sharpness=["s", "γ"],
    source="A Mathematical Framework for Transformer Circuits (Elhage et al. 2021): skip-trigrams and their bugs",
)

# ── your answer ──────────────────────────────────────────────────────────────────────────
# Head 0.0 (keep … in → mind) and head 0.1 (keep … at → bay). W_Q, W_K: (d_head, 10), d_head of your
# choice, W_Q times s. W_V: (1, 10). W_O: (10, 1), times γ. Bind s and γ in params.
W_Q1 = FILL_ME_IN("(d_head, 10)")
W_K1 = FILL_ME_IN("(d_head, 10)")
W_V1 = FILL_ME_IN("(1, 10)")
W_O1 = FILL_ME_IN("(10, 1)")
W_Q2 = FILL_ME_IN("(d_head, 10)")
W_K2 = FILL_ME_IN("(d_head, 10)")
W_V2 = FILL_ME_IN("(1, 10)")
W_O2 = FILL_ME_IN("(10, 1)")
