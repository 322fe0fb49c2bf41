"""Attention: a head puts enough of its attention on the target key (or keys) at every query."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from circuits.targets import authored, behaviours, fields, once
from circuits.targets.base import Evaluation, Shows, Target, Tokens


@dataclass
class Attention(Target):
    """Head `layer.head` puts at least `min_mass` of its attention on the target key at every query that has one.

    `where` is a behaviour name ("previous-token", "induction", …, see circuits.targets.behaviours),
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

    @property
    def stage(self) -> float:
        return float(self.layer)

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
        pairs = once.each((self.where, "key_sets"), batch, self._pairs)
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
            if isinstance(k, (int, np.integer)):
                q_.append(i)
                k_.append(k)
            else:
                keys = tuple(k)
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

    def slack(self, worst):
        return worst - self.min_mass

    def bound(self):
        return f"needs ≥ {self.min_mass:g}"

    def validate(self, examples, alphabet, fail):
        if not 0 < self.min_mass <= 1:
            raise fail(f"min_mass is {self.min_mass:g}, needs a share of attention in (0, 1]")
        if isinstance(self.where, str):
            if self.where not in behaviours.BEHAVIOURS:
                raise fail(
                    f"where={self.where!r} is not a behaviour; the behaviours are {', '.join(behaviours.BEHAVIOURS)}"
                )
            return
        if not callable(self.where):
            raise fail(f"where is {type(self.where).__name__}, needs a behaviour name or a function")
        if self.per_input:
            for toks in examples:
                got = authored.call(self.where, list(toks), f"where({authored.shown(toks)})", fail)
                authored.check_keys(got, toks, fail)
            return
        toks = max(examples, key=len)
        ids = np.array([[alphabet.index(t) for t in toks]])  # [1, T]
        got = authored.call(self.where, ids, f"where(ids of shape {ids.shape})", fail)
        shape = np.shape(got)
        T = ids.shape[1]
        if shape not in ((1, T), (1, T, T)):
            raise fail(
                f"where(ids) returned shape {shape} for ids of shape {ids.shape}; it needs {(1, T)} (a key "
                f"position per query, −1 for none) or {(1, T, T)} (booleans: the keys each query may attend)"
            )
        arr = np.asarray(got)
        if len(shape) == 2:
            if not (np.issubdtype(arr.dtype, np.number) and np.array_equal(arr, np.round(arr))):
                raise fail(f"where(ids) returned {arr.dtype} values, needs integer key positions (−1 for none)")
            bad = np.flatnonzero((arr[0] > np.arange(T)) | (arr[0] < -1))
            if len(bad):
                q = int(bad[0])
                raise fail(
                    f"where(ids) puts query {q}'s key at {int(arr[0, q])}, needs −1 or a key 0..{q} "
                    "(a query sees only itself and earlier keys)"
                )

    def checks_nothing(self, probe):
        return self.per_input and not authored.expects_something(self.where, probe)

    def shown(self, trace, tokens):
        pattern = trace.pattern(self.layer, self.head)[0]
        keys = self.key_sets(trace, [tokens])[0]  # [query, key]
        return {
            "label": self.label,
            "kind": Shows.ATTENTION,
            "head": [self.layer, self.head],
            "readout": f"head {self.layer}.{self.head}: attended key (argmax)",
            "expected": [[int(k) for k in np.flatnonzero(row)] or None for row in keys],
            "output": [int(np.argmax(r)) for r in pattern],
        }

    def classes_ok(self, canon, sample):
        if not self.per_input:
            return self.where in ("previous-token", "current-token", "first-token")
        return all(list(self.where(s)) == list(self.where(canon(s))) for s in sample)
