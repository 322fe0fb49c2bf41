"""What a puzzle checks: behaviour targets (outputs, attention, next tokens), structure and code targets.

A behaviour target evaluates a whole batch at once (`evaluate`) and explains one
failing input position by position (`explain`), with a hint where one can be derived.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from circuits.checking import behaviours, diagnosis, fields, once
from circuits.checking.readouts import HeadOutput, HeadZ, Readout, Residual  # noqa: F401  (re-exported)
from circuits.errors import CircuitError

Tokens = list[str]


# --- results -----------------------------------------------------------------------------------------
@dataclass
class Evaluation:
    """Per input: `ok` [b] and `worst` [b], the input's worst value of the target's metric."""

    ok: np.ndarray
    worst: np.ndarray
    checked: np.ndarray | None = None  # [b] positions that had an expectation (None: the target does not count)


@dataclass
class Explanation:
    """One failing input, position by position, for the report."""

    position: int
    summary: str
    columns: list[str]
    rows: list[list[str]]
    hint: str
    head: tuple[int, int] | None = None
    marks: list | None = None  # per query row: the key (or keys) a target expects (−1: none)
    marks_mean: str = "* = target key"
    mlp: int | None = None  # the layer whose MLP the hint is about


NEAR_TIE = 0.05  # log-probs closer than this (5% in probability) are a near tie: no sharpness worth the name parts them


def _num(x: float) -> str:
    """A number at 3 digits, with float noise (below 1e-9) printed as 0."""
    return "0" if abs(x) < 1e-9 else f"{x:.3g}"


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
    return (f"at this length ({q + 1} keys visible) the scores need ×{diagnosis.factor(factor)} (raise your sharpness "
            "symbol of the attention by that much)")


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


def _differ(trace, layer: int, a: int, b: int) -> str:
    """What tells two tied keys apart in the residual a layer's heads read, and the advice that follows."""
    x = trace.layers[layer].attn_in[0]  # [T, d_model]
    differ = np.flatnonzero(np.abs(x[a] - x[b]) > 1e-9)
    if not len(differ):
        return ("Their residuals are identical, so no W_Q and W_K can tell them apart: what is written into them "
                "before this layer must differ")
    return (f"Their residuals differ in {_groups(trace.model.residual.labels[i] for i in differ)}: look at W_Q and W_K "
            f"— reading those directions would make key {a} score higher")


def _zero_query(trace, layer: int, head: int, q: int) -> str | None:
    """The cause when a head's query is exactly zero at q: every key scores the same, whatever W_K does."""
    w = trace.model.head(layer, head)
    if w.pattern is not None or q == 0:
        return None
    q_vec = trace.layers[layer].q[0, head, q, : w.W_Q.shape[0]]
    if np.abs(q_vec).any():
        return None
    labels = trace.model.residual.labels
    x = trace.layers[layer].attn_in[0, q]
    read = np.flatnonzero(np.abs(w.W_Q).sum(0) > 0)
    has = _groups(labels[i] for i in np.flatnonzero(np.abs(x) > 1e-9)) or "nothing"
    tok = trace.tokens(0)[q]
    return (f"head {layer}.{head}'s query at position {q} ({tok!r}) is exactly zero: W_Q reads nothing at that token "
            f"(W_Q reads {_groups(labels[i] for i in read) or 'nothing'}; the residual there holds {has}), so every key "
            f"scores the same and the attention spreads evenly. Look at W_Q: which of this token's directions should "
            "it read?")


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
        return Evaluation(worst <= self.tol, worst, (~np.isnan(err)).sum(-1))

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
        marks = None
        if head:
            hint = self._hint(trace, tokens, q, exp[q])
        else:
            hint, head, marks = self._attention_culprit(trace, q, yours[q], exp[q]) or (None, None, None)
            hint = hint or self._residual_hint(trace, q, yours[q] - exp[q])
        return Explanation(q, summary, ["pos", "token", "expected", "yours", "error", ""], rows, hint, head, marks,
                           "* = a key whose value the expected vector needs")

    def _attention_culprit(self, trace, q: int, yours: np.ndarray, expected: np.ndarray):
        """A head whose values could give what the readout needs, had it attended elsewhere: (hint, head, marks).

        The readout is residual directions; each head with a computed pattern adds its attention-weighted
        values there. If the needed output of one head is a mix of its keys' values, its attention is the cause."""
        model = trace.model
        tokens = trace.tokens(0)
        idx = model.residual.index(self.readout.components(model))
        err = np.nan_to_num(yours - expected)
        found = []
        for l, layer in enumerate(trace.layers):
            if self.readout.after_layer is not None and l > self.readout.after_layer:
                break
            for h, w in enumerate(layer.heads):
                if w.pattern is not None or not np.abs(w.W_O[idx]).any():
                    continue
                values = (layer.v[0, h, : q + 1, : w.W_V.shape[0]] @ w.W_O.T)[:, idx]  # [keys, k]
                if np.ptp(values, axis=0).max() <= self.tol:
                    continue  # every key gives the same: the attention cannot matter
                pattern = layer.pattern[0, h, q, : q + 1]
                current = pattern @ values
                m = diagnosis.mix(pattern, values, current - err, self.tol)
                if m.reachable:
                    found.append((float(np.ptp(values, axis=0).max()), l, h, m, current - err))
        if not found:
            return None
        _, l, h, m, needed = max(found, key=lambda f: f[0])
        name = f"head {l}.{h}"
        said = diagnosis.leak(m, tokens, name, needed)
        why = self._why_scores(trace, q, m, name, (l, h))
        hint = (f"{name} writes the wrong amount into {', '.join(self.readout.components(model))} at position {q}, and "
                f"its values are not the cause: {_fmt_vec(needed)} from {name} would fix it, and that is a mix of what "
                f"its keys' values write there. So the attention is off: {said}. {why}Look at W_Q and W_K of {name}")
        marks: list = [-1] * len(tokens)
        marks[q] = [j for g, keys in enumerate(m.keys) if m.needed[g] > 0.005 for j in keys]
        return hint, (l, h), marks

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
                said = (f"direction {names[d]!r} at position {q} is off by {error[d]:.3g}, exactly what {culprit} writes "
                        f"there (written: {written})")
                if culprit.startswith("head"):
                    return f"{said}: look at W_O and W_V of {culprit}"
                if culprit.startswith("the MLP"):
                    return f"{said}: look at W_out and W_in of {culprit}"
                heads = [k for k in p if k.startswith("head") and np.abs(trace.model.head(
                    *map(int, k.split()[1].split("."))).W_O[model.residual.index(names[d])]).any()]
                if not heads:
                    return (f"{said}, and the embedding is a given: a head must change it there, but no head's W_O "
                            f"writes {names[d]!r} — look at W_O of the head that should")
                return (f"{said}, and the embedding is a given: {' and '.join(heads)} should change it there "
                        f"({', '.join(f'{k} writes {p[k]:.3g}' for k in heads)}) — look at W_V and W_O of {heads[-1]} "
                        "(what it reads, where it writes)")
        d = order[0]
        p = parts(model.residual.index(names[d]))
        written = ", ".join(f"{k} {v:.3g}" for k, v in p.items() if abs(v) > 1e-12) or "nothing"
        heads = [k for k, v in p.items() if k.startswith("head") and abs(v) > 1e-12]
        if heads:
            return (f"direction {names[d]!r} at position {q} is off by {error[d]:.3g} (written there: {written}): "
                    f"{' and '.join(heads)} {'writes' if len(heads) == 1 else 'write'} it, but the wrong value — check "
                    f"which direction W_V of {heads[-1]} reads (from which position) and where its W_O writes it")
        mlps = [k for k in p if k.startswith("the MLP")]
        if mlps:
            return (f"direction {names[d]!r} at position {q} is off by {error[d]:.3g} (written there: {written}): the part "
                    f"that should write it does not — check which rows of W_O write this direction and what W_V reads, "
                    f"or what W_out of {mlps[-1]} writes there")
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
            if len(good) <= q:
                rest = np.delete(np.arange(q + 1), good)
                a, b = int(good[np.argmax(scores[good])]), int(rest[np.argmax(scores[rest])])
                if diagnosis.tied(scores[a], scores[b]):
                    return (f"indistinguishable keys: key {b} and key {a} (whose value would give the expected vector) "
                            f"both score {scores[a]:.6g}, so {name} splits its attention between them and no scale can "
                            f"separate them. {_differ(trace, l, a, b)}")
            return (f"attention went to the wrong positions: only {mass:.3f} of {name}'s attention at position {q} is on "
                    f"the keys whose value would give the expected vector ({where}). Look at W_Q and W_K.")
        if np.abs(values.mean(0) - expected).max() <= self.tol and not fixed:
            return (f"attending evenly to positions 0..{q} would give the expected vector, but {name} does not: "
                    "look at W_Q and W_K (a zero W_QK attends evenly)")
        m = diagnosis.mix(pattern, values, expected, self.tol)
        if m.reachable and len(m.keys) > 1:
            said = diagnosis.leak(m, tokens, name, expected)
            if fixed:
                return (f"{name} has a fixed pattern that does not give the expected vector, though its values could: "
                        f"{said}. Check which head or layer the puzzle expects")
            return (f"the values are right but the attention is not: the expected vector {_fmt_vec(expected)} is a mix of "
                    f"the values at positions 0..{q}, so an attention pattern can give it, and {said}. "
                    f"{self._why_scores(trace, q, m, name)}Look at W_Q and W_K")
        matrices = "W_V and W_O" if isinstance(self.readout, HeadOutput) else "W_V"
        return (f"no mix of the values at positions 0..{q} ({', '.join(_fmt_vec(v) for v in values[:4])}"
                f"{' …' if q >= 4 else ''}) is close to the expected vector {_fmt_vec(expected)}, so no attention "
                f"pattern can produce it: look at {matrices}")

    def _why_scores(self, trace, q: int, m, name: str, head: tuple[int, int] | None = None) -> str:
        """Why the attention goes where the mix does not want it: the best wanted key against the best unwanted one."""
        l, h = head if head is not None else (self.readout.layer, self.readout.head)
        s = trace.layers[l].scores[0, h, q, : q + 1]
        want = [j for g, keys in enumerate(m.keys) if m.needed[g] > m.yours[g] + 0.005 for j in keys]
        leak = [j for g, keys in enumerate(m.keys) if m.yours[g] > m.needed[g] + 0.005 for j in keys]
        if not want or not leak:
            return ""
        a, b = max(want, key=lambda j: s[j]), max(leak, key=lambda j: s[j])
        if diagnosis.tied(s[a], s[b]):
            return (f"Indistinguishable keys: key {b} and key {a} both score {s[a]:.6g}, so no scale can separate them. ")
        return f"Key {b} scores {s[b]:.3g} against {s[a]:.3g} for key {a}. "


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
            least = np.where(keys, pattern, np.inf).min(-1)  # inf where a query has no key: no target, NaN below
            got = np.where(keys.any(-1), least, 0.0) * keys.sum(-1)
        else:
            got = np.where(keys, pattern, 0.0).sum(-1)
        return np.where(has, got, np.nan)

    def evaluate(self, trace, batch):
        pattern = trace.pattern(self.layer, self.head)  # [b, T, T]
        mass = self.mass(pattern, self.key_sets(trace, batch), trace.valid)
        worst = np.nanmin(np.where(np.isnan(mass), np.inf, mass), axis=-1)
        worst = np.where(np.isfinite(worst), worst, 1.0)
        return Evaluation(worst >= self.min_mass, worst, (~np.isnan(mass)).sum(-1))

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
            got, need = diagnosis.apart(mass[q], self.min_mass)
            where = f"the target is key {_tok(labels, t)}, but {name} puts only {got} there (needs ≥ {need})"
        elif self.evenly:
            least = min(np.flatnonzero(keys[q]), key=lambda k: pattern[q, k])
            got, need = diagnosis.apart(pattern[q, least], self.min_mass / n_keys)
            where = (f"the targets are keys {on(q)}, each needing ≥ {need} (an even share of "
                     f"{self.min_mass:g}), but {name} puts only {got} on key {_tok(labels, int(least))}")
        else:
            got, need = diagnosis.apart(mass[q], self.min_mass)
            where = f"the targets are keys {on(q)}, but {name} puts only {got} on them together (needs ≥ {need})"
        summary = f"at query {_tok(labels, q)} {where}; its largest weight, {pattern[q, top]:.3f}, is on key {_tok(labels, top)}"
        hint = self._hint(trace, q, keys[q, : q + 1], top, t, name)
        return Explanation(q, summary, ["query", "token", "target key", "argmax key (weight)", "on target", ""],
                           rows, hint, (self.layer, self.head), [int(x) for x in targets])

    def _hint(self, trace, q: int, inside: np.ndarray, top: int, t: int, name: str) -> str:
        """Why the target keys `inside` `[keys]` miss: a fixed pattern, a zero query, unread directions, a tie,
        too little sharpness, or the wrong key winning."""
        if trace.model.head(self.layer, self.head).pattern is not None:
            return f"{name} has a fixed pattern; this target needs a computed one"
        scores = trace.layers[self.layer].scores[0, self.head, q, : q + 1]
        if (said := self._unread(trace, q, t, name)) or (said := _zero_query(trace, self.layer, self.head, q)):
            return said
        if (~inside).any():  # a tie between a target key and another is a tie whichever way argmax breaks it
            best = int(np.flatnonzero(inside)[np.argmax(scores[inside])])
            rival = int(np.flatnonzero(~inside)[np.argmax(scores[~inside])])
            if diagnosis.tied(scores[best], scores[rival]):
                return (f"indistinguishable keys: key {rival} and the target key {best} both score {scores[best]:.6g}, "
                        f"so {name} splits its attention between them and no scale can separate them. "
                        f"{self._writer_first(trace, q, best, rival) or _differ(trace, self.layer, best, rival)}")
        if not inside[top]:
            return self._wrong_key_hint(trace, q, top, t, name)
        n_keys = int(inside.sum())
        in_s = scores[inside]
        if self.evenly and in_s.max() - in_s.min() > 1e-9 * max(1.0, float(np.abs(in_s).max())):
            keys = ", ".join(str(int(k)) for k in np.flatnonzero(inside))
            tied = ", ".join(f"{int(k)}: {scores[k]:.3g}" for k in np.flatnonzero(inside))
            return (f"{name} should spread its attention evenly over keys {keys}, but their scores differ ({tied}). "
                    "Look at W_Q and W_K: which directions make these keys score differently?")
        rest = scores[~inside]
        gap = float(in_s.min() - rest.max()) if len(rest) else np.inf
        need = self.min_mass / n_keys if self.evenly else self.min_mass
        ok = (lambda p: p[inside].min() >= need) if self.evenly else (lambda p: p[inside].sum() >= need)
        return (f"{name} attends most to the right key{'s' if n_keys > 1 else ''}, but the score there beats the "
                f"next best by only {gap:.3g}: sharpen the pattern; {_scale_by(factor_needed(scores, ok), q)}")

    def _unread(self, trace, q: int, t: int, name: str) -> str | None:
        """The cause when the head's keys (or queries) read only directions nothing before its layer writes."""
        layer = trace.layers[self.layer]
        head = layer.heads[self.head]
        labels = trace.model.residual.labels
        x = layer.attn_in[0, : q + 1]  # [keys, d_model]: what the head reads
        s = layer.scores[0, self.head, q]
        for what, W in (("keys", head.W_K), ("queries", head.W_Q)):
            read = np.flatnonzero(np.abs(W).sum(0) > 0)
            embedded = np.abs(trace.model.W_E[read]).any() or (
                trace.model.W_pos is not None and np.abs(trace.model.W_pos[read]).any())
            if len(read) and not np.abs(x[:, read]).any() and not embedded:  # not merely zero for these tokens
                written = np.flatnonzero(np.abs(layer.attn_in[0]).sum(0) > 0)
                writers = [f"head {l}.{h}" for l in range(self.layer) for h in range(trace.model.n_heads(l))
                           if np.abs(trace.model.head(l, h).W_O).any()]
                earlier = ", ".join(["the embedding", *writers])
                fix = f"Look at W_{'K' if what == 'keys' else 'Q'} of {name}" + "".join(
                    f", or at W_O of {w}" for w in writers[:3]) + ": one must read what the other writes"
                return (f"{name}'s {what} read {_groups(labels[i] for i in read)}, which nothing writes before layer "
                        f"{self.layer} ({earlier} write only {_groups(labels[i] for i in written) or 'nothing'} at this "
                        f"input), so every key scores the same ({s[t]:.3g}). {fix}")
        return None

    def _decisive(self, trace, q: int, a: int, b: int) -> dict[str, float]:
        """Per direction family W_K reads: how much it favours key `a` over key `b`, in the score's own units."""
        layer = trace.layers[self.layer]
        head = layer.heads[self.head]
        labels = trace.model.residual.labels
        x = layer.attn_in[0]
        s = layer.scores[0, self.head, q]
        q_vec = layer.q[0, self.head, q, : head.W_K.shape[0]]
        per_dir = (q_vec @ head.W_K) * (x[a] - x[b])  # [d_model]
        if abs(per_dir.sum()) > 1e-12:  # in the score's own units (the attention scale, if any)
            per_dir = per_dir * (s[a] - s[b]) / per_dir.sum()
        by_group: dict[str, float] = {}
        for i in np.flatnonzero(np.abs(per_dir) > 1e-9):
            by_group[_group(labels[i])] = by_group.get(_group(labels[i]), 0.0) + float(per_dir[i])
        return by_group

    def _writer_first(self, trace, q: int, t: int, top: int, family: str | None = None) -> str | None:
        """When the keys differ in directions an earlier head wrote, and that head's W_OV pairs names less
        faithfully than this head's W_QK reads them, the writer is the likelier culprit: name it."""
        if self.layer == 0:
            return None
        model = trace.model
        labels = model.residual.labels
        x = trace.layers[self.layer].attn_in[0]
        head = trace.layers[self.layer].heads[self.head]
        differ = np.flatnonzero(np.abs(x[t] - x[top]) > 1e-9)
        if family is not None:
            differ = np.array([i for i in differ if _group(labels[i]) == family], dtype=int)
        read = np.abs(head.W_K).sum(0) > 0
        differ = np.array([i for i in differ if read[i]], dtype=int)
        if not len(differ):
            return None
        wrote = diagnosis.writers(trace, self.layer, [t, top], list(differ))
        who = max(wrote, key=wrote.get)
        if not who.startswith("head") or wrote[who] <= 1e-9:
            return None
        l, h = (int(n) for n in who.split()[1].split("."))
        w = model.head(l, h)
        ov = w.W_O @ w.W_V  # [d_model, d_model]
        families = {_group(labels[i]) for i in differ}  # judged on whole families: prev:* ← tok:*, not one entry
        rows = [i for i in range(model.d_model) if _group(labels[i]) in families and read[i] and np.abs(ov[i]).any()]
        cols = [j for j in range(model.d_model) if np.abs(ov[rows, j]).any()] if rows else []
        if not rows or not cols:
            return None
        qk = head.W_Q.T @ head.W_K  # [query dirs, key dirs]
        qrows = [i for i in range(model.d_model) if np.abs(qk[i, rows]).any()]
        writer = diagnosis.matched(ov[np.ix_(rows, cols)], [labels[i] for i in rows], [labels[j] for j in cols])
        reader = diagnosis.matched(qk[np.ix_(qrows, rows)], [labels[i] for i in qrows], [labels[i] for i in rows])
        if writer is None or (reader is not None and writer >= reader):
            return None
        into = _groups(labels[i] for i in rows)
        return (f"The keys differ in {into}, which {who} writes: W_V of {who} reads {_groups(labels[j] for j in cols)} "
                f"and W_O of {who} writes that into {into}, pairing directions less faithfully than this head reads them. "
                f"The writer is the likelier culprit: look at W_V and W_O of {who} (what it writes into {into}) before "
                "W_Q and W_K of this head")

    def _wrong_key_hint(self, trace, q: int, top: int, t: int, name: str) -> str:
        """Why key `top` beat the target `t`: which directions decide it, and who wrote them."""
        head = trace.layers[self.layer].heads[self.head]
        s = trace.layers[self.layer].scores[0, self.head, q]
        by_group = self._decisive(trace, q, t, top)
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
        writer = self._writer_first(trace, q, t, top, worst)
        if writer:
            return f"{head_line}{favours}. {writer}"
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
        return f"mean next-token log-prob in [{self.lo:g}, {self.hi:g}]" if self.mean else f"every expected next token has log-prob ≥ {self.lo:g}"

    def _logp(self, trace, batch) -> np.ndarray:  # [b, T] with NaN where no expectation
        if trace.logprobs is None:
            raise CircuitError(f"{self.label}: the model has no W_U, so it makes no predictions")
        vocab = trace.model.vocab
        T = trace.ids.shape[1]
        out = np.full((len(batch), T), np.nan)
        hits = once.each((self.spec, self.after_bos, "next-token ids", vocab), batch, lambda toks: self._hits(toks, vocab))
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
        if self.mean and m > self.hi:
            hint, head, marks = self._flat_hint(trace), None, None
        else:
            hint, head, marks = self._token_hint(trace, q, vocab.id(exp[q - offset]))
            if self.advice:  # the puzzle's own advice, after the finding
                hint = f"{hint.rstrip('.')}. {self.advice}"
        return Explanation(q, summary, ["pos", "token", "expected next", "your top guess", "log-prob"], rows, hint,
                           head, marks, "* = a key that would raise the expected token most")

    @staticmethod
    def _flat_hint(trace) -> str:
        model = trace.model
        heads = [(l, h) for l in range(model.n_layers) for h in range(model.n_heads(l))]
        computed = [f"head {l}.{h}" for l, h in heads if model.head(l, h).pattern is None]
        where = f" (W_Q and W_K of {', '.join(computed)})" if computed else ""
        return ("where the context cannot tell the next token, the prediction must stay flat, and yours is not: check "
                f"where your heads attend when no key matches{where} and what they write there (W_V, W_O)")

    def _token_hint(self, trace, q: int, want: int):
        """Why the expected token `want` is not sure enough after position q: (hint, head to show, marks).

        The rival is your top guess, or the runner-up when the top guess is right. Each head with a computed
        pattern could raise `want` over the rival by attending elsewhere: if one could make it win, its
        attention is the cause; else the content does not reach the unembedding, or the prediction is too flat."""
        model, vocab = trace.model, trace.model.vocab
        tokens = trace.tokens(0)
        lp = trace.logprobs[0, q]
        order = [int(i) for i in np.argsort(-lp, kind="stable")]
        rival = order[0] if order[0] != want else order[1]
        w_tok, r_tok = vocab.tokens[want], vocab.tokens[rival]
        p_w, p_r = float(np.exp(lp[want])), float(np.exp(lp[rival]))
        lead = trace.logits[0, q, want] - trace.logits[0, q, rival]
        near = lambda x: abs(float(lp[want]) - float(x)) < NEAR_TIE  # noqa: E731
        tie = near(lp[rival])
        if tie:  # one report for a (near) tie, whichever token argmax happens to pick
            more = sum(near(x) for x in lp) - 2
            shown_w, shown_r = diagnosis.apart(p_w, p_r)
            exact = diagnosis.tied(float(lp[want]), float(lp[rival]))
            said = (f"after position {q} your model cannot tell the expected {w_tok!r} from {r_tok!r}"
                    f"{f' and {more} more' if more > 0 else ''}: "
                    + (f"a tie, each {p_w:.3f}" if exact else f"a near tie, {shown_w} against {shown_r}"))
        elif order[0] == want:
            said = f"your top guess after position {q} is {w_tok!r} ({p_w:.3f}), but {r_tok!r} follows with {p_r:.3f}"
        else:
            said = f"after position {q} your model prefers {r_tok!r} ({p_r:.3f}) to the expected {w_tok!r} ({p_w:.3f})"
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
            name = f"head {l}.{h}"
            keys = [int(j) for j in np.flatnonzero(gains >= gains.max() - 1e-9)]
            pattern = trace.pattern(l, h)[0, q]
            top = int(np.argmax(pattern[: q + 1]))
            s = trace.layers[l].scores[0, h, q, : q + 1]
            best_key = max(keys, key=lambda j: s[j])
            why = (f"indistinguishable keys: key {top} and key {best_key} both score {s[top]:.6g}. "
                   if top not in keys and diagnosis.tied(s[top], s[best_key]) else "")
            where = ", ".join(_tok(tokens, j) for j in keys[:3]) + (" …" if len(keys) > 3 else "")
            marks: list = [-1] * len(tokens)
            marks[q] = keys
            return (f"{said}. The attention is the cause: {name} puts {float(pattern[keys].sum()):.3f} on key{'s' if len(keys) > 1 else ''} "
                    f"{where}, whose value would raise {w_tok!r} over {r_tok!r} by {gain:.3g} more, and its largest weight "
                    f"({pattern[top]:.3f}) is on key {_tok(tokens, top)}. {why}Look at W_Q and W_K of {name}"), (l, h), marks
        if order[0] == want and not tie:
            return (f"{said}. No attention pattern of your heads would raise it much: make the prediction surer "
                    "(raise your sharpness symbol of the prediction)"), None, None
        reach = {}  # per head: the most any one key's value could raise want over the rival
        for l, layer in enumerate(trace.layers):
            for h, w in enumerate(layer.heads):
                if np.abs(w.W_O).any():
                    reach[(l, h)] = float(((layer.v[0, h, : q + 1, : w.W_V.shape[0]] @ w.W_O.T) @ d).max())
        who = max(reach, key=reach.get) if reach else None
        named = (f"look at W_V and W_O of head {who[0]}.{who[1]} (attending to its best key would raise {w_tok!r} over "
                 f"{r_tok!r} by {_num(reach[who])}, against a lead of {_num(-lead)} for {r_tok!r}) and at W_U"
                 if who is not None else "look at W_U")
        if tie:  # no sharpness separates equal logits
            return (f"{said}, so no sharpness can make {w_tok!r} sure, and no attention pattern of your heads separates "
                    f"them: what the attended positions hold must raise {w_tok!r} above {r_tok!r} — {named}"), None, None
        return (f"{said}, and no attention pattern of your heads would change that: what the attended positions hold "
                f"does not reach the unembedding as {w_tok!r}: {named}"), None, None



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
