"""NextToken: the log-probability of the expected next token, position by position or as a mean."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from circuits.checking import diagnosis, fields, once
from circuits.checking.targets import authored
from circuits.checking.targets.base import Evaluation, Explanation, Shows, Target, Tokens
from circuits.errors import CircuitError

NEAR_TIE = 0.05  # log-probs closer than this (5% in probability) are a near tie: no sharpness worth the name parts them


@dataclass
class NextTokenPositions:
    """A next-token target's facts per position: the token expected next (None: none), your top guess, and the
    expected token's log-prob `[T]` (NaN: none)."""

    tokens: Tokens
    expected: list[str | None]
    top: list[str]
    logprob: np.ndarray


# --- what an explanation found: the miss (its summary) and its likely cause (its hint) --------------------------
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


@dataclass
class NextToken(Target):
    """Log-probabilities of the next token from the logits.

    `spec(tokens)[i]` is the token expected after position i (None: no expectation).
    `after_bos(tokens)`, if given, is the token expected after BOS (the prediction the model makes
    at BOS, which `spec` cannot name: a measurement over every position reads it too).
    With `mean=True` the mean log-prob over expected positions must lie in [lo, hi];
    otherwise every expected position's log-prob must be ≥ lo. `advice`, if given, closes a
    failing report's hint with the puzzle's own advice (where its prediction comes from).
    """

    spec: Callable[[Tokens], Sequence]
    lo: float = -0.1
    hi: float = 0.0
    mean: bool = False
    description: str = ""
    after_bos: Callable[[Tokens], str | None] | None = None
    advice: str = ""
    metric: str = field(default="log-prob", init=False)
    higher_is_worse: bool = field(default=False, init=False)
    reads_logits: bool = field(default=True, init=False)

    def __post_init__(self):
        fields.number("NextToken", "lo", self.lo, example="-0.1")
        fields.number("NextToken", "hi", self.hi, example="0.0")

    @property
    def label(self) -> str:
        if self.description:
            return self.description
        return (
            f"mean next-token log-prob in [{self.lo:g}, {self.hi:g}]"
            if self.mean
            else f"every expected next token has log-prob ≥ {self.lo:g}"
        )

    def slack(self, worst):
        return np.minimum(worst - self.lo, self.hi - worst) if self.mean else worst - self.lo

    def bound(self):
        return f"needs [{self.lo:g}, {self.hi:g}]" if self.mean else f"needs ≥ {self.lo:g}"

    def validate(self, examples, alphabet, fail):
        if not callable(self.spec):
            raise fail(f"spec is {type(self.spec).__name__}, needs a function tokens -> one value per token")
        for toks in examples:
            got = authored.call(self.spec, list(toks), f"spec({authored.shown(toks)})", fail)
            authored.check_spec_result(got, toks, None, True, fail)
        if self.after_bos is None:
            return
        if not callable(self.after_bos):
            raise fail(
                f"after_bos is {type(self.after_bos).__name__}, needs a function tokens -> "
                "the token expected after BOS (or None)"
            )
        for toks in examples:
            got = authored.call(self.after_bos, list(toks), f"after_bos({authored.shown(toks)})", fail)
            if got is not None and got not in alphabet:
                raise fail(
                    f"after_bos({authored.shown(toks)}) returned {got!r}, which is not a token of the puzzle's alphabet"
                )

    def checks_nothing(self, probe):
        if self.after_bos is not None:
            return False  # it reads the prediction at BOS too
        return not authored.expects_something(self.spec, probe)

    def shown(self, trace, tokens):
        if trace.logprobs is None:
            return None
        vocab = trace.model.vocab
        off = trace.ids.shape[1] - len(tokens)
        at_bos = [self.after_bos(tokens)] if off and self.after_bos is not None else []  # the prediction made at BOS
        return {
            "label": self.label,
            "kind": Shows.NEXT_TOKEN,
            "readout": "next-token prediction",
            "expected": [None] * (off - len(at_bos)) + at_bos + list(self.spec(tokens)),
            "output": [vocab.tokens[int(i)] for i in trace.logprobs[0].argmax(-1)],
        }

    def _logp(self, trace, batch) -> np.ndarray:  # [b, T] with NaN where no expectation
        if trace.logprobs is None:
            raise CircuitError(f"{self.label}: the model has no W_U, so it makes no predictions")
        vocab = trace.model.vocab
        T = trace.ids.shape[1]
        out = np.full((len(batch), T), np.nan)
        hits = once.each(
            (self.spec, self.after_bos, "next_token_ids", vocab), batch, lambda toks: self._hits(toks, vocab)
        )
        if not batch:
            return out
        # gathered in one fancy index: a numpy index per position would dominate
        n_ = np.repeat(np.arange(len(batch)), [len(i) for i, _ in hits])
        offset = trace.valid.sum(1) - np.array([len(toks) for toks in batch])  # a BOS token shifts positions
        i_ = np.concatenate([i for i, _ in hits]) + offset[n_]
        t_ = np.concatenate([t for _, t in hits])
        out[n_, i_] = trace.logprobs[n_, i_, t_]
        return out

    def _hits(self, toks: Tokens, vocab) -> tuple[np.ndarray, np.ndarray]:
        """The positions of one input that expect a next token, and that token's id."""
        hits = [(i, vocab.id(e)) for i, e in enumerate(self.spec(toks)) if e is not None]
        if self.after_bos is not None and vocab.bos is not None and (e := self.after_bos(toks)) is not None:
            hits.insert(0, (-1, vocab.id(e)))  # BOS sits just before position 0
        return np.array([i for i, _ in hits], dtype=np.intp), np.array([t for _, t in hits], dtype=np.intp)

    def evaluate(self, trace, batch):
        lp = self._logp(trace, batch)
        if self.mean:
            has = np.isfinite(lp)
            count = has.sum(-1)
            # an input with nothing to predict is no evidence either way: it passes, at the band's top
            m = np.where(count > 0, np.where(has, lp, 0.0).sum(-1) / np.maximum(count, 1), self.hi)
            return Evaluation((count == 0) | ((m >= self.lo) & (m <= self.hi)), m, count)
        worst = np.nanmin(np.where(np.isnan(lp), np.inf, lp), axis=-1)
        worst = np.where(np.isfinite(worst), worst, 0.0)
        return Evaluation(worst >= self.lo, worst, (~np.isnan(lp)).sum(-1))

    def explain(self, trace, tokens):
        lp = self._logp(trace, [tokens])[0]
        labels = trace.tokens(0)
        offset = len(labels) - len(tokens)
        exp = list(self.spec(tokens))
        vocab = trace.model.vocab
        if offset > 0 and self.after_bos is not None:
            exp = [None] * (offset - 1) + [self.after_bos(tokens)] + exp
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
            return Explanation(len(labels) - 1, NothingExpected(self.lo, self.hi), rows, SpecEmpty())
        m = float(np.nanmean(lp)) if self.mean else None
        if self.mean:
            summary = MeanMiss(m, int(np.isfinite(lp).sum()), m > self.hi, self.lo, self.hi)
            q = int(np.nanargmax(lp)) if m > self.hi else int(np.nanargmin(lp))
        else:
            q = int(np.flatnonzero(np.nan_to_num(lp, nan=0.0) < self.lo)[0])
            summary = TokenMiss(q, labels[q], lp[q], self.lo)
        if self.mean and m > self.hi:
            hint, head, marks = self._flat_hint(trace), None, None
        else:
            hint, head, marks = self._token_hint(trace, q, vocab.id(exp[q - offset]))
            if self.advice:  # the puzzle's own advice, after the finding
                hint = Advised(hint, self.advice)
        return Explanation(q, summary, rows, hint, head, marks, "raises")

    @staticmethod
    def _flat_hint(trace) -> TooSure:
        model = trace.model
        heads = [(l, h) for l in range(model.n_layers) for h in range(model.n_heads(l))]
        return TooSure(tuple((l, h) for l, h in heads if model.head(l, h).pattern is None))

    def _token_hint(self, trace, q: int, want: int):
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
        shared = not self.mean and len(tied) > 1 and order[0] in tied and np.log(1 / len(tied)) >= self.lo
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
            said = Rival(q, w_tok, r_tok, p_w, p_r, "second" if order[0] == want else "prefers", need=self.lo)
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
        shortfall = self.lo - float(lp[want])
        if best is not None and best[4] > 1e-9 and (best[0] >= self.lo or best[0] - lp[want] >= shortfall / 2):
            _, l, h, gains, gain = best
            keys = [int(j) for j in np.flatnonzero(gains >= gains.max() - 1e-9)]
            pattern = trace.pattern(l, h)[0, q]
            top = int(np.argmax(pattern[: q + 1]))
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
