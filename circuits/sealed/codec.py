"""Answers as plain data: what a submission's process hands back to the grader (numbers, never objects).

An answer crosses the process boundary as JSON whose arrays are raw little-endian bytes of a
numeric dtype (bool, int, uint, float; never object, never pickle). A matrix written with sympy
symbols (`W_Q = s * M`, `params = {"s": 20}`) keeps its dependence on the symbols: each entry must
be a polynomial in them, and the matrix goes over as one coefficient array per monomial, so the
grader rebuilds the same symbolic matrix without evaluating any text. `encode` runs in the
submission's process, `decode` in the grader's.
"""

from __future__ import annotations

import base64
import numbers

import numpy as np

from circuits.checking.puzzle import Stub
from circuits.model.basis import NamedMatrix

KINDS = "biufc"  # numpy dtype kinds that may cross: bool, signed and unsigned ints, floats, complex (refused here)
CHECKER_MAX = 2**28  # the most entries the checker takes in one matrix (model.weights.MAX_ENTRIES)
MAX_DEPTH = 8  # nesting of lists and tuples in a code puzzle's inputs and outputs
MAX_ITEMS = 1 << 16  # items in one list, tuple or dict
MAX_ENTRIES = 1 << 20  # entries of one array (8 MB of float64); the largest reference matrix has about 2,000
MAX_SYMBOLS = 8  # symbols one symbolic matrix may use (a reference uses one: s)
MAX_TERMS = 64  # monomials of one symbolic matrix
MAX_DEGREE = 16  # a symbol's power in any entry (a reference uses 1): s**(10**8) is refused, never expanded


class Unreadable(Exception):
    """A value the grader cannot take as numbers (a function where a matrix goes, a string, …)."""


class Refused(Unreadable):
    """Numbers past what any answer needs (too many entries, too high a degree): refused, and said so."""


def _what(value) -> str:
    if callable(value):
        return "a function"
    name = type(value).__name__
    return f"{'an' if name[0].lower() in 'aeiou' else 'a'} {name}"


def _is_sympy(x) -> bool:
    return type(x).__module__.split(".")[0] == "sympy"


# --- encoding (the submission's process) ---------------------------------------------------------------------
def array(a: np.ndarray) -> dict:
    """A numeric array as {"nd": dtype, "shape", "b64"}: its exact bytes."""
    if a.dtype.kind not in KINDS:
        raise Unreadable(f"an array of {a.dtype}")
    if a.size > CHECKER_MAX:  # its shape alone: the checker refuses it, in its own words, before any entry is read
        return {"huge": {"shape": [int(n) for n in a.shape], "dtype": a.dtype.str}}
    if a.size > MAX_ENTRIES:
        raise Refused(
            f"an array of shape {a.shape}: {a.size:,} entries, more than the {MAX_ENTRIES:,} any answer may have"
        )
    a = np.ascontiguousarray(a, dtype=a.dtype.newbyteorder("<")).reshape(a.shape)  # (keeps a 0-d array 0-d)
    return {"nd": a.dtype.str, "shape": list(a.shape), "b64": base64.b64encode(a.tobytes()).decode("ascii")}


_PLAIN = (bool, int, float, np.bool_, np.integer, np.floating)  # entries numpy converts as they are


def _numbers(raw: np.ndarray) -> np.ndarray:
    """An object array of plain numbers as float64: at once when every entry is a plain number, else entry by
    entry, so a complex number, a string or a function is named."""
    if all(issubclass(k, _PLAIN) for k in {type(x) for x in raw.flat}):
        try:
            return raw.astype(np.float64)
        except (TypeError, ValueError, OverflowError) as e:
            raise Unreadable(str(e)) from None
    try:
        return np.array([_number(x) for x in raw.flat], dtype=np.float64).reshape(raw.shape)
    except (TypeError, ValueError, OverflowError) as e:
        raise Unreadable(str(e)) from None


def _entries(raw: np.ndarray) -> dict:
    """An object array of numbers and sympy expressions: plain numbers, or coefficients per monomial."""
    symbolic = np.fromiter(
        (_is_sympy(x) and bool(getattr(x, "free_symbols", None)) for x in raw.flat), dtype=bool, count=raw.size
    ).reshape(raw.shape)
    if not symbolic.any():
        return array(_numbers(raw))

    symbols = sorted({s for x in raw[symbolic].flat for s in x.free_symbols}, key=str)
    terms: dict[tuple, np.ndarray] = {(0,) * len(symbols): _numbers(np.where(symbolic, 0, raw))}
    for idx in np.ndindex(raw.shape):
        if not symbolic[idx]:
            continue
        for powers, coeff in _monomials(raw[idx], symbols, [int(i) for i in idx]):
            terms.setdefault(powers, np.zeros(raw.shape))[idx] += _number(coeff)
    return {
        "symbols": [str(s) for s in symbols],
        "terms": [{"powers": list(p), "coeffs": array(c)} for p, c in sorted(terms.items())],
    }


def _monomials(x, symbols: list, where: list[int]) -> list[tuple[tuple[int, ...], object]]:
    """An entry as (powers, coefficient) pairs: a polynomial in the symbols, or one divided by a monomial (20/s: a
    power −1), each power within ±MAX_DEGREE; anything else is Unreadable, said with the entry."""
    import sympy

    names = ", ".join(map(str, symbols))
    try:
        num, den = sympy.fraction(sympy.together(x))
        top, bottom = sympy.Poly(num, *symbols), sympy.Poly(den, *symbols)
    except sympy.PolynomialError:
        top = bottom = None
    if top is None or len(bottom.terms()) != 1:
        raise Unreadable(
            f"entry {where} is {x}, not a polynomial in {names} (entries must be polynomials in the "
            "symbols, or one over a power of them)"
        )
    ((down, scale),) = bottom.terms()
    found = [(tuple(p - d for p, d in zip(powers, down)), coeff / scale) for powers, coeff in top.terms()]
    worst = max((abs(p) for powers, _ in found for p in powers), default=0)
    if worst > MAX_DEGREE:
        raise Refused(f"entry {where} has degree {worst} (at most {MAX_DEGREE})")
    return found


def _number(x) -> float:
    if isinstance(x, (bool, np.bool_)):
        return float(x)
    if isinstance(x, (complex, np.complexfloating)) or (_is_sympy(x) and getattr(x, "is_real", None) is False):
        raise Unreadable(f"a complex entry {x}")
    if isinstance(x, numbers.Number) or _is_sympy(x) or isinstance(x, np.generic):
        try:
            return float(x)
        except (TypeError, ValueError):
            raise Unreadable(f"the entry {str(x)[:40]}, which is not a number") from None
    raise Unreadable(f"{_what(x)} entry ({str(x)[:30]!r})")


def matrix(value) -> dict:
    """An answer matrix (lists, numpy, NamedMatrix, sympy Matrix) as data; Unreadable when it is none."""
    if isinstance(value, NamedMatrix):
        return {
            "named": {"rows": list(value.rows.labels), "cols": list(value.cols.labels), "values": matrix(value.values)}
        }
    if isinstance(value, np.ma.MaskedArray):  # the checker refuses it, saying why: its mask crosses too
        return {"masked": {"data": array(np.ma.getdata(value)), "mask": array(np.ma.getmaskarray(value))}}
    if isinstance(value, np.ndarray) and value.dtype.kind in KINDS:
        return {"numbers": array(value)}
    if isinstance(value, (numbers.Number, np.generic)) and not _is_sympy(value):
        raise Unreadable(_what(value))  # a lone number: handed over as it is, for the checker to name
    if _is_sympy(value) and hasattr(value, "tolist"):
        raw = np.array(value.tolist(), dtype=object)
    elif isinstance(value, (list, tuple, np.ndarray)) or isinstance(value, numbers.Number) or _is_sympy(value):
        try:
            raw = np.array(value, dtype=object)
        except ValueError as e:
            raise Unreadable(f"ragged nested lists ({e})") from None
        if raw.dtype == object and any(isinstance(x, (list, tuple)) for x in raw.flat):
            raise Unreadable("ragged nested lists (rows of different lengths)")
    else:
        raise Unreadable(_what(value))
    try:
        return {"entries": _entries(raw)}
    except Refused:
        raise
    except Unreadable as first:  # an entry that is no real number (a complex one, None, a string): each as it is
        if raw.size > MAX_ITEMS:
            raise
        try:
            items = [value(x) for x in raw.flat]
        except Exception:  # noqa: BLE001 - an entry no data can carry (exp(s), a function): the first reason
            raise first from None
        return {"objects": {"shape": list(raw.shape), "items": items}}


def params(value) -> dict:
    """`params = {"s": 20}` (keys: names or sympy symbols; values: numbers) as {"s": 20.0}."""
    if not isinstance(value, dict):
        raise Unreadable(f"params is {_what(value)}, not a dict")
    out = {}
    for k, v in value.items():
        if not (isinstance(k, str) or _is_sympy(k)):
            raise Unreadable(f"params has the key {k!r}; keys are names or sympy symbols")
        if isinstance(v, bool) or not (isinstance(v, numbers.Number) or _is_sympy(v) or isinstance(v, np.generic)):
            raise Unreadable(f"params[{str(k)!r}] is {_what(v)}, not a number")
        out[str(k)] = int(v) if isinstance(v, (int, np.integer)) else _number(v)
    return {"params": out}


def answer_value(name: str, value) -> dict:
    """One answer name's value as data: a stub, params, or a matrix; else plain data (a string, None, a dict…)
    for the checker to reject as it would at home; else {"unreadable": why, "type": its type's name}."""
    if isinstance(value, Stub):
        return {"stub": value.hint}
    try:
        return params(value) if name == "params" else matrix(value)
    except Refused as e:
        return {"refused": str(e)}
    except Unreadable as e:
        why = str(e)
    except Exception as e:  # noqa: BLE001 - an object whose conversion raises (a learner's class)
        why = f"{_what(value)} ({type(e).__name__})"
    try:
        return {"plain": _value(value)}
    except Exception:  # noqa: BLE001 - anything but plain data
        return {"unreadable": why, "type": type(value).__name__}


def _value(x):
    return value(x)


def value(x, depth: int = 0):
    """A code puzzle's input or output (numbers, arrays, None, strings, lists, tuples, str-keyed dicts) as data."""
    if depth > MAX_DEPTH:
        raise Unreadable("nested deeper than 8 levels")
    if x is None or isinstance(x, (bool, str)):
        return x
    if isinstance(x, (int, float)) and not isinstance(x, bool):
        return {"int": str(x)} if isinstance(x, int) else {"float": float(x).hex()}
    if isinstance(x, complex):
        return {"complex": [x.real.hex(), x.imag.hex()]}
    if isinstance(x, np.generic):
        return {"scalar": array(np.asarray(x))}
    if isinstance(x, np.ndarray):
        return array(x)
    if isinstance(x, (list, tuple)):
        if len(x) > MAX_ITEMS:
            raise Unreadable(f"a {type(x).__name__} of {len(x)} items")
        return {"list" if isinstance(x, list) else "tuple": [value(v, depth + 1) for v in x]}
    if isinstance(x, dict) and all(isinstance(k, str) for k in x) and len(x) <= MAX_ITEMS:
        return {"dict": {k: value(v, depth + 1) for k, v in x.items()}}
    raise Unreadable(_what(x))


# --- decoding (the grader's process) -------------------------------------------------------------------------
def to_array(d: dict) -> np.ndarray:
    """Bytes back into an array, refusing any dtype but bool, int, uint, float or complex, and a shape the bytes do
    not fill; an array past what the checker takes comes back as its shape alone (zeros that take no memory)."""
    if "huge" in d:
        shape = tuple(int(n) for n in d["huge"]["shape"])
        dtype = np.dtype(str(d["huge"]["dtype"]))
        if (
            dtype.kind not in KINDS
            or len(shape) > 8
            or any(n < 0 for n in shape)
            or int(np.prod(shape, dtype=np.float64)) <= CHECKER_MAX
        ):
            raise Unreadable(f"an array of shape {shape} that is not past the checker's limit")
        return np.broadcast_to(np.zeros((), dtype=dtype), shape)
    dtype = np.dtype(str(d["nd"]))
    if dtype.kind not in KINDS or dtype.hasobject:
        raise Unreadable(f"an array of {dtype}")
    shape = tuple(int(n) for n in d["shape"])
    if len(shape) > 8 or int(np.prod(shape, dtype=np.float64)) > MAX_ENTRIES:
        raise Refused(f"an array of shape {shape}, more than {MAX_ENTRIES:,} entries")
    data = base64.b64decode(str(d["b64"]), validate=True)
    if any(n < 0 for n in shape) or int(np.prod(shape, dtype=np.int64)) * dtype.itemsize != len(data):
        raise Unreadable(f"{len(data)} bytes do not fill shape {shape} of {dtype}")
    return np.frombuffer(data, dtype=dtype).reshape(shape).astype(dtype.newbyteorder("="))


def to_matrix(d: dict):
    """A matrix as the checker expects it: numbers, a NamedMatrix, or an object array of sympy polynomials."""
    if "named" in d:
        n = d["named"]
        values = to_matrix(n["values"])
        return NamedMatrix([str(x) for x in n["rows"]], [str(x) for x in n["cols"]], np.asarray(values, dtype=object))
    if "numbers" in d:
        return to_array(d["numbers"])
    if "masked" in d:
        return np.ma.masked_array(to_array(d["masked"]["data"]), mask=to_array(d["masked"]["mask"]))
    if "objects" in d:
        shape = tuple(int(n) for n in d["objects"]["shape"])
        items = [to_value(x) for x in d["objects"]["items"]]
        if len(items) != int(np.prod(shape, dtype=np.int64)) or len(items) > MAX_ITEMS:
            raise Unreadable("entries that do not fill their shape")
        out = np.empty(len(items), dtype=object)
        out[:] = items
        return out.reshape(shape)
    e = d["entries"]
    if "nd" in e:
        return to_array(e)
    import sympy

    symbols = [sympy.Symbol(str(s)[:40]) for s in e["symbols"]]
    if len(symbols) > MAX_SYMBOLS or len(e["terms"]) > MAX_TERMS:
        raise Refused(
            f"a symbolic matrix of {len(symbols)} symbols and {len(e['terms'])} monomials "
            f"(at most {MAX_SYMBOLS} and {MAX_TERMS})"
        )
    out = None
    for term in e["terms"]:
        powers = [int(p) for p in term["powers"]]
        if len(powers) != len(symbols):
            raise Unreadable("a monomial that does not fit the symbols")
        if any(abs(p) > MAX_DEGREE for p in powers):
            worst = max(powers, key=abs)
            raise Refused(f"an entry of degree {worst} in {symbols[powers.index(worst)]} (at most {MAX_DEGREE})")
        monomial = sympy.Mul(*(s**p for s, p in zip(symbols, powers)))
        coeffs = to_array(term["coeffs"]).astype(np.float64)
        if not np.isfinite(coeffs).all():
            raise Unreadable("a symbolic entry with an infinite or NaN coefficient")
        part = np.vectorize(lambda c: _coefficient(c) * monomial if c else sympy.Integer(0), otypes=[object])(coeffs)
        out = part if out is None else out + part
    if out is None:
        raise Unreadable("a symbolic matrix with no terms")
    return out


def _coefficient(c: float):
    """A coefficient as sympy reads a written number: 20.0 -> 20, 0.5 -> 1/2 (as weights.exact does), else a Float."""
    import sympy

    if float(c).is_integer():
        return sympy.Integer(int(c))
    if abs(c * 1e6 - round(c * 1e6)) < 1e-9:
        return sympy.nsimplify(c, rational=True)
    return sympy.Float(c)


def to_answer_value(d: dict):
    if "stub" in d:
        return Stub(str(d["stub"]))
    if "plain" in d:
        return to_value(d["plain"])
    if "unreadable" in d:
        return placeholder(str(d.get("type", "object")))
    if "params" in d:
        return {
            str(k): (v if isinstance(v, (int, float)) and not isinstance(v, bool) else float("nan"))
            for k, v in d["params"].items()
        }
    return to_matrix(d)


def placeholder(type_name: str):
    """A stand-in for an object that could not cross (a function, a learner's class): a function for a function,
    else of a class named as its type, so the checker's message names it as it would have at home."""
    if type_name in ("function", "builtin_function_or_method", "method", "lambda"):

        def function(*args, **kwargs):
            raise TypeError("a function handed in where numbers go")

        return function
    name = type_name if type_name.isidentifier() else "object"
    return type(name, (), {"__repr__": lambda self: f"<{name}>"})()


def to_value(d):
    """The inverse of `value`."""
    if d is None or isinstance(d, (bool, str)):
        return d
    if not isinstance(d, dict):
        raise Unreadable(f"unexpected {type(d).__name__}")
    if "nd" in d:
        return to_array(d)
    if "int" in d:
        return int(str(d["int"])[:400])
    if "float" in d:
        return float.fromhex(str(d["float"]))
    if "complex" in d:
        re_, im = (float.fromhex(str(x)) for x in list(d["complex"])[:2])
        return complex(re_, im)
    if "scalar" in d:
        return to_array(d["scalar"])[()]
    if "list" in d:
        return [to_value(v) for v in d["list"]]
    if "tuple" in d:
        return tuple(to_value(v) for v in d["tuple"])
    if "dict" in d:
        return {str(k): to_value(v) for k, v in d["dict"].items()}
    raise Unreadable("an unknown kind of value")
