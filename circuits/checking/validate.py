"""A puzzle checked when it loads: each author's mistake is one line naming the file, the field, found vs needed."""

from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence

import numpy as np

from circuits.checking import limits
from circuits.errors import CircuitError

MAX_SHOWN = 8  # alphabet tokens listed in a message


def _listing(tokens: Sequence[str]) -> str:
    shown = " ".join(repr(t) for t in list(tokens)[:MAX_SHOWN])
    return shown + (f" … ({len(tokens)} tokens)" if len(tokens) > MAX_SHOWN else "")


def _at(e: BaseException) -> str:
    """` at line N`: the deepest line of the author's own file in `e`'s traceback."""
    frames = limits.file_frames(e)
    return f" at line {frames[-1].lineno}" if frames else ""


def _raised(e: BaseException) -> str:
    return f"{type(e).__name__}{_at(e)}" + (f" ({e})" if str(e) else "")


def example_tokens(puzzle) -> list[list[str]]:
    """The worked examples as token lists, split as the checker splits them (characters for a character alphabet)."""
    chars = puzzle.inputs is not None and all(len(a) == 1 for a in puzzle.inputs.alphabet)
    return [list(e) if isinstance(e, str) and chars else (e.split() if isinstance(e, str) else list(e))
            for e in puzzle.examples]


def _shown(tokens: list[str]) -> str:
    return limits.shown_input(tokens)


_VALIDATED: dict[int, dict] = {}  # id -> the shipped namespaces validated in this process (held: their ids stay theirs)


def validated(attempt):
    """The validation stage, after loading: the attempt's puzzle checked for its author's mistakes (one CircuitError
    line naming the file that declares it), under the check's time limit; a shipped puzzle once per process."""
    from circuits.checking import curriculum
    from circuits.io import paths

    names = attempt.names
    if _VALIDATED.get(id(names)) is names:
        return attempt
    where = attempt.declared_in or attempt.path
    shown = paths.shown(where)
    limits.run(lambda: validate(attempt.puzzle, names, shown), "check", "validating the puzzle", shown, source=where)
    if attempt.reference is not None or curriculum.is_shipped(where):
        _VALIDATED[id(names)] = names
    return attempt


def validate(puzzle, names: dict, shown: str) -> None:
    """Raise one CircuitError for the first mistake in `puzzle` (its file's globals are `names`, its path `shown`)."""
    fail = lambda field, what: CircuitError(f"{shown}: {field}: {what}")
    answer = list(puzzle.answer)
    if isinstance(puzzle.answer, str) or not all(isinstance(n, str) for n in answer):
        raise fail("answer", f"found {puzzle.answer!r}, needs a list of the names the learner defines, e.g. [\"W_Q\", \"W_K\"]")
    twice = sorted({n for n in answer if answer.count(n) > 1})
    if twice:
        raise fail("answer", f"{', '.join(twice)} listed twice; list each name once")
    optional = list(puzzle.optional)
    if isinstance(puzzle.optional, str) or not all(isinstance(n, str) and n.isidentifier() for n in optional):
        raise fail("optional", f"found {puzzle.optional!r}, needs a list of names, e.g. [\"params\"]")
    both = [n for n in optional if n in answer]
    if both:
        raise fail("optional", f"{', '.join(both)} is also in answer=; a name is either required or optional")
    _check_sharpness(puzzle, names, answer, fail)
    validate_writes(puzzle.writes, shown)
    _check_allowed_mutants(names.get("ALLOWED_MUTANTS", ()), fail)
    if puzzle.build is not None and not callable(puzzle.build):
        raise fail("build", f"found {type(puzzle.build).__name__}, needs a function build(answer) -> Model")
    if puzzle.inputs is None:
        return
    alphabet = list(puzzle.inputs.alphabet)
    known = set(alphabet)
    for f in puzzle.inputs.families:
        for cls, members in (getattr(f, "classes", None) or {}).items():
            stray = [t for t in members if t not in known]
            if stray:
                raise fail("inputs", f"the class {cls!r} of {f.name} has {stray[0]!r}, which is not in the alphabet "
                                     f"({_listing(alphabet)})")
    examples = example_tokens(puzzle)
    for i, (raw, toks) in enumerate(zip(puzzle.examples, examples)):
        if not toks:
            raise fail(f"examples[{i}]", "found an empty example, needs at least one token")
        for j, t in enumerate(toks):
            if t not in known:
                raise fail(f"examples[{i}]", f"{raw!r} has {t!r} at position {j}, which is not in the inputs' alphabet "
                                             f"({_listing(alphabet)}); an example may only use the vocabulary")
    tried = examples or puzzle.inputs.sample(2, seed=puzzle.inputs.seed)
    for n, target in enumerate(puzzle.targets):
        _check_target(n, target, tried, alphabet, fail)
    probe = examples + puzzle.inputs.sample(200, seed=puzzle.inputs.seed)
    for n, target in enumerate(puzzle.targets):
        if _checks_nothing(target, probe):
            raise fail(_target_name(n, target), f"checks nothing: on all {len(probe)} inputs tried (the worked examples and "
                       "random ones) it expects nothing at any position (None everywhere); a target must check something")


def _checks_nothing(target, probe: list[list[str]]) -> bool:
    """A spec (or per-input `where`) that gives no expectation at any position of any input (None: cannot tell)."""
    from circuits.checking.targets import Attention, NextToken, Output

    if isinstance(target, NextToken) and getattr(target, "after_bos", None) is not None:
        return False  # it reads the prediction at BOS too
    if isinstance(target, Output | NextToken):
        fn = target.spec
    elif isinstance(target, Attention) and target.per_input:
        fn = target.where
    else:
        return False
    return not any(e is not None for toks in probe for e in fn(list(toks)))


def validate_writes(writes, shown: str) -> None:
    """`writes=` on a Puzzle: {"head L.H" or "mlp L": [direction or pattern, …]}."""
    if writes is None:
        return
    if not isinstance(writes, Mapping):
        raise CircuitError(f"{shown}: writes: found {type(writes).__name__}, needs a dict such as "
                           '{"head 1.0": ["seen"], "mlp 0": ["pred:*"]}')
    for key, value in writes.items():
        parts = str(key).split()
        ok = (len(parts) == 2 and (parts[0] == "head" and _is_head(parts[1]) or parts[0] == "mlp" and parts[1].isdigit()))
        if not ok:
            raise CircuitError(f'{shown}: writes: {key!r} is not "head L.H" or "mlp L"')
        if isinstance(value, str) or not all(isinstance(d, str) for d in value):
            raise CircuitError(f"{shown}: writes[{key!r}]: needs a list of direction names or patterns, got {value!r}")


def _is_head(text: str) -> bool:
    layer, dot, index = text.partition(".")
    return bool(dot) and layer.isdigit() and index.isdigit()


def _check_sharpness(puzzle, names: dict, answer: list[str], fail) -> None:
    if isinstance(puzzle.sharpness, str):
        raise fail("sharpness", f"found the string {puzzle.sharpness!r}, needs a list of names, e.g. [{puzzle.sharpness!r}]")
    symbols = {str(v) for v in names.values() if getattr(v, "is_Symbol", False)}
    params = names.get("params")
    symbols |= {str(k) for k in params} if isinstance(params, dict) else set()
    for name in puzzle.sharpness:
        if name in answer or name in symbols:  # a symbol: the answer must use it and bind it (checked then)
            continue
        raise fail("sharpness", f"{name!r} is neither an answer name ({', '.join(answer)}) nor a sympy symbol the file "
                                f"defines; name the matrices that set the sharpness, or a symbol bound in params")


def _check_allowed_mutants(allowed, fail) -> None:
    """ALLOWED_MUTANTS, the file's reviewed equivalent mutants for `circuits audit`: pairs of two strings."""
    example = '[("W_V[0, b] 0 → 1", "why this edit cannot change what any target checks")]'
    if isinstance(allowed, (str, bytes)) or not isinstance(allowed, (list, tuple)):
        raise fail("ALLOWED_MUTANTS", f"found {_kind_of(allowed)}, needs a list of (mutant or pattern, reason) pairs, "
                                      f"e.g. {example}")
    for i, pair in enumerate(allowed):
        if isinstance(pair, str) or not isinstance(pair, (list, tuple)) or len(pair) != 2 \
                or not all(isinstance(s, str) and s.strip() for s in pair):
            raise fail("ALLOWED_MUTANTS", f"entry {i} is {_kind_of(pair)}, needs a (mutant or pattern, reason) pair of "
                                          f"non-empty strings, e.g. {example[1:-1]}")


def _kind_of(value) -> str:
    shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:39] + "…"
    return f"the string {shown}" if isinstance(value, str) else f"{shown} ({type(value).__name__})"


def _target_name(n: int, target) -> str:
    return f"targets[{n}] ({type(target).__name__})"


def _call(fn, arg, field: str, what: str, fail):
    try:
        return fn(arg)
    except limits.TimeLimit:
        raise
    except CircuitError as e:
        raise fail(field, f"{what} raised: {e}") from None
    except BaseException as e:  # noqa: BLE001 - the author's code raising is one line naming it
        raise fail(field, f"{what} raised {_raised(e)}") from None


def _check_target(n: int, target, examples: list[list[str]], alphabet: list[str], fail) -> None:
    from circuits.checking.behaviours import BEHAVIOURS
    from circuits.checking.readouts import Residual
    from circuits.checking.targets import Attention, NextToken, Output

    field = _target_name(n, target)
    limits.doing(f"checking target {limits.quoted(target.label)}")  # named if the author's code never returns
    if isinstance(target, Output | NextToken):
        if not callable(target.spec):
            raise fail(field, f"spec is {type(target.spec).__name__}, needs a function tokens -> one value per token")
        width = len(target.readout.directions) if isinstance(target, Output) and isinstance(target.readout, Residual) \
            else (len(target.readout.directions) if isinstance(target, Output) and getattr(target.readout, "directions", None)
                  else None)
        for toks in examples:
            got = _call(target.spec, list(toks), field, f"spec({_shown(toks)})", fail)
            _check_spec_result(got, toks, width, isinstance(target, NextToken), alphabet, field, fail)
        if isinstance(target, NextToken) and target.after_bos is not None:
            if not callable(target.after_bos):
                raise fail(field, f"after_bos is {type(target.after_bos).__name__}, needs a function tokens -> "
                                  "the token expected after BOS (or None)")
            for toks in examples:
                got = _call(target.after_bos, list(toks), field, f"after_bos({_shown(toks)})", fail)
                if got is not None and got not in alphabet:
                    raise fail(field, f"after_bos({_shown(toks)}) returned {got!r}, which is not a token of the "
                                      "puzzle's alphabet")
        return
    if not isinstance(target, Attention):
        return
    if not 0 < target.min_mass <= 1:
        raise fail(field, f"min_mass is {target.min_mass:g}, needs a share of attention in (0, 1]")
    if isinstance(target.where, str):
        if target.where not in BEHAVIOURS:
            raise fail(field, f"where={target.where!r} is not a behaviour; the behaviours are {', '.join(BEHAVIOURS)}")
        return
    if not callable(target.where):
        raise fail(field, f"where is {type(target.where).__name__}, needs a behaviour name or a function")
    if target.per_input:
        for toks in examples:
            got = _call(target.where, list(toks), field, f"where({_shown(toks)})", fail)
            _check_keys(got, toks, field, fail)
        return
    toks = max(examples, key=len)
    ids = np.array([[alphabet.index(t) for t in toks]])  # [1, T]
    got = _call(target.where, ids, field, f"where(ids of shape {ids.shape})", fail)
    shape = np.shape(got)
    T = ids.shape[1]
    if shape not in ((1, T), (1, T, T)):
        raise fail(field, f"where(ids) returned shape {shape} for ids of shape {ids.shape}; it needs {(1, T)} (a key "
                          f"position per query, −1 for none) or {(1, T, T)} (booleans: the keys each query may attend)")
    arr = np.asarray(got)
    if len(shape) == 2:
        if not (np.issubdtype(arr.dtype, np.number) and np.array_equal(arr, np.round(arr))):
            raise fail(field, f"where(ids) returned {arr.dtype} values, needs integer key positions (−1 for none)")
        bad = np.flatnonzero((arr[0] > np.arange(T)) | (arr[0] < -1))
        if len(bad):
            q = int(bad[0])
            raise fail(field, f"where(ids) puts query {q}'s key at {int(arr[0, q])}, needs −1 or a key 0..{q} "
                              "(a query sees only itself and earlier keys)")


def _check_spec_result(got, toks, width, next_token: bool, alphabet, field, fail) -> None:
    shown = _shown(toks)
    try:
        n = len(got)
    except TypeError:
        raise fail(field, f"spec({shown}) returned {type(got).__name__}, needs a list with one value per token "
                          f"({len(toks)}; None where nothing is expected)") from None
    if isinstance(got, str) and not next_token:
        raise fail(field, f"spec({shown}) returned the string {got!r}, needs a list of numbers or vectors per token")
    if n != len(toks):
        raise fail(field, f"spec({shown}) returned {n} values for {len(toks)} tokens; it needs one per token "
                          "(None where nothing is expected)")
    sizes = set()
    for i, e in enumerate(got):
        if e is None:
            continue
        if next_token:
            if not isinstance(e, str):
                raise fail(field, f"spec({shown})[{i}] is {e!r}, needs the expected next token (a string) or None")
            continue
        flat = [e] if _number(e) else (list(np.ravel(np.asarray(e, dtype=object))) if not isinstance(e, str) else [e])
        if not all(_number(x) for x in flat):
            raise fail(field, f"spec({shown})[{i}] is {e!r}, needs a number, a list of numbers or None")
        sizes.add(len(flat))
    if len(sizes) > 1:
        raise fail(field, f"spec({shown}) gives vectors of {' and '.join(map(str, sorted(sizes)))} numbers; every position "
                          "needs the readout's width")
    if width is not None and sizes and sizes != {width}:
        raise fail(field, f"spec({shown}) gives {sizes.pop()} numbers per position; the readout has {width} directions")


def _number(x) -> bool:
    """A number as the checker reads one (int, float, numpy or sympy numbers, bools), not a string or a list."""
    if isinstance(x, (str, bytes)) or np.ndim(x) != 0:
        return False
    try:
        float(x)
    except (TypeError, ValueError):
        return False
    return True


def _check_keys(got, toks, field, fail) -> None:
    shown = _shown(toks)
    try:
        keys = list(got)
    except TypeError:
        raise fail(field, f"where({shown}) returned {type(got).__name__}, needs a list with a key (or None) per token") from None
    if len(keys) != len(toks):
        raise fail(field, f"where({shown}) returned {len(keys)} entries for {len(toks)} tokens; it needs one per query "
                          "(None where the query has no target)")
    for q, k in enumerate(keys):
        if k is None:
            continue
        many = [k] if isinstance(k, numbers.Integral) else (list(k) if not isinstance(k, str) else [k])
        for key in many:
            if not isinstance(key, numbers.Integral) or not -1 <= key <= q:  # −1: the BOS token, in a model with one
                raise fail(field, f"where({shown})[{q}] is {k!r}, needs a key position 0..{q} (−1: BOS), a set of them, "
                                  "or None")


# --- at check time: whose mistake it is ------------------------------------------------------------------------
AUTHORS = "a mistake in the puzzle's own code, not in the answer"


def undeclared_sharpness(attempt) -> list[str]:
    """The puzzle's sharpness symbols (not answer matrices) that none of the answer's matrices is written with."""
    from circuits.model.weights import symbols_in

    puzzle = attempt.puzzle
    wanted = [name for name in puzzle.sharpness if name not in puzzle.answer]
    used: set[str] = set()
    for name in puzzle.answer:
        used |= symbols_in(getattr(attempt.answer, name, None))
    return [name for name in wanted if name not in used]


def declares_sharpness(attempt) -> None:
    """A worksheet that asks for a sharpness symbol gets one: numbers with the scale baked in hide how much is needed."""
    from circuits.io import paths

    missing = undeclared_sharpness(attempt)
    if missing:
        names = " and ".join(missing)
        example = ", ".join(f"{m!r}: 30" for m in missing)
        raise CircuitError(f"{paths.shown(attempt.path)}: declare the sharpness as a sympy symbol {names} (as the worksheet "
                           f"does), write your matrices with it and bind it in params, e.g. params = {{{example}}}; "
                           "numbers with the scale baked in hide how much sharpness your answer needs")


def build_mistake(e: BaseException, answer, puzzle, shown: str) -> CircuitError | None:
    """A build() that forgot `params=answer.params`, or reads an answer name the puzzle does not declare: one line."""
    import re

    if isinstance(e, CircuitError):
        found = re.search(r"uses symbols? (.+?) at .* with no value", str(e))
        params = {str(k) for k in (getattr(answer, "params", None) or {})}
        if found and params and set(found.group(1).split(", ")) <= params:
            return CircuitError(f"{shown}: build: the answer binds {found.group(1)} in params, but build() does not pass "
                                f"them to the Model: write Model(..., params=answer.params) ({AUTHORS})")
        return _in_answer_names(e, answer, puzzle, shown)
    if isinstance(e, AttributeError) and getattr(e, "obj", None) is answer and e.name:
        declared = ", ".join([*puzzle.answer, *puzzle.optional])
        return CircuitError(f"{shown}: build(){_at(e)} reads answer.{e.name}, which is in neither answer= nor optional= "
                            f"({declared}); add it to one of them ({AUTHORS})")
    return None


def _in_answer_names(e: CircuitError, answer, puzzle, shown: str) -> CircuitError | None:
    """A head's matrix error said in the answer's own names: "W_Q2 (W_Q of head 1.0)", never a name it lacks."""
    message = str(e)
    renamed = message
    for text, value in getattr(e, "culprits", ()):
        name = next((n for n in puzzle.answer if getattr(answer, n, None) is value), None)
        role = text.split(" ", 1)[0]
        if name is not None and name != role and text in renamed:
            renamed = renamed.replace(text, f"{name} ({text})")
    return CircuitError(f"{shown}: {renamed}") if renamed != message else None


def code_mistake(e: BaseException, answer) -> str:
    """Why a Code target's compare raised: the learner's function (a finding), else the puzzle's compare (an error)."""
    theirs = {(f.__code__.co_filename, f.__code__.co_name) for f in vars(answer).values() if hasattr(f, "__code__")}
    import traceback

    frames = traceback.extract_tb(e.__traceback__)
    said = f": {e}" if str(e) else ""
    if any((f.filename, f.name) in theirs for f in frames):
        return f"your code raised {type(e).__name__}{said}"
    raise CircuitError(f"the puzzle's compare() raised {_raised(e)} ({AUTHORS})") from e
