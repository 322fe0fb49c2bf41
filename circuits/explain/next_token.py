"""NextToken: why the expected next token is not sure enough (or the mean log-prob is off its band), its facts
and their words: a rival token, and the head whose attention could raise the expected one, else what does not reach
the unembedding."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from circuits.explain import diagnosis
from circuits.explain.formats import fmt_num, head, token_at
from circuits.explain.tables import columns, explain, rows, words
from circuits.explain.terms import given, in_text, matrix, mlp_matrix, sharpness
from circuits.targets.base import Explanation, Tokens
from circuits.targets.next_token import NEAR_TIE, NextToken


@dataclass
class NextTokenPositions:
    """A next-token target's facts per position: the token expected next (None: none), your top guess, and the
    expected token's log-prob `[T]` (NaN: none)."""

    tokens: Tokens
    expected: list[str | None]
    top: list[str]
    logprob: np.ndarray


@dataclass(frozen=True)
class NothingExpected:
    """A mean target on an input with no expected position: the mean counts as 0, outside [lo, hi]."""

    lo: float
    hi: float


@dataclass(frozen=True)
class SpecEmpty:
    """The hint for NothingExpected: the spec expects nothing of this input."""


@dataclass(frozen=True)
class MeanMiss:
    """The mean log-prob `mean` over `n` predicted positions is outside [lo, hi] (`above`: surer than allowed)."""

    mean: float
    n: int
    above: bool
    lo: float
    hi: float


@dataclass(frozen=True)
class TokenMiss:
    """After position `query` (token `token`) the expected next token's log-prob is `logprob` < `lo`."""

    query: int
    token: str
    logprob: float
    lo: float


@dataclass(frozen=True)
class TooSure:
    """Where the context cannot tell the next token the prediction is not flat; `computed`: the heads with a
    computed pattern."""

    computed: tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class Rival:
    """After position `query` the expected token `want` against `rival`, at probabilities `p_want`, `p_rival`:
    `how` is "tie" (exact), "near" (a near tie, with `more` other tokens as near), "second" (want is the top guess
    but rival follows), "prefers" (the model prefers rival) or "shared" (want ties with `partners`, as the bound
    allows two or more expected tokens to, and rival leads the tokens outside the tie, which keep `rest`)."""

    query: int
    want: str
    rival: str
    p_want: float
    p_rival: float
    how: str
    more: int = 0
    partners: tuple[str, ...] = ()
    rest: float = 0.0
    need: float | None = None  # with "second": the log-prob the expected token needs


@dataclass(frozen=True)
class AttentionCause:
    """Head `head` could raise `want` over the rival by `gain` more by attending to `keys` (it puts `mass` there);
    its largest weight `top_weight` is on `top` (`tied`: top and the best wanted key both score `score`)."""

    rival: Rival
    head: tuple[int, int]
    tokens: tuple[str, ...]
    keys: tuple[int, ...]
    mass: float
    gain: float
    top: int
    top_weight: float
    tied: tuple[int, int, float] | None  # (top, best wanted key, their score)


@dataclass(frozen=True)
class SurerPrediction:
    """The expected token is the top guess, but not sure enough, and no attention pattern would raise it much."""

    rival: Rival


@dataclass(frozen=True)
class NotReaching:
    """No attention pattern changes the prediction: what the attended positions hold does not reach the
    unembedding as `want`. `who`: the head whose best key would raise it most (by `reach`, against the rival's
    `lead`), None if no head writes."""

    rival: Rival
    who: tuple[int, int] | None
    reach: float
    lead: float
    mlps: tuple[int, ...] = ()  # the layers whose MLP writes where W_U tells the two tokens apart (or nowhere)
    given: bool = False  # every head's pattern is given: no attention can be blamed, only what the values write


@dataclass(frozen=True)
class Advised:
    """A hint followed by the puzzle's own advice (NextToken's `advice`)."""

    hint: object
    advice: str


# --- the explanation ---------------------------------------------------------------------------------------------
@explain.register
def why(target: NextToken, trace, tokens):
    lp = target.logp(trace, [tokens])[0]
    labels = trace.tokens(0)
    offset = len(labels) - len(tokens)
    exp = list(target.spec(tokens))
    vocab = trace.model.vocab
    if offset > 0 and target.after_bos is not None:
        exp = [None] * (offset - 1) + [target.after_bos(tokens)] + exp
    else:
        exp = [None] * offset + exp
    offset = 0  # exp now lines up with the trace's positions
    rows = NextTokenPositions(
        list(labels),
        [exp[i] if i < len(exp) else None for i in range(len(labels))],
        [vocab.tokens[int(i)] for i in np.argmax(trace.logprobs[0, : len(labels)], axis=-1)],
        lp,
    )
    if not np.isfinite(lp).any():  # a mean over no positions counts as 0 (see evaluate)
        return Explanation(len(labels) - 1, NothingExpected(target.lo, target.hi), rows, SpecEmpty())
    m = float(np.nanmean(lp)) if target.mean else None
    if target.mean:
        summary = MeanMiss(m, int(np.isfinite(lp).sum()), m > target.hi, target.lo, target.hi)
        q = int(np.nanargmax(lp)) if m > target.hi else int(np.nanargmin(lp))
    else:
        q = int(np.flatnonzero(np.nan_to_num(lp, nan=0.0) < target.lo)[0])
        summary = TokenMiss(q, labels[q], lp[q], target.lo)
    if target.mean and m > target.hi:
        hint, head, marks = too_sure(trace), None, None
    else:
        hint, head, marks = token_cause(target, trace, q, vocab.id(exp[q - offset]))
        if target.advice:  # the puzzle's own advice, after the finding
            hint = Advised(hint, target.advice)
    return Explanation(q, summary, rows, hint, head, marks, "raises")


def too_sure(trace) -> TooSure:
    """The heads with a computed pattern, where a prediction is surer than the context allows."""
    model = trace.model
    heads = [(l, h) for l in range(model.n_layers) for h in range(model.n_heads(l))]
    return TooSure(tuple((l, h) for l, h in heads if model.head(l, h).pattern is None))


def token_cause(target, trace, q: int, want: int):
    """Why the expected token `want` is not sure enough after position q: (hint, head to show, marks).

    The rival is your top guess, or the runner-up when the top guess is right. Each head with a computed
    pattern could raise `want` over the rival by attending elsewhere: if one could make it win, its
    attention is the cause; else the content does not reach the unembedding, or the prediction is too flat."""
    model, vocab = trace.model, trace.model.vocab
    tokens = trace.tokens(0)
    lp = trace.logprobs[0, q]
    order = [int(i) for i in np.argsort(-lp, kind="stable")]
    near = lambda x: abs(float(lp[want]) - float(x)) < NEAR_TIE  # noqa: E731
    tied = [i for i in order if near(lp[i])]  # want and the tokens it (nearly) ties with
    # k tokens tied at the top can each reach 1/k: where that meets a per-position bound, the tie is allowed (two
    # expected tokens sharing the prediction, as in puzzle 27), and the rival is the best token outside it
    shared = not target.mean and len(tied) > 1 and order[0] in tied and np.log(1 / len(tied)) >= target.lo
    outside = [i for i in order if i not in tied]
    rival = outside[0] if shared and outside else order[0] if order[0] != want else order[1]
    w_tok, r_tok = vocab.tokens[want], vocab.tokens[rival]
    p_w, p_r = float(np.exp(lp[want])), float(np.exp(lp[rival]))
    lead = trace.logits[0, q, want] - trace.logits[0, q, rival]
    tie = near(lp[rival])
    if shared:
        partners = tuple(vocab.tokens[i] for i in tied if i != want)
        rest = float(np.exp(lp[outside]).sum())
        said = Rival(q, w_tok, r_tok, p_w, p_r, "shared", len(outside) - 1, partners, rest)
    elif tie:  # one report for a (near) tie, whichever token argmax happens to pick
        exact = diagnosis.tied(float(lp[want]), float(lp[rival]))
        said = Rival(q, w_tok, r_tok, p_w, p_r, "tie" if exact else "near", sum(near(x) for x in lp) - 2)
    else:
        said = Rival(q, w_tok, r_tok, p_w, p_r, "second" if order[0] == want else "prefers", need=target.lo)
    d = model.W_U[want] - model.W_U[rival]  # [d_model]: what raises want over the rival
    best = None
    for l, layer in enumerate(trace.layers):
        for h, w in enumerate(layer.heads):
            if w.pattern is not None:
                continue
            out = layer.v[0, h, : q + 1, : w.W_V.shape[0]] @ w.W_O.T  # [keys, d_model]: each key's output
            gains = out @ d  # [keys]: how far each key alone would raise want over the rival
            j = int(np.argmax(gains))
            moved = trace.logits[0, q] + (out[j] - layer.pattern[0, h, q, : q + 1] @ out) @ model.W_U.T
            after = float(moved[want] - np.logaddexp.reduce(moved))  # want's log-prob, all attention on key j
            if best is None or after > best[0]:
                best = (after, l, h, gains, float(gains[j] - layer.pattern[0, h, q, : q + 1] @ gains))
    shortfall = target.lo - float(lp[want])
    if best is not None and best[4] > 1e-9 and (best[0] >= target.lo or best[0] - lp[want] >= shortfall / 2):
        _, l, h, gains, gain = best
        keys = [int(j) for j in np.flatnonzero(gains >= gains.max() - 1e-9)]
        pattern = trace.pattern(l, h)[0, q]
        top = diagnosis.largest(pattern[: q + 1], keys)
        s = trace.layers[l].scores[0, h, q, : q + 1]
        best_key = max(keys, key=lambda j: s[j])
        tied = (top, best_key, s[top]) if top not in keys and diagnosis.tied(s[top], s[best_key]) else None
        marks: list = [-1] * len(tokens)
        marks[q] = keys
        return (
            AttentionCause(
                said, (l, h), tuple(tokens), tuple(keys), float(pattern[keys].sum()), gain, top, pattern[top], tied
            ),
            (l, h),
            marks,
        )
    if (order[0] == want and not tie) or shared:
        return SurerPrediction(said), None, None
    reach = {}  # per head: the most any one key's value could raise want over the rival
    for l, layer in enumerate(trace.layers):
        for h, w in enumerate(layer.heads):
            if np.abs(w.W_O).any():
                reach[(l, h)] = float(((layer.v[0, h, : q + 1, : w.W_V.shape[0]] @ w.W_O.T) @ d).max())
    who = max(reach, key=reach.get) if reach else None
    mlps = tuple(
        l
        for l, block in enumerate(model.blocks)  # an MLP that writes nothing at all counts too
        if block.mlp is not None and (np.abs(d @ block.mlp.W_out).any() or not np.abs(block.mlp.W_out).any())
    )
    given = bool(reach) and all(model.head(*h).pattern is not None for h in reach)
    return NotReaching(said, who, reach[who] if who is not None else 0.0, -lead, mlps, given), None, None


# --- the words -----------------------------------------------------------------------------------------------------
@columns.register
def _(f: NextTokenPositions) -> list[str]:
    return ["pos", "token", "expected next", "your top guess", "log-prob"]


@rows.register
def _(f: NextTokenPositions) -> list[list[str]]:
    return [
        [str(i), repr(t), "—" if e is None else repr(e), repr(top), "—" if np.isnan(lp) else f"{lp:.3f}"]
        for i, (t, e, top, lp) in enumerate(zip(f.tokens, f.expected, f.top, f.logprob))
    ]


@words.register
def _(f: NothingExpected) -> str:
    return f"no position of this input has an expected next token; the mean counts as 0, outside [{f.lo:g}, {f.hi:g}]"


@words.register
def _(f: SpecEmpty) -> str:
    return "the spec expects nothing of this input: widen the band to include 0, or check the spec"


@words.register
def _(f: MeanMiss) -> str:
    side = " (above the band: surer than the context allows)" if f.above else ""
    return (
        f"mean log-prob {f.mean:.3f} over {f.n} predicted position{'s' if f.n != 1 else ''}{side}; "
        f"needs [{f.lo:g}, {f.hi:g}]"
    )


@words.register
def _(f: TokenMiss) -> str:
    return f"after position {f.query} {f.token!r} the expected next token has log-prob {f.logprob:.3f} < {f.lo:g}"


@words.register
def _(f: TooSure) -> str:
    first = f.computed[0] if f.computed else None  # the matrices named without a head: the first head named
    where = f" ({matrix('W_Q', first)} and {matrix('W_K', first)} of {', '.join(head(h) for h in f.computed)})"
    return (
        "where the context cannot tell the next token, the prediction must stay flat, and yours is not: check "
        f"where your heads attend when no key matches{where if f.computed else ''} and what they write there "
        f"({matrix('W_V', first)}, {matrix('W_O', first)})"
    )


@words.register
def _(f: Rival) -> str:
    q, w, r = f.query, f.want, f.rival
    if f.how in ("tie", "near"):
        shown_w, shown_r = diagnosis.apart(f.p_want, f.p_rival)
        return (
            f"after position {q} your model cannot tell the expected {w!r} from {r!r}"
            f"{f' and {f.more} more' if f.more > 0 else ''}: "
            + (f"a tie, each {f.p_want:.3f}" if f.how == "tie" else f"a near tie, {shown_w} against {shown_r}")
        )
    if f.how == "second":
        if f.need is None:
            return (
                f"your top guess after position {q} is {w!r} ({f.p_want:.3f}), but {r!r} follows with {f.p_rival:.3f}"
            )
        got, need = diagnosis.apart(f.p_want, float(np.exp(f.need)))
        return (
            f"after position {q} your top guess {w!r} is right but only {got} sure ({r!r} follows with "
            f"{f.p_rival:.3f}); it needs log-prob ≥ {f.need:g}, a probability ≥ {need}"
        )
    if f.how == "shared":
        partners = " and ".join(repr(p) for p in f.partners)
        others = f"{r!r}{f' and {f.more} more' if f.more > 0 else ''}"
        return (
            f"after position {q} the expected {w!r} shares the top with {partners} ({f.p_want:.3f} each), as it "
            f"may, but {others} keep {f.rest:.3f} between them"
        )
    return f"after position {q} your model prefers {r!r} ({f.p_rival:.3f}) to the expected {w!r} ({f.p_want:.3f})"


@words.register
def _(f: AttentionCause) -> str:
    name, keys = head(f.head), f.keys
    why = (
        f"indistinguishable keys: key {f.tied[0]} and key {f.tied[1]} both score {f.tied[2]:.6g}. "
        if f.tied is not None
        else ""
    )
    where = ", ".join(token_at(f.tokens, j) for j in keys[:3]) + (" …" if len(keys) > 3 else "")
    return (
        f"{words(f.rival)}. The attention is the cause: {name} puts {f.mass:.3f} on "
        f"key{'s' if len(keys) > 1 else ''} {where}, whose value would raise {f.rival.want!r} over "
        f"{f.rival.rival!r} by {f.gain:.3g} more, and its largest weight ({f.top_weight:.3f}) is on key "
        f"{token_at(f.tokens, f.top)}. {why}Look at {matrix('W_Q', f.head)} and {matrix('W_K', f.head)} of {name}"
    )


@words.register
def _(f: SurerPrediction) -> str:
    return (
        f"{words(f.rival)}. No attention pattern of your heads would raise it much: make the prediction surer "
        f"(raise {sharpness('prediction')})"
    )


@words.register
def _(f: NotReaching) -> str:
    w, r = f.rival.want, f.rival.rival
    if f.who is not None and f.given:  # the pattern is given: the mix of values it attends to is what counts
        named = (
            f"look at {matrix('W_V', f.who)} and {matrix('W_O', f.who)} of {head(f.who)}: what it writes here is the "
            f"mix of the values it attends to, and that mix must raise {w!r} above {r!r} (it leaves {r!r} ahead by "
            f"{fmt_num(f.lead)}); then at {given('W_U')}"
        )
    elif f.who is not None:
        named = (
            f"look at {matrix('W_V', f.who)} and {matrix('W_O', f.who)} of {head(f.who)} (attending to its best key "
            f"would raise {w!r} over {r!r} by {fmt_num(f.reach)}, against a lead of {fmt_num(f.lead)} for {r!r}) and "
            f"at {given('W_U')}"
        )
    else:
        named = f"look at {given('W_U')}"
    if f.mlps:  # an MLP writes where W_U tells them apart: it comes first, before any head
        mlp = " and ".join(f"the MLP of layer {l}" for l in f.mlps)
        named = (
            f"look at {mlp_matrix('W_in', f.mlps[0])} and {mlp_matrix('W_out', f.mlps[0])} of {mlp} (which units fire "
            f"for this input, and what they write into the directions {given('W_U')} reads to tell {w!r} from "
            f"{r!r}), then " + named.removeprefix("look at ")
        )
    if f.rival.how in ("tie", "near"):  # no sharpness separates equal logits
        apart = "the attention is given and does not" if f.given else "no attention pattern of your heads"
        return (
            f"{words(f.rival)}, so no sharpness can make {w!r} sure, and {apart} separate{'' if f.given else 's'} "
            f"them: what the attended positions hold must raise {w!r} above {r!r} — {named}"
        )
    change = "the attention is given" if f.given else "no attention pattern of your heads would change that"
    return (
        f"{words(f.rival)}, and {change}: what the attended positions hold does not reach the unembedding as "
        f"{w!r}: {named}"
    )


@words.register
def _(f: Advised) -> str:
    return f"{words(f.hint).rstrip('.')}. {in_text(f.advice)}"  # the puzzle's own words, renamed as a whole
