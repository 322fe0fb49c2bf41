"""Numbers, vectors, positions, parts of the model and residual-direction families as explanations print them."""

from __future__ import annotations

import numpy as np

from circuits.targets.base import Tokens


def fmt_num(x: float) -> str:
    """A number at 3 digits, with float noise (below 1e-9) printed as 0."""
    return "0" if abs(x) < 1e-9 else f"{x:.3g}"


def fmt_vec(v, digits: int = 3) -> str:
    """A vector as `[1, 0.5, 0]` at `digits` significant digits (at 3, entries below 1e-3 print as 0)."""
    v = np.atleast_1d(np.asarray(v, dtype=float))
    small = 1e-3 if digits == 3 else 0.0
    return "[" + ", ".join(f"{x:.{digits}g}" if x != 0 and abs(x) >= small else "0" for x in v) + "]"


def fmt_named(v, names: list[str]) -> str:
    """A vector by its non-zero directions, `xor 1, x −0.5`, or 0."""
    parts = [f"{n} {x:.3g}" for n, x in zip(names, v) if abs(x) >= 1e-3]
    return ", ".join(parts) if parts else "0"


def fmt_pair(expected, yours) -> tuple[str, str]:
    """Both vectors with just enough digits to show that they differ (3 when that is enough)."""
    for digits in (3, 6, 9, 12, 17):
        a, b = fmt_vec(expected, digits), fmt_vec(yours, digits)
        if a != b:
            return a, b
    return a, b


def family_of(label: str) -> str:
    """A residual direction's family: tok:a → tok:*, cos:1 and sin:1 → cos/sin:* (position)."""
    prefix, colon, _ = label.partition(":")
    if not colon:
        return label
    return "cos/sin:*" if prefix in ("cos", "sin") else f"{prefix}:*"


def families(labels) -> tuple[str, ...]:
    """The families of some residual directions, each once, in order: ("tok:*", "cos/sin:*")."""
    return tuple(dict.fromkeys(family_of(x) for x in labels))


def token_at(tokens: Tokens, i: int) -> str:
    """A position and its token: `3 'a'`."""
    return f"{i} {tokens[i]!r}"


def head(head) -> str:
    """A head by its layer and index: `head 1.0`."""
    return f"head {head[0]}.{head[1]}"


def part(part) -> str:
    """A part of the model that writes into the residual: the embedding, a head, an MLP."""
    if part[0] == "embedding":
        return "the embedding"
    return head(part[1:]) if part[0] == "head" else f"the MLP of layer {part[1]}"


def listed(names) -> str:
    """`a`, `a and b`, `a, b and c`."""
    return " and ".join([", ".join(names[:-1]), names[-1]] if len(names) > 1 else list(names))


def digits(*values: float) -> int:
    """The fewest significant digits (at least 3) at which the distinct `values` print distinct: where a gap
    decides, a report must not show a tie (−200 against −200)."""
    distinct = sorted(set(float(v) for v in values))
    for d in range(3, 13):
        if len({f"{v:.{d}g}" for v in distinct}) == len(distinct):
            return d
    return 17
