"""What a puzzle checks: behaviour targets (outputs, attention, next tokens), structure and code targets.

A behaviour target evaluates a whole batch at once (`evaluate`) and explains one
failing input position by position (`explain`), with a hint where one can be derived.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from circuits.checking import behaviours, fields, once
from circuits.checking.readouts import HeadOutput, HeadZ, Readout, Residual  # noqa: F401  (re-exported)
from circuits.errors import CircuitError

Tokens = list[str]


# --- results -----------------------------------------------------------------------------------------
@dataclass
class Evaluation:
    """Per input: `ok` [b] and `worst` [b], the input's worst value of the target's metric."""

    ok: np.ndarray
    worst: np.ndarray


@dataclass
class Explanation:
    """One failing input, position by position, for the report."""

    position: int
    summary: str
    columns: list[str]
    rows: list[list[str]]
    hint: str
    head: tuple[int, int] | None = None
    marks: list[int] | None = None  # per query row: the key a target expects (−1: none)


def _fmt_vec(v, digits: int = 3) -> str:
    v = np.atleast_1d(np.asarray(v, dtype=float))
    small = 1e-3 if digits == 3 else 0.0
    return "[" + ", ".join(f"{x:.{digits}g}" if x != 0 and abs(x) >= small else "0" for x in v) + "]"


def _fmt_pair(expected, yours) -> tuple[str, str]:
    """Both vectors with just enough digits to show that they differ (3 when that is enough)."""
    for digits in (3, 6, 9, 12, 17):
        a, b = _fmt_vec(expected, digits), _fmt_vec(yours, digits)
        if a != b:
            return a, b
    return a, b


def _softmax(z: np.ndarray) -> np.ndarray:
    e = np.exp(z - z.max())
    return e / e.sum()


def factor_needed(scores: np.ndarray, ok: Callable[[np.ndarray], bool], top: float = 1e4) -> float | None:
    """The smallest factor on one query's scores `[keys]` whose softmax passes `ok` (None: not even ×`top`)."""
    if ok(_softmax(scores)):
        return 1.0
    hi = 2.0
    while not ok(_softmax(hi * scores)):
        hi *= 2
        if hi > top:
            return None
    lo = hi / 2
    for _ in range(40):
        mid = (lo + hi) / 2
        lo, hi = (lo, mid) if ok(_softmax(mid * scores)) else (mid, hi)
    return hi


def _scale_by(factor: float | None, q: int) -> str:
    if factor is None:
        return "no scale up to ×10⁴ is enough, so sharpening alone will not fix it"
    return f"at this length ({q + 1} keys visible) the scores need ×{factor:.3g} (scale W_Q or W_K, or your sharpness symbol, by that much)"


def _group(label: str) -> str:
    """A residual direction's family: tok:a → tok:*, cos:1 and sin:1 → cos/sin:* (position)."""
    prefix, colon, _ = label.partition(":")
    if not colon:
        return label
    return "cos/sin:*" if prefix in ("cos", "sin") else f"{prefix}:*"


def _rotates(W: np.ndarray) -> bool:
    """Whether some row of W mixes two directions (a rotation of a cos/sin pair), rather than weighing one."""
    return bool(((np.asarray(W) != 0).sum(-1) >= 2).any())


def _groups(labels) -> str:
    return ", ".join(dict.fromkeys(_group(x) for x in labels))


def _tok(tokens: Tokens, i: int) -> str:
    return f"{i} {tokens[i]!r}"


class Target:
    """Base: a named check. `higher_is_worse` says how `worst` reads (errors vs attention mass)."""

    kind = "behaviour"
    label = "target"
    metric = "metric"
    higher_is_worse = True
    reads_logits = False

    @property
    def stage(self) -> float:
        """Where in the circuit the target looks: its layer (a readout after layer l: l + 0.5; the logits: ∞)."""
        if hasattr(self, "layer"):
            return float(self.layer)
        readout = getattr(self, "readout", None)
        if isinstance(readout, Residual):
            return np.inf if readout.after_layer is None else readout.after_layer + 0.5
        return float(readout.layer) if readout is not None else np.inf

    def evaluate(self, trace, batch: list[Tokens]) -> Evaluation:
        raise NotImplementedError

    def explain(self, trace, tokens: Tokens) -> Explanation:
        raise NotImplementedError

    def classes_ok(self, canon: Callable[[Tokens], Tokens], sample: list[Tokens]) -> bool:
        """Whether this target's spec gives the same answer on each input and its class-canonical form."""
        return True


def _spec_array(spec, batch: list[Tokens], T: int, k: int, what: str) -> np.ndarray:
    """The spec's expectations `[b, T, k]` (NaN where none); a BOS token shifts positions by one."""
    out = np.full((len(batch), T, k), np.nan)
    rows = once.each((spec, "expected", k, what), batch, lambda toks: _spec_row(spec, toks, k, what),
                     lambda inputs: _spec_rows(spec, inputs, k, what))
    L = len(batch[0]) if batch else 0
    if all(len(t) == L for t in batch):  # the common case: one copy for the whole batch
        out[:, T - L :] = np.stack(rows) if rows else 0.0
        return out
    for n, (toks, row) in enumerate(zip(batch, rows)):
        out[n, T - len(toks) :] = row
    return out


def _batched_array(batched, batch: list[Tokens], T: int, k: int, what: str) -> np.ndarray:
    """A batched spec's expectations `[b, T, k]` for inputs of one length (NaN where none, BOS shifting as above)."""
    b, L = len(batch), len(batch[0])
    exp = np.asarray(batched(np.array(batch, dtype=str).reshape(b, L)), dtype=float)
    if exp.shape != (b, L, k):
        raise CircuitError(f"the batched spec for {what} returned shape {exp.shape} for {b} inputs of {L} tokens; "
                           f"it needs ({b}, {L}, {k})")
    out = np.full((b, T, k), np.nan)
    out[:, T - L :] = exp
    return out


def _spec_rows(spec, batch: list[Tokens], k: int, what: str) -> list[np.ndarray]:
    """`_spec_row` of each input, converted in one step where every input has one length and a number everywhere."""
    specs = [spec(toks) for toks in batch]
    L = len(batch[0]) if batch else 0
    if all(len(e) == L == len(t) for e, t in zip(specs, batch)):
        try:
            return list(np.asarray(specs, dtype=float).reshape(len(batch), L, k))
        except (TypeError, ValueError):
            pass
    return [_spec_row(lambda _, e=e: e, toks, k, what) for toks, e in zip(batch, specs)]


def _spec_row(spec, toks: Tokens, k: int, what: str) -> np.ndarray:
    """One input's expectations `[len(toks), k]`, NaN where the spec says None."""
    exp = spec(toks)
    if len(exp) != len(toks):
        raise CircuitError(f"the spec for {what} returned {len(exp)} values for an input of {len(toks)} tokens {''.join(toks)!r}")
    try:  # the common cases: an expectation at every position, or None (NaN) at some
        return np.asarray(exp, dtype=float).reshape(len(toks), k)
    except (TypeError, ValueError):
        try:
            return np.asarray([[np.nan] * k if e is None else e for e in exp], dtype=float).reshape(len(toks), k)
        except (TypeError, ValueError):
            pass
    out = np.full((len(toks), k), np.nan)
    for i, e in enumerate(exp):
        if e is not None:
            e = np.atleast_1d(np.asarray(e, dtype=float))
            if e.shape != (k,):
                raise CircuitError(f"the spec for {what} gave {e.shape[0]} numbers at position {i} but the readout has {k}")
            out[i] = e
    return out


@dataclass
class Output(Target):
    """At every position the readout is within `tol` (max abs difference) of `spec(tokens)[i]`.

    `batched`, optional, is the same spec on a whole batch at once, for speed where a Python loop per
    input is slow: tokens `[b, L]` (a numpy array of str) -> expectations `[b, L, k]` (NaN for None).
    The checker uses it on its batches; `spec` stays the readable reference, shown in explanations,
    and the puzzle's tests hold the two equal."""

    readout: Readout
    spec: Callable[[Tokens], Sequence]
    tol: float = 0.1
    description: str = ""
    batched: Callable[[np.ndarray], np.ndarray] | None = None
    metric: str = field(default="largest error", init=False)

    def __post_init__(self):
        owner = type(self).__name__
        fields.number(owner, "tol", self.tol, example="0.1")
        fields.function(owner, "spec", self.spec, optional=False)
        fields.function(owner, "batched", self.batched)

    @property
    def label(self) -> str:
        return self.description or f"{self.readout.label} ≈ spec within {self.tol:g}"

    def evaluate(self, trace, batch):
        yours = self.readout.get(trace)  # [b, T, k]
        if self.batched is not None and batch and all(len(t) == len(batch[0]) for t in batch):
            exp = _batched_array(self.batched, batch, yours.shape[1], yours.shape[2], self.label)
        else:
            exp = _spec_array(self.spec, batch, yours.shape[1], yours.shape[2], self.label)
        err = np.nanmax(np.where(np.isnan(exp), -np.inf, np.abs(yours - exp)), axis=-1)  # [b, T]
        err = np.where(np.isfinite(err), err, np.nan)
        worst = np.nanmax(np.where(np.isnan(err), -np.inf, err), axis=-1)
        worst = np.where(np.isfinite(worst), worst, 0.0)
        return Evaluation(worst <= self.tol, worst)

    def classes_ok(self, canon, sample):
        return all(np.allclose(np.asarray(self.spec(s), dtype=float), np.asarray(self.spec(canon(s)), dtype=float))
                   for s in sample)

    def explain(self, trace, tokens):
        yours = self.readout.get(trace)[0]
        exp = _spec_array(self.spec, [tokens], yours.shape[0], yours.shape[1], self.label)[0]
        err = np.where(np.isnan(exp), 0.0, np.abs(yours - exp)).max(-1)
        bad = np.flatnonzero(err > self.tol)
        q = int(bad[0]) if len(bad) else int(np.argmax(err))
        tokens = trace.tokens(0)
        rows = [[str(i), repr(t), "—" if np.isnan(exp[i]).all() else _fmt_vec(exp[i]), _fmt_vec(yours[i]),
                 f"{err[i]:.3g}" if err[i] >= 1e-9 else "0", "✗" if err[i] > self.tol else "✓"] for i, t in enumerate(tokens)]
        shown_exp, shown_yours = _fmt_pair(exp[q], yours[q])
        summary = (f"at position {_tok(tokens, q)} the expected {self.readout.label} is {shown_exp}, "
                   f"yours is {shown_yours} (error {err[q]:.3g} > tolerance {self.tol:g})")
        head = getattr(self.readout, "layer", None), getattr(self.readout, "head", None)
        head = head if head[0] is not None else None
        hint = self._hint(trace, tokens, q, exp[q]) if head else self._residual_hint(trace, q, yours[q] - exp[q])
        return Explanation(q, summary, ["pos", "token", "expected", "yours", "error", ""], rows, hint, head)

    def _residual_hint(self, trace, q: int, error: np.ndarray) -> str:
        """Which part of the model wrote the wrong amount into the worst direction."""
        model = trace.model
        head_out = [layer.head_out[0, :, q] for layer in trace.layers]  # per layer: [h, d_model]

        def parts(col: int) -> dict[str, float]:
            out = {"the embedding": float((trace.embed + trace.pos_embed)[0, q, col])}
            for l, layer in enumerate(trace.layers):
                out |= {f"head {l}.{h}": float(head_out[l][h, col]) for h in range(len(layer.heads))}
                if layer.mlp_out is not None:
                    out[f"the MLP of layer {l}"] = float(layer.mlp_out[0, q, col])
            return out

        names = self.readout.components(model)
        order = [int(d) for d in np.argsort(-np.nan_to_num(np.abs(error))) if abs(error[d]) > self.tol]
        for d in order:  # prefer a direction whose error one part of the model explains exactly
            p = parts(model.residual.index(names[d]))
            culprit = min(p, key=lambda k: abs(p[k] - error[d]))
            if abs(p[culprit] - error[d]) <= self.tol and abs(p[culprit]) > 1e-12:
                written = ", ".join(f"{k} {v:.3g}" for k, v in p.items() if abs(v) > 1e-12)
                return (f"direction {names[d]!r} at position {q} is off by {error[d]:.3g}, exactly what {culprit} writes "
                        f"there (written: {written}): look at W_O and W_V of {culprit}")
        d = order[0]
        p = parts(model.residual.index(names[d]))
        written = ", ".join(f"{k} {v:.3g}" for k, v in p.items() if abs(v) > 1e-12) or "nothing"
        heads = [k for k, v in p.items() if k.startswith("head") and abs(v) > 1e-12]
        if heads:
            return (f"direction {names[d]!r} at position {q} is off by {error[d]:.3g} (written there: {written}): "
                    f"{' and '.join(heads)} {'writes' if len(heads) == 1 else 'write'} it, but the wrong value — check "
                    f"which direction W_V of {heads[-1]} reads (from which position) and where its W_O writes it")
        return (f"direction {names[d]!r} at position {q} is off by {error[d]:.3g} (written there: {written}): the head "
                "that should write it does not — check which rows of W_O write this direction, and what W_V reads")

    def _hint(self, trace, tokens, q, expected) -> str:
        l, h = self.readout.layer, self.readout.head
        name = f"head {l}.{h}"
        pattern = trace.pattern(l, h)[0, q, : q + 1]
        values = self.readout.values(trace)[0, : q + 1]  # [q+1, k]
        near = np.abs(values - expected).max(-1) <= self.tol
        fixed = trace.model.head(l, h).pattern is not None
        if near.any():
            good = np.flatnonzero(near)
            mass = float(pattern[good].sum())
            where = ", ".join(_tok(tokens, int(j)) for j in good[:4]) + (" …" if len(good) > 4 else "")
            if fixed:
                return (f"{name} has a fixed pattern, and attending to {where} would give the expected vector: "
                        "the values are right, so check which head or layer the puzzle expects")
            scores = trace.layers[l].scores[0, h, q, : q + 1]
            gap = float(scores[good].min() - np.delete(scores, good).max()) if len(good) <= q else np.inf
            if np.isfinite(gap) and gap > 0:
                close = lambda p: np.abs(p @ values - expected).max() <= self.tol  # noqa: E731
                return (f"attention is aimed right but not sharp enough: at position {q} the keys whose value would give "
                        f"the expected vector ({where}) score {gap:.3g} above the rest, yet hold only {mass:.3f} of "
                        f"{name}'s attention because {q + 1 - len(good)} other keys share the softmax. The gap must grow "
                        f"with length (about log(length / tolerance)): {_scale_by(factor_needed(scores, close), q)}.")
            return (f"attention went to the wrong positions: only {mass:.3f} of {name}'s attention at position {q} is on "
                    f"the keys whose value would give the expected vector ({where}). Look at W_Q and W_K.")
        if np.abs(values.mean(0) - expected).max() <= self.tol:
            return (f"attending evenly to positions 0..{q} would give the expected vector, but {name} does not: "
                    "look at W_Q and W_K (a zero W_QK attends evenly)")
        matrices = "W_V and W_O" if isinstance(self.readout, HeadOutput) else "W_V"
        return (f"no key's value is close to the expected vector {_fmt_vec(expected)} (the values at positions 0..{q} are "
                f"{', '.join(_fmt_vec(v) for v in values[:4])}{' …' if q >= 4 else ''}), so no attention pattern can "
                f"produce it: look at {matrices}")


@dataclass
class Attention(Target):
    """Head `layer.head` puts at least `min_mass` of its attention on the target key at every query that has one.

    `where` is a behaviour name ("previous-token", "induction", …, see circuits.checking.behaviours),
    a function of token ids `[b, T] -> [b, T]`, or `per_input=True` with a function
    tokens -> list of key positions (None where a query has no target). A query may also
    have a set of target keys (a collection in a per_input list, or a function of ids
    returning bool `[b, query, key]`): the mass on all of them counts, and with
    `evenly=True` each of the k keys must hold at least min_mass / k.
    """

    layer: int
    head: int
    where: str | Callable
    min_mass: float = 0.9
    per_input: bool = False
    description: str = ""
    skip_first: int = 0
    evenly: bool = False
    metric: str = field(default="smallest attention on target", init=False)
    higher_is_worse: bool = field(default=False, init=False)

    def __post_init__(self):
        fields.whole("Attention", "layer", self.layer)
        fields.whole("Attention", "head", self.head)
        fields.number("Attention", "min_mass", self.min_mass)
        fields.whole("Attention", "skip_first", self.skip_first)

    @property
    def label(self) -> str:
        what = self.where if isinstance(self.where, str) else getattr(self.where, "__name__", "target")
        return self.description or f"head {self.layer}.{self.head} puts ≥ {self.min_mass:g} of its attention on {what}"

    def targets(self, trace, batch) -> np.ndarray:  # [b, T]: the target key, the latest one where a query has several
        if not self.per_input:
            t = self._from_ids(trace)
            if t.ndim == 2:
                return t
        keys = self.key_sets(trace, batch)
        T = keys.shape[-1]
        return np.where(keys.any(-1), T - 1 - np.argmax(keys[..., ::-1], axis=-1), -1)

    def _from_ids(self, trace) -> np.ndarray:  # [b, T] key positions, or [b, T, T] bool key sets
        fn = behaviours.BEHAVIOURS[self.where] if isinstance(self.where, str) else self.where
        t = np.asarray(fn(trace.ids))
        if self.skip_first:
            t = t.copy()
            t[:, : self.skip_first] = -1 if t.ndim == 2 else False
        return t

    def key_sets(self, trace, batch) -> np.ndarray:  # [b, query, key] bool: the keys each query's target allows
        T = trace.ids.shape[1]
        if not self.per_input:
            t = self._from_ids(trace)
            if t.ndim == 3:
                return t.astype(bool)
            return (t[:, :, None] == np.arange(T)) & (t[:, :, None] >= 0)
        out = np.zeros((len(batch), T, T), dtype=bool)
        pairs = once.each((self.where, "key sets"), batch, self._pairs)
        # one fancy assignment at the end: a Python loop per query would dominate
        n_ = np.repeat(np.arange(len(batch)), [len(q) for q, _ in pairs])
        q_ = np.concatenate([q for q, _ in pairs]) if pairs else np.zeros(0, dtype=int)
        k_ = np.concatenate([k for _, k in pairs]) if pairs else np.zeros(0, dtype=int)
        offset = T - len(batch[0]) if batch else 0  # a BOS token shifts positions
        out[n_, q_ + offset, k_ + offset] = True
        return out

    def _pairs(self, toks: Tokens) -> tuple[np.ndarray, np.ndarray]:
        """One input's (query, key) pairs: every key the query's target allows."""
        q_, k_ = [], []
        for i, k in enumerate(self.where(toks)):
            if k is None:
                continue
            keys = (k,) if isinstance(k, (int, np.integer)) else tuple(k)
            q_ += [i] * len(keys)
            k_ += keys
        return np.asarray(q_, dtype=int), np.asarray(k_, dtype=int)

    def mass(self, pattern, keys, valid=None) -> np.ndarray:  # [b, T, T], [b, T, T] -> [b, T], NaN where no target
        has = keys.any(-1) if valid is None else keys.any(-1) & valid
        if self.evenly:  # the least-attended key of the set, as a share of an even split
            got = np.where(keys, pattern, np.inf).min(-1) * keys.sum(-1)
        else:
            got = np.where(keys, pattern, 0.0).sum(-1)
        return np.where(has, got, np.nan)

    def evaluate(self, trace, batch):
        pattern = trace.pattern(self.layer, self.head)  # [b, T, T]
        mass = self.mass(pattern, self.key_sets(trace, batch), trace.valid)
        worst = np.nanmin(np.where(np.isnan(mass), np.inf, mass), axis=-1)
        worst = np.where(np.isfinite(worst), worst, 1.0)
        return Evaluation(worst >= self.min_mass, worst)

    def classes_ok(self, canon, sample):
        if not self.per_input:
            return self.where in ("previous-token", "current-token", "first-token")
        return all(list(self.where(s)) == list(self.where(canon(s))) for s in sample)

    def explain(self, trace, tokens):
        pattern = trace.pattern(self.layer, self.head)[0]
        keys = self.key_sets(trace, [tokens])[0]  # [T, T]
        targets = self.targets(trace, [tokens])[0]
        labels = trace.tokens(0)
        mass = self.mass(pattern[None], keys[None])[0]
        bad = np.flatnonzero(np.nan_to_num(mass, nan=1.0) < self.min_mass)
        q = int(bad[0])
        t = int(targets[q])
        top = int(np.argmax(pattern[q]))
        on = lambda i: ", ".join(str(int(k)) for k in np.flatnonzero(keys[i]))  # noqa: E731
        rows = []
        for i in range(len(labels)):
            if targets[i] < 0:
                rows.append([str(i), repr(labels[i]), "—", f"{int(np.argmax(pattern[i]))} ({pattern[i].max():.3f})", "—", ""])
                continue
            rows.append([str(i), repr(labels[i]), on(i) if keys[i].sum() > 1 else f"{targets[i]} {labels[targets[i]]!r}",
                         f"{int(np.argmax(pattern[i]))} ({pattern[i].max():.3f})", f"{mass[i]:.3f}",
                         "✗" if mass[i] < self.min_mass else "✓"])
        name = f"head {self.layer}.{self.head}"
        n_keys = int(keys[q].sum())
        if n_keys == 1:
            where = f"the target is key {_tok(labels, t)}, but {name} puts only {mass[q]:.3f} there (needs ≥ {self.min_mass:g})"
        elif self.evenly:
            least = min(np.flatnonzero(keys[q]), key=lambda k: pattern[q, k])
            where = (f"the targets are keys {on(q)}, each needing ≥ {self.min_mass / n_keys:.3g} (an even share of "
                     f"{self.min_mass:g}), but {name} puts only {pattern[q, least]:.3f} on key {_tok(labels, int(least))}")
        else:
            where = f"the targets are keys {on(q)}, but {name} puts only {mass[q]:.3f} on them together (needs ≥ {self.min_mass:g})"
        summary = f"at query {_tok(labels, q)} {where}; its largest weight, {pattern[q, top]:.3f}, is on key {_tok(labels, top)}"
        if trace.model.head(self.layer, self.head).pattern is not None:
            hint = f"{name} has a fixed pattern; this target needs a computed one"
        elif keys[q, top]:
            scores = trace.layers[self.layer].scores[0, self.head, q, : q + 1]
            inside, rest = scores[keys[q, : q + 1]], scores[~keys[q, : q + 1]]
            if self.evenly and inside.max() - inside.min() > 1e-9 * max(1.0, float(np.abs(inside).max())):
                tied = ", ".join(f"{int(k)}: {scores[k]:.3g}" for k in np.flatnonzero(keys[q, : q + 1]))
                hint = (f"{name} should spread its attention evenly over keys {on(q)}, but their scores differ ({tied}). "
                        "Look at W_Q and W_K: which directions make these keys score differently?")
            else:
                gap = float(inside.min() - rest.max()) if len(rest) else np.inf
                target_keys = keys[q, : q + 1]
                need = self.min_mass / n_keys if self.evenly else self.min_mass
                ok = (lambda p: p[target_keys].min() >= need) if self.evenly else (lambda p: p[target_keys].sum() >= need)
                hint = (f"{name} attends most to the right key{'s' if n_keys > 1 else ''}, but the score there beats the "
                        f"next best by only {gap:.3g}: sharpen the pattern; {_scale_by(factor_needed(scores, ok), q)}")
        else:
            hint = self._wrong_key_hint(trace, q, top, t, name)
        return Explanation(q, summary, ["query", "token", "target key", "argmax key (weight)", "on target", ""],
                           rows, hint, (self.layer, self.head), [int(x) for x in targets])

    def _wrong_key_hint(self, trace, q: int, top: int, t: int, name: str) -> str:
        """Why key `top` beat the target `t`: directions read that nothing writes, a tie, or which directions decide it."""
        layer = trace.layers[self.layer]
        head = layer.heads[self.head]
        labels = trace.model.residual.labels
        x = layer.attn_in[0, : q + 1]  # [keys, d_model]: what the head reads
        s = layer.scores[0, self.head, q]
        for what, W in (("keys", head.W_K), ("queries", head.W_Q)):
            read = np.flatnonzero(np.abs(W).sum(0) > 0)
            if len(read) and not np.abs(x[:, read]).any():
                written = np.flatnonzero(np.abs(layer.attn_in[0]).sum(0) > 0)
                writers = [f"head {l}.{h}" for l in range(self.layer) for h in range(trace.model.n_heads(l))
                           if np.abs(trace.model.head(l, h).W_O).any()]
                earlier = ", ".join(["the embedding", *writers])
                fix = f"Look at W_{'K' if what == 'keys' else 'Q'} of {name}" + "".join(
                    f", or at W_O of {w}" for w in writers[:3]) + ": one must read what the other writes"
                return (f"{name}'s {what} read {_groups(labels[i] for i in read)}, which nothing writes before layer "
                        f"{self.layer} ({earlier} write only {_groups(labels[i] for i in written) or 'nothing'} at this "
                        f"input), so every key scores the same ({s[t]:.3g}). {fix}")
        q_vec = layer.q[0, self.head, q, : head.W_K.shape[0]]
        per_dir = (q_vec @ head.W_K) * (x[t] - x[top])  # [d_model]: how much each key direction favours the target
        if abs(per_dir.sum()) > 1e-12:  # in the score's own units (the attention scale, if any)
            per_dir = per_dir * (s[t] - s[top]) / per_dir.sum()
        by_group: dict[str, float] = {}
        for i in np.flatnonzero(np.abs(per_dir) > 1e-9):
            by_group[_group(labels[i])] = by_group.get(_group(labels[i]), 0.0) + float(per_dir[i])
        if abs(s[top] - s[t]) <= 1e-9 * max(1.0, abs(float(s[t]))):
            differ = np.flatnonzero(np.abs(x[t] - x[top]) > 1e-9)
            return (f"indistinguishable keys: key {top} and the target key {t} both score {s[t]:.6g}, so {name} splits "
                    f"its attention between them. Their residuals differ in {_groups(labels[i] for i in differ) or 'nothing'}: "
                    "look at W_Q and W_K — reading those directions would make the target key score higher")
        pro = {g: v for g, v in by_group.items() if v > 0}
        con = {g: -v for g, v in by_group.items() if v < 0}
        said = lambda d, who: " and ".join(  # noqa: E731
            f"{g} favour{'s' if '*' not in g else ''} {who} by {v:.3g}" for g, v in sorted(d.items(), key=lambda kv: -kv[1]))
        head_line = f"attention went to the wrong position: key {top} scores {s[top]:.3g} against {s[t]:.3g} for the target key {t}"
        if not con:
            return f"{head_line}. Look at W_Q and W_K"
        worst = max(con, key=con.get)
        favours = f"; of the directions W_K reads, {said(con, f'key {top}')}"
        if pro:
            favours += f", {said(pro, 'the target')}"
        if worst == "cos/sin:*" and pro:
            advice = (f"the position term outweighs the {', '.join(pro)} term that should decide: keep the weight on "
                      "position smaller than the content's lead at every distance (look at W_Q's entries on cos/sin)")
        elif worst == "cos/sin:*" and _rotates(head.W_Q):
            advice = "look at W_Q and W_K on cos/sin: W_Q rotates the position, so check the rotation's direction and its sign"
        elif worst == "cos/sin:*":
            advice = "look at the signs and sizes of W_Q's and W_K's entries on cos/sin"
        else:
            advice = f"look at W_Q and W_K on {worst}"
        return f"{head_line}{favours}: {advice}"


@dataclass
class NextToken(Target):
    """Log-probabilities of the next token from the logits.

    `spec(tokens)[i]` is the token expected after position i (None: no expectation).
    With `mean=True` the mean log-prob over expected positions must lie in [lo, hi];
    otherwise every expected position's log-prob must be ≥ lo.
    """

    spec: Callable[[Tokens], Sequence]
    lo: float = -0.1
    hi: float = 0.0
    mean: bool = False
    description: str = ""
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
        return f"mean next-token log-prob in [{self.lo:g}, {self.hi:g}]" if self.mean else f"every expected next token has log-prob ≥ {self.lo:g}"

    def _logp(self, trace, batch) -> np.ndarray:  # [b, T] with NaN where no expectation
        if trace.logprobs is None:
            raise CircuitError(f"{self.label}: the model has no W_U, so it makes no predictions")
        vocab = trace.model.vocab
        T = trace.ids.shape[1]
        out = np.full((len(batch), T), np.nan)
        hits = once.each((self.spec, "next-token ids", vocab), batch, lambda toks: self._hits(toks, vocab))
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
        return np.array([i for i, _ in hits], dtype=np.intp), np.array([t for _, t in hits], dtype=np.intp)

    def evaluate(self, trace, batch):
        lp = self._logp(trace, batch)
        if self.mean:
            has = np.isfinite(lp)
            count = has.sum(-1)
            # an input with nothing to predict is no evidence either way: it passes, at the band's top
            m = np.where(count > 0, np.where(has, lp, 0.0).sum(-1) / np.maximum(count, 1), self.hi)
            return Evaluation((count == 0) | ((m >= self.lo) & (m <= self.hi)), m)
        worst = np.nanmin(np.where(np.isnan(lp), np.inf, lp), axis=-1)
        worst = np.where(np.isfinite(worst), worst, 0.0)
        return Evaluation(worst >= self.lo, worst)

    def explain(self, trace, tokens):
        lp = self._logp(trace, [tokens])[0]
        labels = trace.tokens(0)
        offset = len(labels) - len(tokens)
        exp = list(self.spec(tokens))
        vocab = trace.model.vocab
        rows = []
        for i, t in enumerate(labels):
            j = i - offset
            e = exp[j] if 0 <= j < len(exp) else None
            top = vocab.tokens[int(np.argmax(trace.logprobs[0, i]))]
            rows.append([str(i), repr(t), "—" if e is None else repr(e), repr(top),
                         "—" if np.isnan(lp[i]) else f"{lp[i]:.3f}"])
        if not np.isfinite(lp).any():  # a mean over no positions counts as 0 (see evaluate)
            summary = f"no position of this input has an expected next token; the mean counts as 0, outside [{self.lo:g}, {self.hi:g}]"
            return Explanation(len(labels) - 1, summary, ["pos", "token", "expected next", "your top guess", "log-prob"], rows,
                               "the spec expects nothing of this input: widen the band to include 0, or check the spec")
        m = float(np.nanmean(lp)) if self.mean else None
        if self.mean:
            n = int(np.isfinite(lp).sum())
            side = " (above the band: surer than the context allows)" if m > self.hi else ""
            summary = (f"mean log-prob {m:.3f} over {n} predicted position{'s' if n != 1 else ''}{side}; "
                       f"needs [{self.lo:g}, {self.hi:g}]")
            q = int(np.nanargmax(lp)) if m > self.hi else int(np.nanargmin(lp))
        else:
            q = int(np.flatnonzero(np.nan_to_num(lp, nan=0.0) < self.lo)[0])
            summary = f"after position {_tok(labels, q)} the expected next token has log-prob {lp[q]:.3f} < {self.lo:g}"
        top_is_expected = exp[q - offset] == vocab.tokens[int(np.argmax(trace.logprobs[0, q]))]
        if self.mean and m > self.hi:
            hint = ("where the context cannot tell the next token, the prediction must stay flat, and yours is not: "
                    "check where your heads attend when no key matches (W_Q, W_K) and what they write there "
                    "(W_V, W_O, W_U)")
        elif top_is_expected:
            hint = (f"the expected token is your top guess after position {q}, but with log-prob only {lp[q]:.3g}. First "
                    "check that the attention behind it is on the right key and not split with another (circuits show; "
                    "W_Q and W_K decide it): a larger scale would only hide that. If it is, sharpen the prediction "
                    "(a larger scale in W_U)")
        else:
            hint = ("check the induction head's pattern first (circuits show; W_Q and W_K decide it), then the path "
                    "from its output to W_U: the attended token's content must reach the unembedding (W_V, W_O, W_U)")
        return Explanation(q, summary, ["pos", "token", "expected next", "your top guess", "log-prob"], rows, hint)


@dataclass
class Structure(Target):
    """Exact checks on the weights: `check(answer, model)` returns (what, yours, expected) triples of sympy matrices."""

    description: str
    check: Callable
    kind: str = field(default="structure", init=False)

    @property
    def label(self) -> str:
        return self.description

    def run(self, answer, model) -> list[tuple[str, object, object, bool]]:
        import sympy

        out = []
        for what, yours, expected in self.check(answer, model):
            yours, expected = sympy.Matrix(yours), sympy.Matrix(expected)
            same = yours.shape == expected.shape and (yours - expected).applyfunc(sympy.simplify).is_zero_matrix
            out.append((what, yours, expected, bool(same)))
        return out


@dataclass
class Code(Target):
    """A code puzzle's check: `compare(answer, example)` returns None when the learner's code agrees, else why not."""

    description: str
    strategy: Callable  # () -> hypothesis strategy of examples
    compare: Callable
    examples: Sequence = ()
    kind: str = field(default="code", init=False)

    @property
    def label(self) -> str:
        return self.description
