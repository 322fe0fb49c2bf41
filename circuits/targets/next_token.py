"""NextToken: the log-probability of the expected next token, position by position or as a mean."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from circuits.errors import CircuitError
from circuits.targets import authored, fields, once
from circuits.targets.base import Evaluation, Shows, Target, Tokens

NEAR_TIE = 0.05  # log-probs closer than this (5% in probability) are a near tie: no sharpness worth the name parts them


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

    def logp(self, trace, batch) -> np.ndarray:  # [b, T] with NaN where no expectation
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
        expected = self.spec(toks)
        at = [i for i, e in enumerate(expected) if e is not None]
        try:
            ids = [vocab.ids[expected[i]] for i in at]  # the hot path: one dict look-up per token
        except KeyError:
            ids = [vocab.id(expected[i]) for i in at]  # the one-line error naming the unknown token
        if self.after_bos is not None and vocab.bos is not None and (e := self.after_bos(toks)) is not None:
            at.insert(0, -1)  # BOS sits just before position 0
            ids.insert(0, vocab.id(e))
        return np.array(at, dtype=np.intp), np.array(ids, dtype=np.intp)

    def evaluate(self, trace, batch):
        lp = self.logp(trace, batch)
        if self.mean:
            has = np.isfinite(lp)
            count = has.sum(-1)
            # an input with nothing to predict is no evidence either way: it passes, at the band's top
            m = np.where(count > 0, np.where(has, lp, 0.0).sum(-1) / np.maximum(count, 1), self.hi)
            return Evaluation((count == 0) | ((m >= self.lo) & (m <= self.hi)), m, count)
        worst = np.nanmin(np.where(np.isnan(lp), np.inf, lp), axis=-1)
        worst = np.where(np.isfinite(worst), worst, 0.0)
        return Evaluation(worst >= self.lo, worst, (~np.isnan(lp)).sum(-1))
