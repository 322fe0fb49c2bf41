"""A puzzle checked when it loads: each author's mistake is one line naming the file, the field, found vs needed."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from circuits import limits
from circuits.errors import CircuitError
from circuits.targets.authored import at_line, what_raised
from circuits.targets.code import YourCodeRaised

MAX_SHOWN = 8  # alphabet tokens listed in a message


def _listing(tokens: Sequence[str]) -> str:
    shown = " ".join(repr(t) for t in list(tokens)[:MAX_SHOWN])
    return shown + (f" … ({len(tokens)} tokens)" if len(tokens) > MAX_SHOWN else "")


def example_tokens(puzzle) -> list[list[str]]:
    """The worked examples as token lists, split as the checker splits them (characters for a character alphabet)."""
    chars = puzzle.inputs is not None and all(len(a) == 1 for a in puzzle.inputs.alphabet)
    return [
        list(e) if isinstance(e, str) and chars else (e.split() if isinstance(e, str) else list(e))
        for e in puzzle.examples
    ]


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

    def fail(field, what):
        return CircuitError(f"{shown}: {field}: {what}")

    answer = list(puzzle.answer)
    if isinstance(puzzle.answer, str) or not all(isinstance(n, str) for n in answer):
        raise fail(
            "answer", f'found {puzzle.answer!r}, needs a list of the names the learner defines, e.g. ["W_Q", "W_K"]'
        )
    twice = sorted({n for n in answer if answer.count(n) > 1})
    if twice:
        raise fail("answer", f"{', '.join(twice)} listed twice; list each name once")
    optional = list(puzzle.optional)
    if isinstance(puzzle.optional, str) or not all(isinstance(n, str) and n.isidentifier() for n in optional):
        raise fail("optional", f'found {puzzle.optional!r}, needs a list of names, e.g. ["params"]')
    both = [n for n in optional if n in answer]
    if both:
        raise fail("optional", f"{', '.join(both)} is also in answer=; a name is either required or optional")
    _check_sharpness(puzzle, names, answer, fail)
    validate_writes(puzzle.writes, shown)
    validate_reads(puzzle.reads, shown)
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
                raise fail(
                    "inputs",
                    f"the class {cls!r} of {f.name} has {stray[0]!r}, which is not in the alphabet "
                    f"({_listing(alphabet)})",
                )
    examples = example_tokens(puzzle)
    for i, (raw, toks) in enumerate(zip(puzzle.examples, examples)):
        if not toks:
            raise fail(f"examples[{i}]", "found an empty example, needs at least one token")
        for j, t in enumerate(toks):
            if t not in known:
                raise fail(
                    f"examples[{i}]",
                    f"{raw!r} has {t!r} at position {j}, which is not in the inputs' alphabet "
                    f"({_listing(alphabet)}); an example may only use the vocabulary",
                )
    tried = examples or puzzle.inputs.sample(2, seed=puzzle.inputs.seed)
    for n, target in enumerate(puzzle.targets):
        limits.doing(f"checking target {limits.quoted(target.label)}")  # named if the author's code never returns
        target.validate(tried, alphabet, lambda what, n=n, target=target: fail(_target_name(n, target), what))
    probe = examples + puzzle.inputs.sample(200, seed=puzzle.inputs.seed)
    for n, target in enumerate(puzzle.targets):
        if target.checks_nothing(probe):
            raise fail(
                _target_name(n, target),
                f"checks nothing: on all {len(probe)} inputs tried (the worked examples and "
                "random ones) it expects nothing at any position (None everywhere); a target must check something",
            )


def validate_writes(writes, shown: str) -> None:
    """`writes=` on a Puzzle: {"head L.H" or "mlp L": [direction or pattern, …]}."""
    if writes is None:
        return
    if not isinstance(writes, Mapping):
        raise CircuitError(
            f"{shown}: writes: found {type(writes).__name__}, needs a dict such as "
            '{"head 1.0": ["seen"], "mlp 0": ["pred:*"]}'
        )
    for key, value in writes.items():
        parts = str(key).split()
        ok = len(parts) == 2 and (parts[0] == "head" and _is_head(parts[1]) or parts[0] == "mlp" and parts[1].isdigit())
        if not ok:
            raise CircuitError(f'{shown}: writes: {key!r} is not "head L.H" or "mlp L"')
        if isinstance(value, str) or not all(isinstance(d, str) for d in value):
            raise CircuitError(f"{shown}: writes[{key!r}]: needs a list of direction names or patterns, got {value!r}")


READ_ROLES = {"head": ("W_Q", "W_K", "W_V"), "mlp": ("W_in",)}


def validate_reads(reads, shown: str) -> None:
    """`reads=` on a Puzzle: {"head L.H W_Q|W_K|W_V", "mlp L W_in" or "W_U": [direction or pattern, …]}."""
    if reads is None:
        return
    example = '{"head 1.0 W_K": ["dup"], "mlp 0 W_in": ["x", "y"], "W_U": ["out:*"]}'
    if not isinstance(reads, Mapping):
        raise CircuitError(f"{shown}: reads: found {type(reads).__name__}, needs a dict such as {example}")
    for key, value in reads.items():
        parts = str(key).split()
        ok = parts == ["W_U"] or (
            len(parts) == 3
            and parts[2] in READ_ROLES.get(parts[0], ())
            and (_is_head(parts[1]) if parts[0] == "head" else parts[1].isdigit())
        )
        if not ok:
            raise CircuitError(f'{shown}: reads: {key!r} is not "head L.H W_Q" (or W_K, W_V), "mlp L W_in" or "W_U"')
        if isinstance(value, str) or not all(isinstance(d, str) for d in value):
            raise CircuitError(f"{shown}: reads[{key!r}]: needs a list of direction names or patterns, got {value!r}")


def _is_head(text: str) -> bool:
    layer, dot, index = text.partition(".")
    return bool(dot) and layer.isdigit() and index.isdigit()


def _check_sharpness(puzzle, names: dict, answer: list[str], fail) -> None:
    if isinstance(puzzle.sharpness, str):
        raise fail(
            "sharpness", f"found the string {puzzle.sharpness!r}, needs a list of names, e.g. [{puzzle.sharpness!r}]"
        )
    symbols = {str(v) for v in names.values() if getattr(v, "is_Symbol", False)}
    params = names.get("params")
    symbols |= {str(k) for k in params} if isinstance(params, dict) else set()
    for name in puzzle.sharpness:
        if name in answer or name in symbols:  # a symbol: the answer must use it and bind it (checked then)
            continue
        raise fail(
            "sharpness",
            f"{name!r} is neither an answer name ({', '.join(answer)}) nor a sympy symbol the file "
            f"defines; name the matrices that set the sharpness, or a symbol bound in params",
        )


def _check_allowed_mutants(allowed, fail) -> None:
    """ALLOWED_MUTANTS, the file's reviewed equivalent mutants for `circuits audit`: pairs of two strings."""
    example = '[("W_V[0, b] 0 → 1", "why this edit cannot change what any target checks")]'
    if isinstance(allowed, (str, bytes)) or not isinstance(allowed, (list, tuple)):
        raise fail(
            "ALLOWED_MUTANTS",
            f"found {_kind_of(allowed)}, needs a list of (mutant or pattern, reason) pairs, e.g. {example}",
        )
    for i, pair in enumerate(allowed):
        if (
            isinstance(pair, str)
            or not isinstance(pair, (list, tuple))
            or len(pair) != 2
            or not all(isinstance(s, str) and s.strip() for s in pair)
        ):
            raise fail(
                "ALLOWED_MUTANTS",
                f"entry {i} is {_kind_of(pair)}, needs a (mutant or pattern, reason) pair of "
                f"non-empty strings, e.g. {example[1:-1]}",
            )


def _kind_of(value) -> str:
    shown = repr(value) if len(repr(value)) <= 40 else repr(value)[:39] + "…"
    return f"the string {shown}" if isinstance(value, str) else f"{shown} ({type(value).__name__})"


def _target_name(n: int, target) -> str:
    return f"targets[{n}] ({type(target).__name__})"


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
    """A worksheet that asks for a sharpness symbol gets one: numbers with the scale baked in hide how much is
    needed."""
    from circuits.io import paths

    missing = undeclared_sharpness(attempt)
    if missing:
        names = " and ".join(missing)
        example = ", ".join(f"{m!r}: 30" for m in missing)
        raise CircuitError(
            f"{paths.shown(attempt.path)}: declare the sharpness as a sympy symbol {names} (as the worksheet "
            f"does), write your matrices with it and bind it in params, e.g. params = {{{example}}}; "
            "numbers with the scale baked in hide how much sharpness your answer needs"
        )


def build_mistake(e: BaseException, answer, puzzle, shown: str) -> CircuitError | None:
    """A build() that forgot `params=answer.params`, or reads an answer name the puzzle does not declare: one line."""
    import re

    if isinstance(e, CircuitError):
        found = re.search(r"uses symbols? (.+?) at .* with no value", str(e))
        params = {str(k) for k in (getattr(answer, "params", None) or {})}
        if found and params and set(found.group(1).split(", ")) <= params:
            return CircuitError(
                f"{shown}: build: the answer binds {found.group(1)} in params, but build() does not pass "
                f"them to the Model: write Model(..., params=answer.params) ({AUTHORS})"
            )
        return _in_answer_names(e, answer, puzzle, shown)
    if isinstance(e, AttributeError) and getattr(e, "obj", None) is answer and e.name:
        declared = ", ".join([*puzzle.answer, *puzzle.optional])
        return CircuitError(
            f"{shown}: build(){at_line(e)} reads answer.{e.name}, which is in neither answer= nor optional= "
            f"({declared}); add it to one of them ({AUTHORS})"
        )
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


def code_mistake(e: BaseException, answer) -> YourCodeRaised:
    """Why a Code target's compare raised: the learner's function (a finding), else the puzzle's compare (an error)."""
    theirs = {(f.__code__.co_filename, f.__code__.co_name) for f in vars(answer).values() if hasattr(f, "__code__")}
    import traceback

    frames = traceback.extract_tb(e.__traceback__)
    if any((f.filename, f.name) in theirs for f in frames):
        return YourCodeRaised(type(e).__name__, str(e))
    raise CircuitError(f"the puzzle's compare() raised {what_raised(e)} ({AUTHORS})") from e
