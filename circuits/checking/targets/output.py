"""Output: a readout (residual directions, a head's output) within a tolerance of the spec at every position."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from circuits.checking import diagnosis, fields
from circuits.checking.readouts import HeadOutput, Readout, Residual
from circuits.checking.targets import authored
from circuits.checking.targets.base import Evaluation, Explanation, Target, Tokens
from circuits.checking.targets.formats import fmt_pair, fmt_vec, token_at
from circuits.checking.targets.scores import factor_needed, scale_by, what_differs
from circuits.checking.targets.specs import batched_array, spec_array


@dataclass
class ReadoutPositions:
    """An output target's facts per position: expected `[T, k]` (NaN: none), yours `[T, k]`, the error `[T]`."""

    tokens: Tokens
    expected: np.ndarray
    yours: np.ndarray
    error: np.ndarray
    tol: float
    names: list[str] | None = None  # the directions, where vectors are shown by name (too wide for a terminal)
    kind = "readout"


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

    @property
    def stage(self) -> float:
        """A head's readout: its layer; the residual after layer l: l + 0.5 (after the last: ∞, with the logits)."""
        if isinstance(self.readout, Residual):
            return np.inf if self.readout.after_layer is None else self.readout.after_layer + 0.5
        return float(self.readout.layer)

    def evaluate(self, trace, batch):
        yours = self.readout.get(trace)  # [b, T, k]
        if self.batched is not None and batch and all(len(t) == len(batch[0]) for t in batch):
            exp = batched_array(self.batched, batch, yours.shape[1], yours.shape[2], self.label)
        else:
            exp = spec_array(self.spec, batch, yours.shape[1], yours.shape[2], self.label)
        err = np.nanmax(np.where(np.isnan(exp), -np.inf, np.abs(yours - exp)), axis=-1)  # [b, T]
        err = np.where(np.isfinite(err), err, np.nan)
        worst = np.nanmax(np.where(np.isnan(err), -np.inf, err), axis=-1)
        worst = np.where(np.isfinite(worst), worst, 0.0)
        return Evaluation(worst <= self.tol, worst, (~np.isnan(err)).sum(-1))

    @property
    def tolerance(self):
        return float(self.tol)

    def slack(self, worst):
        return self.tol - worst

    def bound(self):
        return f"tolerance {self.tol:g}"

    def validate(self, examples, alphabet, fail):
        if not callable(self.spec):
            raise fail(f"spec is {type(self.spec).__name__}, needs a function tokens -> one value per token")
        width = len(self.readout.directions) if isinstance(self.readout, Residual) or getattr(
            self.readout, "directions", None) else None
        for toks in examples:
            got = authored.call(self.spec, list(toks), f"spec({authored.shown(toks)})", fail)
            authored.check_spec_result(got, toks, width, False, fail)

    def checks_nothing(self, probe):
        return not authored.expects_something(self.spec, probe)

    def shown(self, trace, tokens):
        yours = self.readout.get(trace)[0]
        off = yours.shape[0] - len(tokens)
        exp = [None] * off + [None if e is None else list(map(float, np.atleast_1d(e))) for e in self.spec(tokens)]  # a scalar spec too
        names = self.readout.components(trace.model)
        named = {"directions": names} if not all(n.isdigit() for n in names) else {}  # residual directions, as check
        return {"label": self.label, "kind": "output", "readout": self.readout.label, "expected": exp,
                "output": yours.tolist(), **named}

    def classes_ok(self, canon, sample):
        return all(np.allclose(np.asarray(self.spec(s), dtype=float), np.asarray(self.spec(canon(s)), dtype=float))
                   for s in sample)

    def explain(self, trace, tokens):
        yours = self.readout.get(trace)[0]
        exp = spec_array(self.spec, [tokens], yours.shape[0], yours.shape[1], self.label)[0]
        err = np.where(np.isnan(exp), 0.0, np.abs(yours - exp)).max(-1)
        bad = np.flatnonzero(err > self.tol)
        q = int(bad[0]) if len(bad) else int(np.argmax(err))
        tokens = trace.tokens(0)
        rows = ReadoutPositions(list(tokens), exp, yours, err, self.tol)
        shown_exp, shown_yours = fmt_pair(exp[q], yours[q])
        summary = (f"at position {token_at(tokens, q)} the expected {self.readout.label} is {shown_exp}, "
                   f"yours is {shown_yours} (error {err[q]:.3g} > tolerance {self.tol:g})")
        head = getattr(self.readout, "layer", None), getattr(self.readout, "head", None)
        head = head if head[0] is not None else None
        marks = None
        if head:
            hint = self._hint(trace, tokens, q, exp[q])
        else:
            hint, head, marks = self._attention_culprit(trace, q, yours[q], exp[q]) or (None, None, None)
            hint = hint or self._residual_hint(trace, q, yours[q] - exp[q])
        return Explanation(q, summary, rows, hint, head, marks, "* = a key whose value the expected vector needs")

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
                f"its values are not the cause: {fmt_vec(needed)} from {name} would fix it, and that is a mix of what "
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
            where = ", ".join(token_at(tokens, int(j)) for j in good[:4]) + (" …" if len(good) > 4 else "")
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
                        f"with length (about log(length / tolerance)): {scale_by(factor_needed(scores, close), q)}.")
            if len(good) <= q:
                rest = np.delete(np.arange(q + 1), good)
                a, b = int(good[np.argmax(scores[good])]), int(rest[np.argmax(scores[rest])])
                if diagnosis.tied(scores[a], scores[b]):
                    return (f"indistinguishable keys: key {b} and key {a} (whose value would give the expected vector) "
                            f"both score {scores[a]:.6g}, so {name} splits its attention between them and no scale can "
                            f"separate them. {what_differs(trace, l, a, b)}")
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
            return (f"the values are right but the attention is not: the expected vector {fmt_vec(expected)} is a mix of "
                    f"the values at positions 0..{q}, so an attention pattern can give it, and {said}. "
                    f"{self._why_scores(trace, q, m, name)}Look at W_Q and W_K")
        matrices = "W_V and W_O" if isinstance(self.readout, HeadOutput) else "W_V"
        return (f"no mix of the values at positions 0..{q} ({', '.join(fmt_vec(v) for v in values[:4])}"
                f"{' …' if q >= 4 else ''}) is close to the expected vector {fmt_vec(expected)}, so no attention "
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
