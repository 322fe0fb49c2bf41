"""Named directions of the residual stream, and matrices indexed by those names."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Sequence

import numpy as np

from circuits.errors import CircuitError


def names(prefix: str, n: int) -> list[str]:
    """`names("pos", 3)` is `["pos:0", "pos:1", "pos:2"]`."""
    return [f"{prefix}:{i}" for i in range(n)]


class Basis:
    """An ordered set of named directions, e.g. `Basis(["vowel", "consonant", "pos:0"])`.

    A name selects one direction; a group prefix selects all of its members
    (`"pos"` selects `pos:0`, `pos:1`, …); integers, slices and lists work as in numpy.
    `Basis(4)` names its directions "0".."3".
    """

    def __init__(self, labels: int | Iterable[str] | "Basis"):
        if isinstance(labels, Basis):
            labels = labels.labels
        elif isinstance(labels, (int, np.integer)):
            labels = [str(i) for i in range(int(labels))]
        labels = tuple(str(x) for x in labels)
        seen: set[str] = set()
        for x in labels:
            if x in seen:
                raise CircuitError(f"direction {x!r} is named twice in the basis")
            seen.add(x)
        self.labels = labels
        self._index = {x: i for i, x in enumerate(labels)}

    def __len__(self) -> int:
        return len(self.labels)

    def __iter__(self):
        return iter(self.labels)

    def __repr__(self) -> str:
        return f"Basis({list(self.labels)!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Basis) and self.labels == other.labels

    def __hash__(self) -> int:
        return hash(self.labels)

    def __add__(self, other: "Basis | Iterable[str]") -> "Basis":
        return Basis([*self.labels, *Basis(other).labels])

    def group(self, prefix: str) -> list[int]:
        return [i for x, i in self._index.items() if x.startswith(prefix + ":")]

    def index(self, key) -> int | slice | list[int]:
        """Numpy-style index for a name, group, int, slice or list of those."""
        if isinstance(key, str):
            if key in self._index:
                return self._index[key]
            members = self.group(key)
            if members:
                return members
            close = difflib.get_close_matches(key, self.labels, n=3)
            hint = f"; did you mean {', '.join(map(repr, close))}?" if close else ""
            raise CircuitError(
                f"no direction named {key!r} in the basis ({', '.join(self.labels[:20])}"
                f"{', …' if len(self.labels) > 20 else ''}){hint}"
            )
        if isinstance(key, (int, np.integer)):
            if not -len(self) <= key < len(self):
                raise CircuitError(f"index {key} is outside the basis of {len(self)} directions")
            return int(key)
        if isinstance(key, slice):
            return key
        if isinstance(key, (list, tuple, np.ndarray)):
            out: list[int] = []
            for k in key:
                i = self.index(k)
                out.extend(i if isinstance(i, list) else range(len(self))[i] if isinstance(i, slice) else [i])
            return out
        raise CircuitError(f"cannot index a basis with {key!r} (use a name, an int, a slice or a list)")


def as_basis(x: int | Sequence[str] | Basis) -> Basis:
    return x if isinstance(x, Basis) else Basis(x)


class NamedMatrix:
    """A matrix whose rows and columns carry names, so weights can be written by name.

        W_Q = blank(1, resid)          # 1 × d_model, all zero
        W_Q[0, "consonant"] = 1

    Entries may be numbers or sympy expressions. `np.asarray(m)` gives the numbers.
    """

    __array_priority__ = 20

    def __init__(self, rows: int | Sequence[str] | Basis, cols: int | Sequence[str] | Basis, values=None):
        self.rows, self.cols = as_basis(rows), as_basis(cols)
        shape = (len(self.rows), len(self.cols))
        if values is None:
            self.values = np.zeros(shape, dtype=object)
        else:
            values = np.array(values, dtype=object)
            if values.shape != shape:
                raise CircuitError(f"values of shape {values.shape} do not fit a {shape[0]} × {shape[1]} named matrix")
            self.values = values

    @property
    def shape(self) -> tuple[int, int]:
        return self.values.shape

    def _key(self, key):
        if not isinstance(key, tuple) or len(key) != 2:
            raise CircuitError("index a named matrix with [row, column], e.g. W_Q[0, 'consonant']")
        r, c = self.rows.index(key[0]), self.cols.index(key[1])
        if isinstance(r, list) and isinstance(c, list):
            return np.ix_(r, c)
        return r, c

    def __getitem__(self, key):
        return self.values[self._key(key)]

    def __setitem__(self, key, value):
        self.values[self._key(key)] = value

    def __array__(self, dtype=None, copy=None):
        return np.array(self.values.tolist(), dtype=dtype or float)

    def tolist(self) -> list[list]:
        return self.values.tolist()

    @property
    def T(self) -> "NamedMatrix":
        return NamedMatrix(self.cols, self.rows, self.values.T.copy())

    def __repr__(self) -> str:
        width = max([len(c) for c in self.cols.labels] + [6])
        head = " " * 12 + " ".join(c.rjust(width) for c in self.cols.labels)
        body = [
            r[:11].ljust(12) + " ".join(str(v).rjust(width) for v in row)
            for r, row in zip(self.rows.labels, self.values)
        ]
        return "\n".join([head, *body])


def blank(rows: int | Sequence[str] | Basis, cols: int | Sequence[str] | Basis) -> NamedMatrix:
    """An all-zero named matrix to fill in by name."""
    return NamedMatrix(rows, cols)


def labelled(rows, cols, values) -> NamedMatrix:
    """A named matrix with the given values (nested lists, numpy or sympy)."""
    return NamedMatrix(rows, cols, values)
