"""Mutants the audit proves equivalent from the weights, and the rule that proves each.

An edit of what a head or an MLP reads (W_Q, W_K, W_V, W_in, W_U) is a difference Δ over the residual directions it
reads. It changes nothing when, on every residual vector the puzzle's inputs can put where it reads, Δ takes in 0, or
(for a score) the same for every key a query sees. Each rule shows one way this holds:

- BOS-only query: the scores change only for queries at a position that sees one key (position 0, BOS, under a
  causal mask; every position of a head with window 1): that key gets all the attention whatever its score;
- masked: a (query, key) pair's score changes only where the mask or the head's window hides that key;
- nothing writes: Δ reads a direction that is 0 wherever it is read: no token's or position's embedding and no
  earlier head or MLP puts anything into it;
- always together: Δ reads directions that are equal on every residual vector there (bos and pos:0, when BOS always
  stands at position 0) with opposite signs (a swap of two columns), so their reads cancel;
- product unchanged: the edit leaves the scores' product as it was (a row of W_Q against an all-zero row of W_K:
  W_Qᵀ W_K is the same). Only scores are judged by a product: a value, an MLP unit or a logit must itself be the
  same, since a target may read it (HeadZ reads a head's values before W_O).

Where a direction can be non-zero is decided from the reference model's weights: BOS at position 0 (when the
vocabulary has one), any other token at any other position below n_ctx, and every direction an earlier part writes
(model/decompose.py's parts) taken as non-zero at every position. That reaches beyond what the inputs
can make, so a rule may spare too little, never too much. A reader behind a LayerNorm (which mixes every direction),
an edit of anything that writes, and a model not in float64 are never spared; directions a target's intervention
patches apart (Target.patched) are never taken as equal. A rule must hold at the answer's sharpness and at SHARPER
times it (the checker's scale range runs there), and the audit runs each spared mutant beside the reference on its
own inputs, which must give the same patterns, values, MLP units, residual stream and logits.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from circuits.model import functional as F
from circuits.model.decompose import Writes, parts

RULES = ("BOS-only query", "masked", "nothing writes", "always together", "product unchanged")
RTOL = 1e-9  # a difference below this share of the matrices' own size is rounding


@dataclass(frozen=True)
class Stage:
    """What the residual stream can hold where a reader reads it, on every input; index d runs over the residual's
    directions and, last, the constant 1 that a bias multiplies."""

    live: np.ndarray  # [d_model + 1, n_ctx] bool: where direction d can be non-zero
    classes: np.ndarray  # [d_model + 1] int: directions with one number are equal on every residual vector here


class Reach:
    """Each reader's Stage in a model: before layer l's heads (stage l), before its MLP (l + 0.5), at W_U
    (n_layers). Built from the reference model once per audit."""

    def __init__(self, model, n_ctx: int, apart: Sequence[np.ndarray] = ()):
        """`apart`: [d_model] bool masks of directions an intervention patches or zeroes together
        (Target.patched): a direction inside one is never taken as equal to one outside it."""
        self.n_ctx = n_ctx
        rows, positions = _embedded(model, n_ctx)  # [pairs, d_model + 1], [pairs]
        masks = [np.append(np.asarray(m, float), 0.0)[None, :] for m in apart]  # [1, d_model + 1] each
        self._rows = np.vstack([rows, *masks])  # a mask's row makes no direction non-zero, only splits classes
        self._live = np.stack([(rows[positions == p] != 0).any(0) for p in range(n_ctx)], 1)  # [d_model + 1, n_ctx]
        found = [(p.stage, p.out) for p in parts(model) if p.kind in (Writes.HEAD, Writes.MLP)]
        found += [(p.stage, p.out) for p in parts(model) if p.kind is Writes.B_O]
        zero = lambda out: np.zeros((1, out.shape[1]))  # noqa: E731  no part writes the constant 1
        self._writes = [(at, np.vstack([out, zero(out)])) for at, out in found]
        self._stages: dict[float, Stage] = {}

    def at(self, stage: float) -> Stage:
        if stage not in self._stages:
            written = [out for at, out in self._writes if at < stage]  # [d_model + 1, n] each
            reached = np.hstack(written).any(1) if written else np.zeros(self._rows.shape[1], bool)
            signature = np.hstack([self._rows.T, *written])  # [d_model + 1, …]: equal rows, equal directions
            _, classes = np.unique(signature, axis=0, return_inverse=True)
            self._stages[stage] = Stage(self._live | reached[:, None], classes.ravel())
        return self._stages[stage]


def _embedded(model, n_ctx: int) -> tuple[np.ndarray, np.ndarray]:
    """W_E's column plus W_pos's for every (token, position) an input can hold, with the constant 1 last
    ([pairs, d_model + 1]), and each pair's position: BOS at position 0 only (when the vocabulary has one)."""
    W_E = np.asarray(model.W_E, float)  # [d_model, n_vocab]
    W_pos = np.zeros((W_E.shape[0], n_ctx)) if model.W_pos is None else np.asarray(model.W_pos, float)
    bos = None if model.vocab.bos is None else model.vocab.id(model.vocab.bos)
    others = [t for t in range(W_E.shape[1]) if t != bos]
    pairs = [(t, p) for p in range(n_ctx) for t in ([bos] if p == 0 and bos is not None else others)]
    x = np.array([W_E[:, t] + W_pos[:, p] for t, p in pairs])  # [pairs, d_model]
    return np.hstack([x, np.ones((len(pairs), 1))]), np.array([p for _, p in pairs])


# --- the rules ------------------------------------------------------------------------------------------------------
def spared(reference, mutant, reach: Reach) -> tuple[str, ...] | None:
    """The rules (in RULES' order) that prove the `mutant` model computes what `reference` does on every input the
    puzzle promises; None when no rule does (or the edit touches anything that writes)."""
    if not _same_writers(reference, mutant):
        return None
    try:
        return _proved(reference, mutant, reach)
    except _Unproved:
        return None


def _proved(reference, mutant, reach: Reach) -> tuple[str, ...]:
    """spared()'s rules; _Unproved for the first edit no rule proves."""
    found: set[str] = set()
    for l, (a, b) in enumerate(zip(reference.blocks, mutant.blocks)):
        for x, y in zip(a.heads, b.heads):
            if not _equal(x, y, "W_Q", "W_K", "b_Q", "b_K"):
                found |= _or_fail(None if a.ln_attn is not None else _scores(x, y, reach.at(l), reach.n_ctx))
            if not _equal(x, y, "W_V", "b_V"):  # the values themselves, which a target may read (HeadZ)
                v = lambda h: _with_bias(h.W_V, h.b_V)  # noqa: E731  [d_head, d_model + 1]
                found |= _or_fail(None if a.ln_attn is not None else _reads(v(x), v(y), reach.at(l)))
        if a.mlp is not None and not _equal(a.mlp, b.mlp, "W_in", "b_in"):  # every unit: a target may read them
            pre = lambda m: _with_bias(m.W_in, m.b_in)  # noqa: E731  [d_mlp, d_model + 1]
            found |= _or_fail(None if a.ln_mlp is not None else _reads(pre(a.mlp), pre(b.mlp), reach.at(l + 0.5)))
    if reference.W_U is not None and not np.array_equal(reference.W_U, mutant.W_U):
        top = reach.at(len(reference.blocks))
        found |= _or_fail(None if reference.ln_final is not None else _reads(reference.W_U, mutant.W_U, top))
    return tuple(r for r in RULES if r in found) or ("product unchanged",)


class _Unproved(Exception):
    """An edit of a reader that no rule proves changes nothing."""


def _or_fail(rules: set[str] | None) -> set[str]:
    if rules is None:
        raise _Unproved
    return rules


def _with_bias(W: np.ndarray, b: np.ndarray | None) -> np.ndarray:  # [n, d_model], [n] -> [n, d_model + 1]
    b = np.zeros(W.shape[0]) if b is None else np.asarray(b, float)
    return np.hstack([np.asarray(W, float), b[:, None]])


def _reads(old: np.ndarray, new: np.ndarray, stage: Stage) -> set[str] | None:
    """Whether a reader's change from `old` to `new` ([n, d_model (+ 1)]: column d reads direction d) reads 0 on
    every residual vector of `stage`: the rules that show it, or None."""
    old, new = (np.pad(m, [(0, 0), (0, len(stage.classes) - m.shape[1])]) for m in (old, new))
    delta = new - old
    tol = RTOL * max(1.0, float(np.abs(old).max(initial=0)), float(np.abs(new).max(initial=0)))
    read = np.abs(delta).max(0, initial=0) > tol  # [d_model + 1]
    if not read.any():
        return {"product unchanged"}
    dead = ~stage.live.any(1)  # [d_model + 1]
    rules = {"nothing writes"} if (read & dead).any() else set()
    rest = np.where(dead[None, :], 0.0, delta)
    if (np.abs(rest) > tol).any():
        if (np.abs(rest @ _one_hot(stage.classes)) > tol).any():
            return None
        rules.add("always together")
    return rules


def _scores(x, y, stage: Stage, n_ctx: int) -> set[str] | None:
    """Whether head x's pattern is head y's on every input: their scores differ by D (x̃ᵀ D ỹ for query x̃ and key
    ỹ, a bias's 1 last) only where a query sees one key, where the key is hidden, or by directions that are 0 or
    cancel. The rules that show it, or None."""
    old = _with_bias(x.W_Q, x.b_Q).T @ _with_bias(x.W_K, x.b_K)  # [d_model + 1, d_model + 1]
    new = _with_bias(y.W_Q, y.b_Q).T @ _with_bias(y.W_K, y.b_K)
    D = new - old
    tol = RTOL * max(1.0, float(np.abs(old).max()), float(np.abs(new).max()))
    if not (np.abs(D) > tol).any():
        return {"product unchanged"}
    seen = F.causal_mask(n_ctx, x.window, x.mask == "causal")  # [query, key]
    rules = _terms(D, stage.live, seen, tol)
    if rules is not None:
        return rules
    C = _one_hot(stage.classes)  # [d_model + 1, classes]: a class's directions are equal, so their reads add
    first = np.array([np.flatnonzero(stage.classes == k)[0] for k in range(C.shape[1])])
    rules = _terms(C.T @ D @ C, stage.live[first], seen, tol)
    return None if rules is None else rules | {"always together"}


def _terms(D: np.ndarray, live: np.ndarray, seen: np.ndarray, tol: float) -> set[str] | None:
    """The rules that make each non-zero D[a, b] (query direction a, key direction b) change no pattern, or None
    when one is left that no rule covers. `live` [directions, positions], `seen` [query, key]."""
    alone = seen.sum(1) <= 1  # [query]: a query that sees one key gives it all the attention
    on = live.astype(float)
    dead = ~live.any(1)  # [directions]
    nothing = dead[:, None] | dead[None, :]
    bos_only = ~nothing & ~(live & ~alone[None, :]).any(1)[:, None]
    masked = ~nothing & ~bos_only & ((on @ seen.astype(float) @ on.T) == 0)  # no visible (query, key) pair
    terms = np.abs(D) > tol
    if (terms & ~(nothing | bos_only | masked)).any():
        return None
    found = [("nothing writes", nothing), ("BOS-only query", bos_only), ("masked", masked)]
    return {rule for rule, where in found if (terms & where).any()}


def _one_hot(classes: np.ndarray) -> np.ndarray:  # [d] -> [d, classes]
    return (classes[:, None] == np.arange(classes.max() + 1)[None, :]).astype(float)


def _equal(a, b, *names: str) -> bool:
    return all(_same(getattr(a, n), getattr(b, n)) for n in names)


def _same(a, b) -> bool:
    if a is None or b is None:
        return a is b
    return np.array_equal(np.asarray(a), np.asarray(b))


def _same_writers(a, b) -> bool:
    """Whether two models differ at most in what their heads, MLPs and W_U read (and are both run in float64)."""
    plain = all(m.dtype == np.float64 and m.qk_dtype == "float64" for m in (a, b))
    if not plain or (a.vocab, a.residual.labels, a.n_ctx, a.mask) != (b.vocab, b.residual.labels, b.n_ctx, b.mask):
        return False
    if str(a.qk_multiplier) != str(b.qk_multiplier) or len(a.blocks) != len(b.blocks):
        return False
    if not _equal(a, b, "W_E", "W_pos", "b_U") or (a.W_U is None) != (b.W_U is None):
        return False
    if not _same_norm(a.ln_final, b.ln_final):
        return False
    for x, y in zip(a.blocks, b.blocks):
        if len(x.heads) != len(y.heads) or not (_equal(x, y, "b_O") and _same_norm(x.ln_attn, y.ln_attn)):
            return False
        if not _same_norm(x.ln_mlp, y.ln_mlp) or (x.mlp is None) != (y.mlp is None):
            return False
        if x.mlp is not None and not (_equal(x.mlp, y.mlp, "W_out", "b_out") and x.mlp.act == y.mlp.act):
            return False
        for h, g in zip(x.heads, y.heads):
            same = (h.scale, h.window, h.mask, h.pattern) == (g.scale, g.window, g.mask, g.pattern)
            if not (same and _equal(h, g, "W_O")):
                return False
    return True


def _same_norm(a, b) -> bool:
    if a is None or b is None:
        return a is b
    return _equal(a, b, "w", "b") and a.eps == b.eps


# --- confirmed on the audit's inputs --------------------------------------------------------------------------------
KEEP = ("pattern", "v", "mlp_pre")  # what same_on compares, besides the final residual stream and the logits


def same_on(reference, mutant, batch, ran=None) -> bool:
    """Whether two models give the same patterns, values, MLP units, final residual stream and logits at every real
    position of `batch` (padding aside): a rule's proof, confirmed on inputs. `ran`: the reference's run of `batch`
    (keeping KEEP), when it is at hand."""
    if not batch:
        return True
    a = ran if ran is not None else reference.run(batch, keep=KEEP)
    b = mutant.run(batch, keep=KEEP)
    real = np.asarray(a.valid, bool)  # [b, T]

    def close(u, v, at) -> bool:
        if u is None or v is None:
            return u is None and v is None
        return bool(np.allclose(u[at], v[at], rtol=1e-9, atol=1e-9))

    if not (close(a.resid(), b.resid(), real) and close(a.logits, b.logits, real)):
        return False
    heads = lambda p: None if p is None else np.moveaxis(p, 1, 2)  # noqa: E731  [b, h, T, …] -> [b, T, h, …]
    return all(
        close(heads(x.pattern), heads(y.pattern), real)
        and close(heads(x.v), heads(y.v), real)
        and close(x.mlp_pre, y.mlp_pre, real)
        for x, y in zip(a.layers, b.layers)
    )


def n_ctx_of(puzzle, model) -> int:
    """The longest input the model runs, BOS counted: n_ctx, else the puzzle's longest input or example."""
    if model.n_ctx is not None:
        return int(model.n_ctx)
    bos = 1 if model.vocab.bos is not None else 0
    longest = max([len(model.vocab.split(e)) for e in puzzle.examples or ()], default=0)
    return max(getattr(puzzle.inputs, "max_len", 0) or 0, longest) + bos


def interventions(puzzle, model) -> list[np.ndarray]:
    """The [d_model] bool masks of the directions the puzzle's targets patch or zero (a Depends target's `into`): an
    intervention that zeroes bos but not pos:0 makes them differ, so no rule may take them as always together."""
    return [mask for t in puzzle.targets for mask in t.patched(model)]


# --- a mutant judged ---------------------------------------------------------------------------------------------
SHARPER = 10  # a rule must hold at this many times the answer's sharpness too (the checker's scale range runs there)


class Judge:
    """The reference's models and their Reach, made once per audit, judging each mutant that passes the fast check:
    spared (by the rules named) only when proved at the answer's sharpness and at SHARPER times it, and confirmed
    on `batch`."""

    def __init__(self, attempt, batch):
        from circuits.checking.margins import scaled

        self.attempt, self.batch = attempt, batch
        self.sharpness = list(attempt.puzzle.sharpness or ())
        self.scaled = lambda answer: scaled(answer, self.sharpness, SHARPER)  # noqa: E731
        self.models = [attempt.model()]
        if self.sharpness:
            self.models.append(attempt.model(self.scaled(attempt.answer)))
        n = n_ctx_of(attempt.puzzle, self.models[0])
        apart = interventions(attempt.puzzle, self.models[0])
        self.reaches = [Reach(m, n, apart) for m in self.models]
        self._ran = None  # the reference's run of `batch`, made when a mutant first needs it

    def __call__(self, answer, numbers=None) -> str | None:
        """The rules that spare `answer`, joined by " + " ("masked", "nothing writes + always together"), or None.
        `numbers` (mutants.Numbers) binds the matrices the edit left alone once for every mutant."""
        from circuits.errors import CircuitError

        bound = (lambda a: numbers.answer(self.attempt, a)) if numbers is not None else (lambda a: a)  # noqa: E731
        try:
            mutant = self.attempt.model(bound(answer))
            rules = spared(self.models[0], mutant, self.reaches[0])
            if rules is None:
                return None
            if len(self.models) > 1:
                sharper = self.attempt.model(bound(self.scaled(answer)))
                if spared(self.models[1], sharper, self.reaches[1]) is None:
                    return None
            if self._ran is None and self.batch:
                self._ran = self.models[0].run(self.batch, keep=KEEP)
            if not same_on(self.models[0], mutant, self.batch, self._ran):
                return None
        except CircuitError:
            return None
        return " + ".join(rules)
