"""The inputs a puzzle is checked on: an alphabet, a length range, and families of strings.

Every family can both sample many inputs at once with numpy (the bulk check) and
give a hypothesis strategy (the property test, which shrinks failures).
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from circuits import kept
from circuits.checking import strategies
from circuits.errors import CircuitError


@dataclass(frozen=True)
class Uniform:
    """Tokens drawn uniformly; lengths uniform over the range."""

    name: str = "random strings"

    def sample(self, rng: np.random.Generator, n: int, alphabet: Sequence[str], lo: int, hi: int) -> list[list[str]]:
        lengths = rng.integers(lo, hi + 1, size=n)
        tokens = np.array(alphabet, dtype=object)[rng.integers(0, len(alphabet), size=(n, hi))]  # [n, hi]
        return [row[:L].tolist() for row, L in zip(tokens, lengths)]

    def strategy(self, alphabet, lo, hi):
        return strategies.strings(alphabet, lo, hi)


@dataclass(frozen=True)
class Runs:
    """A few long runs, each of one class of tokens: the worst cases for softmax dilution."""

    classes: Mapping[str, Sequence[str]]
    max_runs: int = 3
    name: str = "runs of one class"

    def sample(self, rng, n, alphabet, lo, hi):
        pools = [np.array(list(v), dtype=object) for v in self.classes.values()]
        lengths = rng.integers(lo, hi + 1, size=n)  # [n]
        n_cuts = rng.integers(0, self.max_runs, size=n)  # a run boundary at each cut
        cuts = np.floor(rng.random((n, self.max_runs - 1)) * (lengths[:, None] - 1)).astype(int) + 1
        cuts = np.where(np.arange(self.max_runs - 1)[None] < n_cuts[:, None], cuts, hi + 1)  # unused cuts fall outside
        run = (np.arange(hi)[None, :, None] >= cuts[:, None, :]).sum(-1)  # [n, hi]: which run each position is in
        pool_of_run = rng.integers(0, len(pools), size=(n, self.max_runs))
        pool = np.take_along_axis(pool_of_run, run, axis=1)  # [n, hi]
        pick = rng.random((n, hi))
        tokens = np.empty((n, hi), dtype=object)
        for i, members in enumerate(pools):
            where = pool == i
            tokens[where] = members[(pick[where] * len(members)).astype(int)]
        return [row[:L].tolist() for row, L in zip(tokens, lengths)]

    def strategy(self, alphabet, lo, hi):
        return strategies.runs(self.classes, lo, hi, self.max_runs)

    def extremes(self, lo: int, hi: int) -> list[list[str]]:
        """Every input of one or two runs of class representatives (A^k B^(L−k)), lengths lo..hi."""
        reps = [list(v)[0] for v in self.classes.values()]
        out = []
        for L in range(lo, hi + 1):
            out += [[a] * L for a in reps]
            out += [[a] * k + [b] * (L - k) for a in reps for b in reps if a != b for k in range(1, L)]
        return out


@dataclass(frozen=True)
class Repeated:
    """A random sequence followed by itself; `distinct` makes the first half repeat-free."""

    min_half: int = 2
    max_half: int | None = None
    distinct: bool = False
    name: str = "repeated sequences"

    def _halves(self, alphabet, lo, hi):
        top = hi // 2 if self.max_half is None else min(self.max_half, hi // 2)
        if self.distinct:
            top = min(top, len(alphabet))
        bottom = max(self.min_half, (lo + 1) // 2)
        if bottom > top:
            raise CircuitError(
                f"repeated sequences need halves of {bottom}..{top} tokens, "
                f"which the length range {lo}..{hi} does not allow"
            )
        return bottom, top

    def sample(self, rng, n, alphabet, lo, hi):
        bottom, top = self._halves(alphabet, lo, hi)
        out = []
        for _ in range(n):
            h = int(rng.integers(bottom, top + 1))
            idx = rng.permutation(len(alphabet))[:h] if self.distinct else rng.integers(0, len(alphabet), size=h)
            half = [alphabet[int(i)] for i in idx]
            out.append(half + half)
        return out

    def strategy(self, alphabet, lo, hi):
        bottom, top = self._halves(alphabet, lo, hi)
        return strategies.repeated_sequences(alphabet, bottom, top, self.distinct)


@dataclass(frozen=True)
class Copies:
    """One token exactly twice, at m < q, among other tokens: what an induction head points from.

    Its extremes put the pair at every (m, q) of the longest length, so a head whose pattern
    depends on the copy's position and the query's is checked at every pair it can meet.
    """

    tokens: Sequence[str] = ()  # the alphabet, for the extremes
    name: str = "one earlier copy"

    @staticmethod
    def _place(row: list[str], m: int, q: int, token: str) -> list[str]:
        row[m] = row[q] = token
        return row

    def sample(self, rng, n, alphabet, lo, hi):
        if len(alphabet) < 2 or hi < 2:
            raise CircuitError("one earlier copy needs two tokens and inputs of two or more")
        out = []
        for L in rng.integers(max(lo, 2), hi + 1, size=n):
            q = int(rng.integers(1, L))
            m, a = int(rng.integers(0, q)), int(rng.integers(len(alphabet)))
            others = [t for i, t in enumerate(alphabet) if i != a]
            out.append(self._place([others[int(i)] for i in rng.integers(0, len(others), size=L)], m, q, alphabet[a]))
        return out

    def strategy(self, alphabet, lo, hi):
        from hypothesis import strategies as st

        @st.composite
        def one_copy(draw):
            L = draw(st.integers(max(lo, 2), hi))
            q = draw(st.integers(1, L - 1))
            m, a = draw(st.integers(0, q - 1)), draw(st.sampled_from(list(alphabet)))
            row = draw(st.lists(st.sampled_from([t for t in alphabet if t != a]), min_size=L, max_size=L))
            return self._place(row, m, q, a)

        return one_copy()

    def extremes(self, lo: int, hi: int) -> list[list[str]]:
        """At the longest length, the first token at every pair m < q, the others cycling around it."""
        if len(self.tokens) < 2:
            return []
        a, others = self.tokens[0], list(self.tokens[1:])
        return [
            self._place([others[i % len(others)] for i in range(hi)], m, q, a) for q in range(1, hi) for m in range(q)
        ]


Family = Uniform | Runs | Repeated | Copies


_SAMPLES = kept.latest("random samples", 16)  # (repr of the Inputs, n, seed) -> the sample


@dataclass(frozen=True)
class Inputs:
    """What a puzzle is checked on.

    `n_random` inputs are sampled (split evenly over `families`); every input of up
    to `exhaustive_budget` strings is enumerated first, shortest lengths first.
    """

    alphabet: Sequence[str]
    min_len: int = 1
    max_len: int = 20
    families: Sequence[Family] = field(default_factory=lambda: (Uniform(),))
    n_random: int = 10_000
    exhaustive_budget: int = 20_000
    seed: int = 0

    def __post_init__(self):
        from circuits.targets import fields

        for name in ("min_len", "max_len", "n_random", "exhaustive_budget", "seed"):
            fields.whole("Inputs", name, getattr(self, name))
        if not 1 <= self.min_len <= self.max_len:
            raise CircuitError(
                f"input lengths {self.min_len}..{self.max_len} are not a valid range (need 1 ≤ min_len ≤ max_len)"
            )
        if not self.alphabet:
            raise CircuitError("the input alphabet is empty")

    @property
    def known_by_text(self) -> str | None:
        """The settings' text, where it says all they draw (only the library's own families, none shown by its
        address): what may key what is kept between checks; None for a family of the puzzle's own, whose code may
        change between two saves."""
        settings = repr(self)
        own = all(type(f) in (Uniform, Runs, Repeated, Copies) for f in self.families) and " at 0x" not in settings
        return settings if own else None

    def sample(self, n: int | None = None, seed: int | None = None) -> list[list[str]]:
        """`n` random inputs (default n_random) from `seed` (default the puzzle's): the same list for the same
        settings, drawn once per process (a watch's next save checks the same inputs) and copied out."""
        n = self.n_random if n is None else n
        seed = self.seed if seed is None else seed
        settings = self.known_by_text
        if settings is None:
            return self._sample(n, seed)  # a family of the puzzle's own: its code, which may change, draws them
        key = (settings, n, seed)
        if key not in _SAMPLES:
            _SAMPLES.keep(key, self._sample(n, seed))
        return [list(x) for x in _SAMPLES.get(key)]

    def _sample(self, n: int, seed: int) -> list[list[str]]:
        rng = np.random.default_rng(seed)
        fams = list(self.families)
        out: list[list[str]] = []
        for i, fam in enumerate(fams):
            k = n // len(fams) + (1 if i < n % len(fams) else 0)
            out += fam.sample(rng, k, list(self.alphabet), self.min_len, self.max_len)
        return out

    def exhaustive_max_len(self, alphabet_size: int | None = None) -> int:
        """The longest length L such that all inputs of length min_len..L fit the budget (0 if none do)."""
        a = alphabet_size or len(self.alphabet)
        total, L = 0, self.min_len - 1
        while L < self.max_len:
            total += a ** (L + 1)
            if total > self.exhaustive_budget:
                break
            L += 1
        return L

    def exhaustive(self, alphabet: Sequence[str] | None = None, max_len: int | None = None):
        """Every input over `alphabet` (default: the puzzle's) of length min_len..max_len, shortest first."""
        alphabet = list(self.alphabet if alphabet is None else alphabet)
        top = self.exhaustive_max_len(len(alphabet)) if max_len is None else max_len
        for L in range(self.min_len, top + 1):
            for combo in itertools.product(alphabet, repeat=L):
                yield list(combo)

    def strategy(self):
        from hypothesis import strategies as st

        alphabet = list(self.alphabet)
        return st.one_of([f.strategy(alphabet, self.min_len, self.max_len) for f in self.families])
