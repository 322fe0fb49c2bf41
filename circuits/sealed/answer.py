"""A learner's answer, sealed: their file runs in a fenced child; only the answer's data comes back here.

The loader (checking/loader.py) calls `load` for every file that stands for a puzzle with a reference
(a shipped one): the puzzle, its givens and targets come from the reference run here, and from the
learner's file only what the puzzle names as its answer, rebuilt from numbers (`codec`). A code
puzzle's functions stay in the child, and are called there (`Remote`). Nothing the file defines
besides its answer reaches this process: no patched module, no replaced puzzle, no cache entry.
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from circuits import limits
from circuits.checking import givens
from circuits.checking.puzzle import Puzzle, Stub
from circuits.errors import CircuitError
from circuits.sealed import codec, sandbox
from circuits.sealed.child import fingerprint_digest
from circuits.targets.base import Kind


@dataclass
class Sealed:
    """What one sealed run of a learner's file gave: the answer, and what else the verdict needs to know."""

    answer: dict
    missing: list[str]
    edits: list[givens.Edit]
    digest: str  # what the verdict depends on: the answer's data (a code puzzle: the file's bytes)
    reads: list[Path] = field(default_factory=list)  # a code puzzle: files the file read (part of its cache key)
    fence: str = ""
    session: sandbox.Session | None = None  # a code puzzle: the child that still holds its functions


def load(path: Path, shown: str, source: str, puzzle: Puzzle, shipped: dict, names: list[str], data: bytes) -> Sealed:
    """Run the puzzle file at `path` (its text `source`, bytes `data`) in a fenced child and rebuild its answer
    for `puzzle`; `names` are the givens whose values are compared with `shipped`'s. One CircuitError line for
    any mistake in the file (it raised, it ran over its time, it defines no answer, an entry cannot be read)."""
    is_code = any(t.kind is Kind.CODE for t in puzzle.targets)
    item = {
        "stem": path.stem,
        "source": source,
        "shown": shown,
        "filename": str(path),
        "path": str(path),
        "code": is_code,
        "names": [*puzzle.answer, *puzzle.optional],
        "optional": list(puzzle.optional),
        "givens": names,
        "serve": is_code,
    }
    seconds = limits.seconds("import")
    _meanwhile(is_code)
    try:
        session = sandbox.load(
            item, str(path.parent), [str(path.parent)], sandbox.Limits(seconds=seconds), serve=is_code
        )
    except sandbox.SandboxError as e:
        raise CircuitError(f"{shown}: cannot be run apart from the checker ({e})") from None
    message = session.message
    _say_missing_fence(session.fence)
    if "error" in message:
        session.close()
        raise CircuitError(_error(str(message["error"]), shown, seconds))
    _warnings(message.get("warnings"))
    answer, missing = _answer(message.get("answer"), puzzle, shown, session if is_code else None)
    edits = edits_in(message.get("givens"), shipped, names, source)
    if is_code:
        reads = [Path(r) for r in _list(message.get("reads")) if _theirs(r, path)]
        digest = hashlib.sha256(data).hexdigest()
        return Sealed(answer, missing, edits, digest, reads, session.fence, session)
    digest = hashlib.sha256(json.dumps(message.get("answer"), sort_keys=True).encode()).hexdigest()
    return Sealed(answer, missing, edits, "sealed:" + digest, [], session.fence)


def _meanwhile(is_code: bool) -> None:
    """What the check will need anyway, imported while the warm process is still starting (a first check). A
    behaviour check's property test needs hypothesis only when its inputs are not kept yet (checking/drawn.py)
    or one fails; a code puzzle's always draws."""
    if is_code:
        import hypothesis  # noqa: F401 - the property test's
        import hypothesis.extra.numpy  # noqa: F401

    from circuits.checking import evaluation, plan  # noqa: F401


_SAID: list[str] = []


def _say_missing_fence(fence: str) -> None:
    """Once per process, one line when the child ran without the file system fence (the verdict is still sealed)."""
    if fence and "Landlock ABI" not in fence and not _SAID:
        _SAID.append(fence)
        why = fence.split(";")[0].removeprefix("no Landlock ").strip("()")
        print(
            f"circuits: your puzzle files run apart from the checker, but without a file system fence ({why}): "
            "see docs/fence.md",
            file=sys.stderr,
        )


def _list(value) -> list:
    return value if isinstance(value, list) else []


def _error(said: str, shown: str, seconds: float) -> str:
    """The child's one line, in the words the checker uses for the same mistake at home."""
    if said.startswith("running this file took longer"):
        return (
            f"{shown}: importing took longer than {seconds:g} s and was stopped (an endless loop, or waiting "
            f"for input? to allow more time, set {limits.ENV['import']})"
        )
    if said.startswith("the learner's process"):
        return f"{shown}: {said.replace(' while running this file', ' while importing it')}"
    return said


def _answer(raw, puzzle: Puzzle, shown: str, session) -> tuple[dict, list[str]]:
    """The answer names rebuilt from data, and which are still FILL ME IN."""
    raw = raw if isinstance(raw, dict) else {}
    answer, missing = {}, []
    for name in [*puzzle.answer, *puzzle.optional]:
        d = raw.get(name)
        if d is None and name in puzzle.optional:
            continue
        if not isinstance(d, dict) or "absent" in d:
            raise CircuitError(f"{shown} does not define {name} (the answer needs {', '.join(puzzle.answer)})")
        if "refused" in d:
            raise CircuitError(f"{shown}: {name} is {d['refused']}"[:400])
        if "stub" in d:
            answer[name] = Stub(str(d["stub"]))
            missing += [name] if name in puzzle.answer else []
            continue
        if "function" in d:
            answer[name] = _library(name) if d.get("library") else Remote(name, session)
            continue
        if "unreadable" in d and "type" not in d:  # a code puzzle's name that is not a function
            type_name = str(d["unreadable"]).split(",")[0].split()[-1]
            answer[name] = codec.placeholder(type_name)
            continue
        if "unreadable" in d and "entry" in str(d["unreadable"]):  # a matrix, but one entry cannot be carried
            raise CircuitError(f"{shown}: {name} cannot be read: {d['unreadable']}"[:400])
        try:
            answer[name] = codec.to_answer_value(d)
        except codec.Refused as e:
            raise CircuitError(f"{shown}: {name} is {e}") from None
        except (codec.Unreadable, KeyError, TypeError, ValueError, OverflowError, RecursionError) as e:
            raise CircuitError(f"{shown}: {name} cannot be read ({e})") from None
    answer.setdefault("params", {})
    return answer, missing


def _library(name: str):
    from circuits.checking.reference import LIBRARY

    return next((f for f in LIBRARY if f.__name__ == name), next(iter(LIBRARY)))


def edits_in(sent, shipped: dict, names: list[str], source: str) -> list[givens.Edit]:
    """The givens whose value in the learner's file differs from the shipped one (compared by digest; grading
    names a submission's edited givens with it too)."""
    sent = sent if isinstance(sent, dict) else {}
    found = []
    for name in names:
        if name not in shipped:
            continue
        theirs = sent.get(name)
        if theirs is None:
            if name not in givens.speed_only(shipped):  # a batched spec the file predates: it checks as before
                found.append(givens.Edit(name, None, removed=True))
        elif theirs not in shipped_digests(shipped, name):
            found.append(givens.Edit(name, givens.last_change(source, name)))
    return found


_DIGESTS: dict[tuple[int, str], list[str]] = {}


def shipped_digests(shipped: dict, name: str) -> list[str]:
    """The digests a learner's given may have unflagged (givens.accepted): the shipped value's, and for the puzzle,
    also its digest without batched specs."""
    key = (id(shipped), name)
    if key not in _DIGESTS:
        _DIGESTS[key] = [fingerprint_digest(v) for v in givens.accepted(shipped, name)]
    return _DIGESTS[key]


def _warnings(sent) -> None:
    """The warnings the file's own lines raised there: held back, to be said after the report, as at home."""
    for w in _list(sent)[:100]:
        if isinstance(w, list) and len(w) == 4:
            limits.held_warning(str(w[0]), int(w[1]) if str(w[1]).isdigit() else 0, str(w[2])[:60], str(w[3])[:300])


def _theirs(read, path: Path) -> bool:
    """A file the learner's file read that is theirs: in its folder, not the file itself, still there."""
    try:
        full = Path(os.path.abspath(str(read)))
    except (TypeError, ValueError):
        return False
    return full != path and full.parent == path.parent and full.is_file()


class Remote:
    """A code puzzle's function as seen from here: each call is made in the learner's process, on data.
    (No __code__, so a report names the learner's line from the reply, not this file.)"""

    def __init__(self, name: str, session):
        self.__name__ = self.name = name
        self.session = session

    def __call__(self, *args):
        try:
            reply = self.session.call(self.name, codec.value(list(args)))
        except TimeoutError:
            raise CircuitError(
                f"{self.name} took longer than {self.session.seconds:g} s over its calls and was "
                f"stopped (an endless loop? to allow more time, set {limits.ENV['check']})"
            ) from None
        except sandbox.SandboxError as e:
            raise CircuitError(f"{self.name}: {e}") from None
        except codec.Unreadable as e:
            raise CircuitError(f"{self.name} was called on something that cannot be sent ({e})") from None
        return answered(self.name, reply)


def answered(name: str, reply: dict):
    """A reply from the learner's process as the call's outcome: its value, or what it raised, re-raised here."""
    from circuits.checking.reference import LibraryCalled

    if "library" in reply:
        ran = _list(reply["library"]) + ["circuits", "?"]
        raise LibraryCalled(str(ran[0]), str(ran[1]))
    if "raised" in reply:
        r = reply["raised"] if isinstance(reply["raised"], dict) else {}
        kind = str(r.get("type", "Exception"))
        kind = kind if kind.isidentifier() else "Exception"
        error = type(kind, (Exception,), {})(str(r.get("message", "")))
        error.circuits_line = r.get("line") if isinstance(r.get("line"), int) else None
        error.circuits_code = str(r["code"]) if r.get("code") else None
        raise error
    if "unreadable" in reply:
        return codec.placeholder(str(reply["unreadable"]).rpartition(" ")[2])
    return codec.to_value(reply.get("value"))
