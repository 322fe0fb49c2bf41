"""Turn whatever a user wrote for a matrix (lists, numpy, sympy, named) into checked float64 numbers.

This is the one module that touches sympy: symbolic weights are bound through a
parameter mapping here, and their exact form stays available through `exact`.
"""

from __future__ import annotations

import contextlib
import contextvars
import numbers
from collections.abc import Iterator, Mapping
from typing import NamedTuple

import numpy as np

from circuits import kept
from circuits.errors import CircuitError
from circuits.model.basis import NamedMatrix

# Larger entries make q·k overflow float64 (1e150 squared is 1e300); refuse them up front.
MAX_ABS = 1e100
# More entries than this in one matrix (2 GiB of float64) is a typo, not a circuit: refuse before allocating.
MAX_ENTRIES = 2**28

Params = Mapping[object, object]


def is_symbolic(x) -> bool:
    return type(x).__module__.split(".")[0] == "sympy"


def raw_array(value) -> np.ndarray:
    """Any matrix-like as an object or numeric numpy array, without judging its entries."""
    if isinstance(value, NamedMatrix):
        return value.values
    if is_symbolic(value) and hasattr(value, "tolist"):  # a sympy Matrix
        return np.array(value.tolist(), dtype=object)
    if isinstance(value, np.ndarray):
        return value
    if hasattr(value, "detach") and hasattr(value, "numpy"):  # a torch tensor
        return value.detach().cpu().double().numpy()
    if isinstance(value, (list, tuple)):
        return _nested(value)
    return np.array(value, dtype=object)


def _nested(value) -> np.ndarray:
    """Nested lists to an array, refusing ragged ones with the row that differs."""

    def shape_of(v, path):
        if isinstance(v, (list, tuple)) or (isinstance(v, np.ndarray) and v.ndim > 0):
            subs = [shape_of(x, (*path, i)) for i, x in enumerate(v)]
            for i, s in enumerate(subs[1:], 1):
                if s != subs[0]:
                    where = "][".join(map(str, (*path, i)))
                    raise _Ragged(
                        f"is ragged: entry [{where}] has shape {s} "
                        f"but entry [{']['.join(map(str, (*path, 0)))}] has {subs[0]}"
                    )
            return (len(v), *(subs[0] if subs else ()))
        return ()

    shape_of(value, ())
    arr = np.empty(np.shape(np.array(value, dtype=object)), dtype=object)
    arr[...] = np.array(value, dtype=object)
    return arr


class _Ragged(Exception):
    pass


def _fmt_shape(shape) -> str:
    return "(" + ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "") + ")"


def _need(shape, dims) -> str:
    names = [d if isinstance(d, str) else None for d in dims]
    if any(names):
        return f"({', '.join(n or str(s) for n, s in zip(names, shape))}) = {_fmt_shape(shape)}"
    return _fmt_shape(shape)


def shape_message(name: str, has: tuple, shape: tuple, dims: tuple | None = None) -> str:
    """ "{name} has shape (2, 3) but needs (d_head, d_model) = (?, 2)": the one wording of a wrong shape
    (`shape` holds None where any size fits; `dims` names the axes, if known)."""
    need = _need(tuple("?" if s is None else s for s in shape), dims or (None,) * len(shape))
    return f"{name} has shape {_fmt_shape(tuple(has))} but needs {need}"


def _bind(value, params: Params | None):
    import sympy

    subs = {}
    for k, v in (params or {}).items():
        sym = sympy.Symbol(k) if isinstance(k, str) else k
        number = sympy.sympify(v, strict=False) if not isinstance(v, str) else None
        if number is None or getattr(number, "free_symbols", None) or not getattr(number, "is_number", False):
            raise CircuitError(f"parameter {str(k)!r} is bound to {v!r}, which is not a number")
        if not number.is_finite:  # nan, oo and zoo would only surface later as a bad matrix entry
            raise CircuitError(f"parameter {str(k)!r} is bound to {v!r}, which is not a finite number")
        subs[sym] = number
    return sympy.sympify(value).subs(subs)


def _entry(x, name: str, where: str, params: Params | None) -> float:
    if x is None:
        raise CircuitError(f"{name} has None at {where}; every entry must be a number")
    if isinstance(x, bool):
        return float(x)
    if isinstance(x, numbers.Number) and not is_symbolic(x):
        if isinstance(x, complex):
            raise CircuitError(f"{name} has a complex entry {x} at {where}; entries must be real")
        try:
            return float(x)
        except OverflowError:
            raise CircuitError(f"{name} has an entry too large for float64 at {where} ({str(x)[:20]}…)") from None
    if is_symbolic(x):
        bound = _bind(x, params)
        free = sorted(str(s) for s in getattr(bound, "free_symbols", ()))
        if free:
            raise CircuitError(
                f"{name} uses symbol{'s' if len(free) > 1 else ''} {', '.join(free)} at {where} with no value: "
                f"bind {'them' if len(free) > 1 else 'it'} in params, e.g. params={{{free[0]!r}: 2.0}}"
            )
        try:
            out = complex(bound)
        except (TypeError, ValueError):
            raise CircuitError(f"{name} at {where} does not evaluate to a number: {bound}") from None
        if out.imag:
            raise CircuitError(f"{name} at {where} evaluates to a complex number {out}")
        return out.real
    if isinstance(x, str):
        raise CircuitError(f"{name} has the string {x!r} at {where}; every entry must be a number")
    try:
        return float(x)
    except (TypeError, ValueError):
        raise CircuitError(f"{name} has {type(x).__name__} {x!r} at {where}; every entry must be a number") from None


_PLAIN = (int, float, np.integer, np.floating)


def _fast(raw: np.ndarray, params: Params | None, kinds: set[type]) -> np.ndarray | None:
    """Plain numbers at once, and symbolic matrices bound in one substitution; None when an entry needs a closer look.
    `kinds`: the types of the entries."""
    if all(issubclass(k, _PLAIN) and k is not bool for k in kinds):
        try:
            return raw.astype(np.float64)
        except OverflowError:
            return None
    if raw.ndim != 2 or not all(issubclass(k, _PLAIN) or k.__module__.split(".")[0] == "sympy" for k in kinds):
        return None
    import sympy

    plain = _subs(params)
    subs, values = {k: sympy.sympify(v) for k, v in plain.items()}, {}
    # the entries bound under these very params before (a model is built again and again with the same params: an
    # audit's mutants, the margins' scales), keyed by the symbols themselves and the numbers' types (2, 2.0 apart)
    key = frozenset((k, type(v), v) for k, v in plain.items())
    if (known := _BOUND.get(key)) is None:  # every factor a sharpening search tries is params of its own
        _BOUND.keep(key, known := {})
    try:  # each distinct entry once (a matrix holds few: 0, 1, s, s/2), as Matrix.subs(...).evalf() would bind it;
        # xreplace swaps each symbol for its number as subs does, the same expression at a third of the cost
        for x in raw.flat:
            if x not in values:
                if x not in known:
                    bound = sympy.sympify(x).xreplace(subs)
                    known[x] = None if bound.free_symbols else float(bound.evalf())
                if known[x] is None:
                    return None
                values[x] = known[x]
        return np.array([values[x] for x in raw.flat], dtype=np.float64).reshape(raw.shape)
    except (TypeError, ValueError, CircuitError):
        return None


# params (symbol, type, value) -> {entry: its number, or None if a symbol is free}
_BOUND = kept.latest("entries bound to numbers", 4096, refresh=True)


def _subs(params: Params | None) -> dict:
    import sympy

    return {
        (sympy.Symbol(k) if isinstance(k, str) else k): v
        for k, v in (params or {}).items()
        if isinstance(v, _PLAIN) and not isinstance(v, bool) and np.isfinite(v)
    }


# --- the same objects, converted once ----------------------------------------------------------------------------
# An audit builds a model for each of ~1,000 mutants of one answer: each mutant edits a copy of one matrix, and every
# other matrix (the givens, the answer's other matrices) is the very object it was for the last mutant. Inside
# `same_objects()` a labelled or symbolic matrix (a NamedMatrix, an object array of numbers and sympy expressions) is
# converted, and its symbols found, once per object and arguments: kept with the object itself, so its id is not
# reused, and never outside the block, so a matrix edited in place between two checks (a test, a notebook) is always
# converted anew.
_SAME: contextvars.ContextVar[kept.Latest | None] = contextvars.ContextVar("same_objects", default=None)
SAME_KEPT = 64  # the latest conversions kept in the block: every matrix a model of the answer is built from


@contextlib.contextmanager
def same_objects() -> Iterator[None]:
    """Within the block, a labelled or symbolic matrix is converted (matrix) and read for symbols (symbols_in) once
    per object and arguments; nothing in the block may edit a matrix in place."""
    token = _SAME.set(kept.Latest("same objects", SAME_KEPT, refresh=True))  # this block's own: forget() leaves it
    try:
        yield
    finally:
        _SAME.reset(token)


def _once(key: tuple, value, compute):
    """compute(), or the result kept for `value` (the same object) under `key`; only inside same_objects() (its
    callers look first)."""
    memo = _SAME.get()
    try:
        hit = memo.get(key)
    except TypeError:  # an argument that cannot key it (labels given as lists): converted as outside the block
        return compute()
    if hit is not None and hit[0] is value:
        return hit[1]
    out = compute()
    memo.keep(key, (value, out))
    return out


def _kept_once(value) -> bool:
    """Whether converting `value` is worth keeping inside same_objects(): a labelled matrix, a sympy one, or an
    array of entries (a list of numbers is converted as fast as it is looked up)."""
    return (
        isinstance(value, NamedMatrix)
        or (isinstance(value, np.ndarray) and value.dtype == object)
        or (is_symbolic(value) and hasattr(value, "tolist"))
    )


def _params_key(params: Params | None) -> tuple:
    return tuple(sorted((str(k), type(v).__name__, repr(v)) for k, v in dict(params or {}).items()))


def matrix(
    value, name: str, shape: tuple, dims: tuple | None = None, params: Params | None = None, labels: tuple | None = None
) -> np.ndarray:
    """`value` as a float64 array of `shape` (None entries match anything), or a one-line CircuitError.

    `name` says what the matrix is ("W_Q of head 0.1"); `dims` names the needed
    axes ("d_head", "d_model") so a wrong shape is reported in the puzzle's terms.
    `labels` gives, per axis, the names a labelled (NamedMatrix) value must carry there,
    as (what, names) or None; a matrix labelled otherwise is refused, never used by position.
    """
    if _SAME.get() is None or not _kept_once(value):
        return _matrix(value, name, shape, dims, params, labels)
    key = ("matrix", id(value), name, shape, dims, _params_key(params), labels)
    return _once(key, value, lambda: _matrix(value, name, shape, dims, params, labels))


def _matrix(value, name: str, shape: tuple, dims: tuple | None, params: Params | None, labels: tuple | None):
    if value is None:
        raise CircuitError(f"{name} is missing (None); it needs shape {_fmt_shape(shape)}")
    if isinstance(value, np.ma.MaskedArray):
        raise CircuitError(
            f"{name} is a masked array, and the model would ignore its mask: pass plain numbers (e.g. a.filled(0))"
        )
    try:
        raw = raw_array(value)
    except _Ragged as e:
        raise CircuitError(f"{name} {e}") from None
    if raw.size > MAX_ENTRIES:
        raise CircuitError(
            f"{name} has shape {_fmt_shape(raw.shape)}, {raw.size:,} entries; "
            f"one matrix may hold at most {MAX_ENTRIES:,}"
        )
    kinds = {type(x) for x in raw.flat} if raw.dtype == object else set()  # once: a matrix holds few kinds of entry
    if np.issubdtype(raw.dtype, np.complexfloating) or any(issubclass(k, (complex, np.complexfloating)) for k in kinds):
        idx = next(i for i, x in np.ndenumerate(raw) if _is_complex(x))
        raise CircuitError(
            f"{name} has a complex entry {raw[idx]} at {_where(idx)} ({raw.dtype}); entries must be real"
        )
    if labels is not None and isinstance(value, NamedMatrix):
        check_labels(value, name, labels)
    has = raw.shape
    dims = dims or (None,) * len(shape)
    need = _need(tuple("?" if s is None else s for s in shape), dims)
    if not has and shape:
        raise CircuitError(
            f"{name} is {_what(value)}, not a {'vector' if len(shape) == 1 else 'matrix'}; it needs shape {need}"
        )
    want = tuple(h if s is None else s for s, h in zip(shape, has)) if len(has) == len(shape) else shape
    if has != want:
        msg = shape_message(name, has, shape, dims)
        if len(has) == 1 and len(shape) == 2:
            msg += "; a matrix needs nested lists, e.g. [[1, 0]] for one row"
        elif len(has) == 2 and all(s is None or s == h for s, h in zip(shape, has[::-1])):
            msg += "; it looks transposed"
        raise CircuitError(msg)
    if raw.dtype != object and np.issubdtype(raw.dtype, np.number) and not np.issubdtype(raw.dtype, np.complexfloating):
        out = np.array(raw, dtype=np.float64, order="C")  # our own copy, whatever layout the caller had
    else:
        out = _fast(raw, params, kinds if raw.dtype == object else {type(x) for x in raw.flat})
        if out is None:  # entry by entry, so a bad one is named with its index
            out = np.empty(raw.shape, dtype=np.float64)
            for idx, x in np.ndenumerate(raw):
                out[idx] = _entry(x, name, _where(idx), params)
    lo, hi = (out.min(), out.max()) if out.size else (0.0, 0.0)  # NaN propagates: two passes, no temporaries
    if not (np.isfinite(lo) and np.isfinite(hi)):
        idx = tuple(int(i) for i in np.argwhere(~np.isfinite(out))[0])
        raise CircuitError(f"{name} has {out[idx]} at {_where(idx)}; every entry must be finite")
    if max(-lo, hi) > MAX_ABS:
        idx = tuple(int(i) for i in np.argwhere(np.abs(out) > MAX_ABS)[0])
        raise CircuitError(
            f"{name} has {out[idx]:.3g} at {_where(idx)}; entries above {MAX_ABS:.0e} in size overflow float64 in q·k"
        )
    return frozen(np.ascontiguousarray(out), owned=True)


def frozen(a: np.ndarray, owned: bool = False) -> np.ndarray:
    """A C-contiguous, read-only float64 copy (or `a` itself when it already is one).

    C order fixes the BLAS kernel path, so equal weights give equal bits whatever layout
    they arrived in (a transposed view from a state dict would otherwise round differently);
    read-only, because a built weight edited in place would disagree with the products
    derived from it at build time. `owned`: `a` is a fresh array nobody else holds, so it
    may be frozen in place rather than copied (a model's large weights are copied once).
    """
    fits = a.dtype == np.float64 and a.flags.c_contiguous and a.base is None
    if fits and (owned or not a.flags.writeable):
        a.flags.writeable = False
        return a
    out = np.array(a, dtype=np.float64, order="C", copy=True)
    out.flags.writeable = False
    return out


def _is_complex(x) -> bool:
    return isinstance(x, (complex, np.complexfloating))


def check_labels(value: NamedMatrix, name: str, labels: tuple) -> None:
    """Refuse a named matrix whose row or column names differ from the ones its place needs.

    Plain numbered axes ("0", "1", …, from blank(4, resid)) carry no names and always fit.
    """
    for axis, own, need in (("rows", value.rows.labels, labels[0]), ("columns", value.cols.labels, labels[1])):
        if need is None or all(x.isdigit() for x in own):
            continue
        what, want = need
        want = tuple(str(x) for x in want)
        if own == want:
            continue
        if len(own) != len(want):
            continue  # the shape check says it better
        i = next(i for i, (a, b) in enumerate(zip(own, want)) if a != b)
        order = "in another order than" if sorted(own) == sorted(want) else "differently from"
        raise CircuitError(
            f"{name} has its {axis} labelled {order} {what}: {axis[:-1]} {i} is {own[i]!r} "
            f"where {what} has {want[i]!r}; build it with blank() on {what}"
        )


def _what(value) -> str:
    """A value that is not an array, in a few words: "a str ('identity')", "a function"."""
    if callable(value):
        return "a function"
    kind, shown = type(value).__name__, repr(value)
    shown = shown if len(shown) <= 30 else shown[:29] + "…"
    return f"{'an' if kind[0].lower() in 'aeiou' else 'a'} {kind} ({shown})"


def _where(idx) -> str:
    return "[" + ", ".join(map(str, idx)) + "]"


def symbols_in(value) -> set[str]:
    """Names of the sympy symbols a matrix-like uses (empty for plain numbers)."""
    if _SAME.get() is None or not _kept_once(value):
        return _symbols_in(value)
    return set(_once(("symbols", id(value)), value, lambda: frozenset(_symbols_in(value))))


def _symbols_in(value) -> set[str]:
    try:
        raw = raw_array(value)
    except _Ragged:
        return set()
    if raw.dtype != object:
        return set()
    kinds = {k for k in {type(x) for x in raw.flat} if k.__module__.split(".")[0] == "sympy"}
    out: set[str] = set()
    for x in {x for x in raw.flat if type(x) in kinds}:  # each distinct symbolic entry once (0, 1, s, s/2)
        out |= {str(s) for s in getattr(x, "free_symbols", ())}
    return out


def exact(value, params: Params | None = None):
    """The exact sympy Matrix of a matrix-like; floats become rationals where they are exact.

    With `params`, symbols are bound; without, they stay symbolic.
    """
    import sympy

    raw = raw_array(value)
    if raw.ndim == 1:
        raw = raw.reshape(1, -1)

    floats: dict[float, object] = {}  # each distinct float once: nsimplify is slow, and a matrix holds few (0, 1, ½)

    def rational(f: float):
        if f not in floats:
            floats[f] = (
                sympy.nsimplify(f, rational=True)
                if f.is_integer() or abs(f * 1e6 - round(f * 1e6)) < 1e-9
                else sympy.Float(f)
            )
        return floats[f]

    def conv(x):
        if is_symbolic(x):
            return _bind(x, params) if params else x
        if isinstance(x, (float, np.floating)):
            return rational(float(x))
        return sympy.sympify(x)

    return sympy.Matrix([[conv(x) for x in row] for row in raw.tolist()])


class Powers(NamedTuple):
    """A matrix as Σ_k x^k · parts[k], x the named symbols scaled together; `stray` is the index of an entry
    that is no such sum (exp(s), 2**s), None when every entry is one."""

    parts: dict[float, np.ndarray]
    stray: tuple[int, ...] | None = None


def powers(value, names, params: Params | None = None) -> Powers:
    """`value` split by the power of the symbols `names` in each term of each entry (exactly, in sympy): an entry
    s/2 + 3 is ½ in the part of power 1 and 3 in the part of power 0; params other than `names` are bound."""
    raw = raw_array(value)
    if raw.dtype != object or not any(is_symbolic(x) for x in raw.flat):
        return Powers({0.0: np.asarray(raw.astype(np.float64))})
    binds = _numbers(params, skip=set(names))
    terms: dict = {}  # each distinct entry once: a matrix holds few (0, s, s/2)
    for x in raw.flat:
        if x not in terms:
            terms[x] = _terms(x, names, binds)
    stray = next((idx for idx, x in np.ndenumerate(raw) if terms[x] is None), None)
    if stray is not None:
        return Powers({}, tuple(int(i) for i in stray))
    parts: dict[float, np.ndarray] = {}
    for idx, x in np.ndenumerate(raw):
        for k, c in terms[x].items():
            parts.setdefault(k, np.zeros(raw.shape))[idx] += c
    return Powers(parts)


def _numbers(params: Params | None, skip: set) -> dict:
    """params bound to numbers (plain or sympy: Rational(1, 3), pi), as sympy symbols → numbers, bar `skip`."""
    import sympy

    out = {}
    for k, v in (params or {}).items():
        if str(k) in skip or isinstance(v, (bool, str)):
            continue
        try:
            number = sympy.sympify(v, strict=False)
        except (sympy.SympifyError, TypeError, ValueError):
            continue  # not a number: the model's own build says so
        if getattr(number, "is_number", False):
            out[sympy.Symbol(k) if isinstance(k, str) else k] = number
    return out


def _terms(x, names, binds: dict) -> dict[float, float] | None:
    """{power: coefficient} of one entry in the symbols `names`; None when a term is no number times a power."""
    if not is_symbolic(x):
        return {0.0: float(x)} if x else {}
    import sympy

    out: dict[float, float] = {}
    for term in sympy.Add.make_args(sympy.expand(sympy.sympify(x).xreplace(binds))):
        symbols = [s for s in term.free_symbols if str(s) in set(names)]
        coeff, rest = term.as_independent(*symbols, as_Add=False) if symbols else (term, sympy.Integer(1))
        power = rest.as_powers_dict() if rest != 1 else {}
        if not all(b in symbols and getattr(p, "is_number", False) for b, p in power.items()):
            return None
        try:
            k, c = float(sum(power.values(), sympy.Integer(0))), float(coeff)
        except (TypeError, ValueError):
            return None
        out[k] = out.get(k, 0.0) + c
    return out


def vector(value, name: str, n: int, dim: str | None = None, params: Params | None = None) -> np.ndarray:
    """A 1-D vector of length n (biases, LayerNorm weights)."""
    return matrix(value, name, (n,), (dim,), params)
