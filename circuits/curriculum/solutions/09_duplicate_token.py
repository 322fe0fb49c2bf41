"""Puzzle 09 · A duplicate-token head                         (from TransformerLens's head detector)

A duplicate-token head attends from each token to the earlier copies of the same token.
TransformerLens's head detector names the behaviour ("duplicate_token_head"): its reference
pattern marks, for query i, every key j < i holding the same token as i — never i itself.
Interpretability work finds such heads early in GPT-2 (in the indirect-object circuit, they
tell later heads "this name was already said").

The embedding (d_model = 17, n_ctx = 12). Every input starts with a BOS token at position 0.
Tokens a b c d have one-hot content directions tok:a … tok:d, BOS has its own direction,
bos, and each position n has a one-hot direction pos:n (pos:0 … pos:11, as a learned
position embedding might be):

    x at position n holding token t  =  tok:t + pos:n        (BOS at 0: bos + pos:0)

Write one head, W_Q and W_K (d_head × 17, d_head of your choice; scores are raw dot
products, causal mask). For strings of 1 to 11 tokens after BOS (checked on every string
of 1 to 6 tokens and on random strings of up to 11):

  at each query whose token appeared before, head 0.0 puts ≥ 0.9 of its attention on the
  earlier copies of that token, together (all of them, as the detector counts them; the
  query itself is not a copy); at a token new to the string, ≥ 0.9 on BOS.

The query itself holds the same token, and it is not a copy: it must get no more than the
rest of the 0.1. Multiply W_Q by a sharpness symbol `s`, bound in `params`.

Worked behaviour, "abca" and "aaaa", read as 0 BOS, 1 … 4 (the targets):

    "abca"   query     1 a     2 b     3 c     4 a
             attends   0 BOS   0 BOS   0 BOS   1 a            (not 4, itself)
    "aaaa"   query     1 a     2 a     3 a     4 a
             attends   0 BOS   1 a     1, 2    1, 2, 3        (together ≥ 0.9)
"""

import numpy as np
import sympy

from circuits import Attention, Basis, blank, Copies, Head, Inputs, Model, Puzzle, Uniform, Vocab
from circuits import FILL_ME_IN  # noqa: F401  (marks an unanswered puzzle)

# ── givens ───────────────────────────────────────────────────────────────────────────────
N_CTX = 12
vocab = Vocab.chars_of("abcd", bos="<bos>")
CONTENT = [f"tok:{t}" for t in "abcd"]
POSITION = [f"pos:{n}" for n in range(N_CTX)]
resid = Basis(CONTENT + ["bos"] + POSITION)  # d_model = 17

#            <bos> a  b  c  d
W_E = blank(resid, vocab.tokens)  # [17, 5]: tok:t is 1 for token t, bos is 1 for BOS
W_E["bos", "<bos>"] = 1
for t in "abcd":
    W_E[f"tok:{t}", t] = 1
W_pos = blank(resid, N_CTX)  # [17, 12]: pos:n is 1 at position n
for n in range(N_CTX):
    W_pos[f"pos:{n}", n] = 1
s = sympy.Symbol("s")  # the sharpness


def earlier_copies(tokens: list[str]) -> list[list[int]]:
    """The target keys, in plain Python: every earlier copy of each token, else BOS (position −1)."""
    return [[j for j in range(i) if tokens[j] == t] or [-1] for i, t in enumerate(tokens)]


def build(answer) -> Model:
    silent = np.zeros((1, len(resid)))  # the head is judged by where it looks, not what it writes
    return Model(vocab, W_E, W_pos=W_pos, params=answer.params, name="duplicate_token",
                 layers=[[Head(W_Q=answer.W_Q, W_K=answer.W_K, W_V=silent)]])


puzzle = Puzzle(
    number=9,
    name="duplicate_token",
    title="A duplicate-token head",
    answer=["W_Q", "W_K"],
    build=build,
    targets=[
        Attention(0, 0, earlier_copies, per_input=True, min_mass=0.9,
                  description="head 0.0 puts ≥ 0.9 of its attention on the earlier copies of the current token "
                              "(on BOS for a new token)"),
    ],
    inputs=Inputs(list("abcd"), min_len=1, max_len=N_CTX - 1, families=[Uniform(), Copies(tokens=list("abcd"))]),
    examples=["abca", "aaaa", "abcdabcdab"],
    sharpness=["s"],
    source="TransformerLens, head detector: duplicate_token_head (get_duplicate_token_head_detection_pattern)",
)


# ── your answer ──────────────────────────────────────────────────────────────────────────
# W_Q and W_K: (d_head, 17); d_head = 16 below. Multiply W_Q by s.
# Rows 0–3: "I am t" against "I am t". Row 4: every token against BOS, at half a match.
# Rows 5–15: the query at position n against the key at position n, at minus a match.
W_Q = blank(16, resid)
W_K = blank(16, resid)
for k, t in enumerate("abcd"):
    W_Q[k, f"tok:{t}"] = s
    W_Q[4, f"tok:{t}"] = s / 2
    W_K[k, f"tok:{t}"] = 1
W_K[4, "bos"] = 1
for row, n in enumerate(range(1, N_CTX), start=5):  # position 0 is BOS, which sees only itself
    W_Q[row, f"pos:{n}"] = -s
    W_K[row, f"pos:{n}"] = 1

params = {"s": 20}


# ── stub: what `circuits reset` restores below the answer line ─────────────────────────
# # W_Q and W_K: (d_head, 17), d_head of your choice. Multiply W_Q by s, and bind s in params.
# W_Q = FILL_ME_IN("(d_head, 17)")
# W_K = FILL_ME_IN("(d_head, 17)")
