"""Grade one submission: its answers' numbers from its own process, checked against the shipped puzzles here.

load the shipped reference (trusted) → run the submission's files in a fenced process → decode the
answers it hands back → put them in the reference's answer namespace → checker.check (margins off)
→ one row per puzzle: status, score, the first failing target in one line, the learner's report.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
import time
import types
from dataclasses import dataclass, field, replace
from pathlib import Path

from circuits import kept
from circuits.checking import checker, curriculum, pipeline
from circuits.checking.loader import Attempt, compared_givens
from circuits.display.words import said
from circuits.errors import CircuitError
from circuits.explain import explained
from circuits.grading.submission import Submission, read
from circuits.limits import shown_input
from circuits.sealed import answer as sealed_answer
from circuits.sealed import calls as code
from circuits.sealed import codec, sandbox
from circuits.targets.base import Kind

PROPERTY_EXAMPLES = 100  # the property test's size for code targets, as `circuits check` uses
STATUSES = ("solved", "failing", "error", "not attempted", "not submitted")


@dataclass
class PuzzleGrade:
    """One puzzle of one submission: plain data, so it crosses processes and machines as is."""

    student: str
    puzzle: str
    status: str  # one of STATUSES
    score: float
    max_score: float
    detail: str  # the first failing target, or why there is no verdict, in one line
    report: str = ""  # what `circuits check` would print (80 columns, no colour)
    html: str = ""  # the failure's attention heatmaps, an HTML fragment ("" when none)
    result: dict | None = None  # certified.result_json of the check, when it ran
    edited: list[str] = field(default_factory=list)  # the givens the file changed, each in one line (ignored)


@dataclass
class SubmissionGrade:
    student: str
    source: str
    puzzles: list[PuzzleGrade]
    notes: list[str] = field(default_factory=list)  # what the submission's process did besides answering
    fence: str = ""  # the file system fence its process ran under
    seconds: float = 0.0
    memoised: int = 0  # its puzzles whose verdict this process had already reached on the same answer (_MEMO)

    @property
    def score(self) -> float:
        return sum(p.score for p in self.puzzles)

    @property
    def max_score(self) -> float:
        return sum(p.max_score for p in self.puzzles)


# --- the shipped puzzles --------------------------------------------------------------------------------------
_REFERENCES: dict[str, Attempt] = {}
_CODE_PLANS: dict[tuple[str, int], list] = {}


def shipped() -> list[str]:
    """Every puzzle's id that can be graded, in order: the shipped ones, and a course's (`--course`, which the
    grader and its workers read from $CIRCUITS_COURSE); a course puzzle with a shipped puzzle's id is the shipped
    one."""
    where = curriculum.folder()
    if where is None:
        raise CircuitError("no shipped puzzles found (the curriculum is not installed): cannot grade")
    ids = {p.stem for p in where.glob("[0-9][0-9]_*.py")}
    numbers = {i[:2] for i in ids}
    ids |= {p.stem for p in course_references().values() if p.stem[:2] not in numbers}
    return sorted(ids)


def course_references() -> dict[str, Path]:
    """A course's reference files by id (its solutions/), from $CIRCUITS_COURSE; {} when grading shipped ones only."""
    from circuits.checking.loader import COURSE_ENV

    folder = os.environ.get(COURSE_ENV)
    if not folder:
        return {}
    return {p.stem: p for p in sorted((Path(folder) / "solutions").glob("[0-9][0-9]_*.py")) if p.is_file()}


def use_course(folder: str | Path) -> list[str]:
    """Grade a course's puzzles too: `folder` holds solutions/ (the instructor's references, the statements the
    students' answers are checked against). Its ids, or one line saying why it is no course."""
    from circuits.checking.loader import COURSE_ENV
    from circuits.checking.loader import course_references as references_in

    where = Path(folder)
    refs = references_in(where)
    os.environ[COURSE_ENV] = str(where.resolve())  # the pool's workers inherit it
    _REFERENCES.clear()
    _CODE_PLANS.clear()
    clear_memo()
    return [p.stem for p in refs]


def select(spec: str | None) -> list[str]:
    """The puzzle ids a `--puzzles` spec names: "0-8", "1,4,10-12", ids or names; None: all."""
    ids = shipped()
    if spec is None:
        return ids
    by_number = {int(i[:2]): i for i in ids}
    chosen: list[str] = []
    for part in (p.strip() for p in spec.split(",") if p.strip()):
        m = re.fullmatch(r"(\d+)\s*-\s*(\d+)", part)
        if m:
            lo, hi = int(m[1]), int(m[2])
            if lo > hi:
                raise CircuitError(f"--puzzles {spec}: the range {part} runs backwards")
            picked = [by_number[n] for n in range(lo, hi + 1) if n in by_number]
            if lo not in by_number or hi not in by_number:
                picked = []  # a typo such as 0-80 for 0-8 is not silently the whole course
        elif part.isdigit() and int(part) in by_number:
            picked = [by_number[int(part)]]
        else:
            picked = [i for i in ids if part in (i, i.partition("_")[2])]
        if not picked:
            raise CircuitError(f"--puzzles {spec}: no puzzle {part!r} (they are {ids[0][:2]}–{ids[-1][:2]})")
        chosen += [p for p in picked if p not in chosen]
    if not chosen:
        raise CircuitError(f"--puzzles {spec!r} names no puzzle: give e.g. 0-8 or 1,4,10-12")
    return sorted(chosen)


def reference(stem: str) -> Attempt:
    """The shipped reference of a puzzle, loaded once per process (this process's own trusted code)."""
    if stem not in _REFERENCES:
        path = curriculum.reference_file(stem) or course_references().get(stem)
        if path is None:
            raise CircuitError(f"no reference for {stem} (neither shipped nor in the course)")
        _REFERENCES[stem] = pipeline.load(path)
    return _REFERENCES[stem]


def _code_plan(stem: str, n_examples: int) -> list:
    """Per Code target: the target, the checker's inputs, and the calls its compare makes on them."""
    key = (stem, n_examples)
    if key not in _CODE_PLANS:
        ref = reference(stem)
        plan = []
        for t in ref.puzzle.targets:
            if t.kind is Kind.CODE:
                inputs = checker.code_inputs(t, n_examples)
                plan.append((t, inputs, code.record(t, inputs, ref.puzzle.answer)))
        _CODE_PLANS[key] = plan
    return _CODE_PLANS[key]


# --- one submission -----------------------------------------------------------------------------------------
def grade(
    source: str | Path | Submission,
    stems: list[str],
    limits: sandbox.Limits = sandbox.Limits(),
    n_examples: int = PROPERTY_EXAMPLES,
    student: str | None = None,
) -> SubmissionGrade:
    """Grade one submission (a folder, a .zip, or one already read) on the puzzles `stems`; never raises for what
    the submission holds."""
    start = time.perf_counter()
    try:
        sub = source if isinstance(source, Submission) else read(source)
    except CircuitError as e:
        sub = Submission(student or Path(source).name, str(source), notes=[str(e)])
    source = sub.source
    if student:
        sub.student = student
    items = []
    for stem in stems:
        name = sub.puzzle_file(stem)
        if name is None:
            continue
        ref = reference(stem)
        is_code = any(t.kind is Kind.CODE for t in ref.puzzle.targets)
        plan = _code_plan(stem, n_examples) if is_code else []
        items.append(
            {
                "stem": stem,
                "file": name,
                "shown": f"{sub.where}{name}",
                "code": is_code,
                "names": [*ref.puzzle.answer, *ref.puzzle.optional],
                "optional": list(ref.puzzle.optional),
                "calls": [batch for _, _, batches in plan for batch in batches],
                "givens": _givens(stem),
            }
        )
    run = sandbox.Run({})
    if items:
        folder = tempfile.mkdtemp(prefix="circuits-grade-")
        try:
            for name, data in sub.files.items():
                Path(folder, name).write_bytes(data)
            run = sandbox.run(folder, items, limits)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    shown = {i["stem"]: i["shown"] for i in items}
    texts = {i["stem"]: sub.files[i["file"]].decode("utf-8", "replace") for i in items}
    served = _MEMO_SERVED[0]
    grades = [
        _grade_puzzle(sub.student, stem, shown.get(stem), run.results.get(stem), n_examples, texts.get(stem, ""))
        for stem in stems
    ]
    memoised = _MEMO_SERVED[0] - served
    notes = list(sub.notes)
    notes += [f"{g.puzzle}: {line}" for g in grades for line in g.edited]
    if run.printed.strip():
        first = run.printed.strip().splitlines()[0][:60]
        notes.append(f"printed output while running (ignored: grades come from the grader's own check): {first!r}")
    if run.starts > 1:
        notes.append(f"its process was restarted {run.starts - 1} time(s) after a file ran over a limit")
    seconds = time.perf_counter() - start
    return SubmissionGrade(sub.student, str(source), grades, notes, run.fence, seconds, memoised)


def _givens(stem: str) -> list[str]:
    """The givens a submission's file is compared on (the reference's, above its answer line)."""
    ref = reference(stem)
    return compared_givens(ref.path.read_text(encoding="utf-8"), ref.puzzle)


def _grade_puzzle(
    student: str, stem: str, shown: str | None, message: dict | None, n_examples: int, text: str = ""
) -> PuzzleGrade:
    ref = reference(stem)
    if shown is None:
        detail = f"no file {stem}.py (or {stem[:2]}_*.py) in the submission"
        report = f"{stem} · {ref.puzzle.title} · not submitted\n{detail}\n"
        return PuzzleGrade(student, stem, "not submitted", 0.0, 1.0, detail, report)
    attempt = Attempt(Path(shown), ref.puzzle, types.SimpleNamespace(params={}), reference=ref.path)  # the
    # grader's reference states it: nothing found beside the submission on disk (its solutions/, its pytest.ini)
    if message is not None and "givens" in message:
        attempt.edits = sealed_answer.edits_in(message["givens"], ref.names, _givens(stem), text)
    try:
        result = _check(attempt, ref, message or {"error": "no answer came back"}, stem, n_examples)
    except CircuitError as e:
        result = _error(attempt, e)
    except (ArithmeticError, ValueError, TypeError, MemoryError, RecursionError) as e:  # numbers no check can
        said = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__  # take (an inf, a huge entry): this row only
        result = _error(attempt, CircuitError(f"{shown}: its answer cannot be checked ({said})"[:300]))
    return _row(student, stem, result)


def _check(attempt: Attempt, ref: Attempt, message: dict, stem: str, n_examples: int) -> checker.PuzzleResult:
    start = time.perf_counter()
    if "error" in message:
        return _error(attempt, CircuitError(str(message["error"])))
    answer, missing = _decoded(attempt, message.get("answer") or {})
    attempt.missing = missing
    is_code = any(t.kind is Kind.CODE for t in ref.puzzle.targets) and not missing
    if not is_code:
        attempt.answer = answer
    key = _memo_key(ref, stem, n_examples, message, missing, attempt.edits)
    if key is not None and (hit := _MEMO.get(key)) is not None:
        _MEMO_SERVED[0] += 1
        # the same verdict, of this submission's file, and the time this one took (not the first copy's check)
        return replace(hit, attempt=attempt, seconds=time.perf_counter() - start)
    if is_code:
        result = _check_code(attempt, message, stem, n_examples)
    else:
        result = explained(checker.check(attempt, margins=False))
    _remember(key, result)
    return result


# --- one verdict per answer -----------------------------------------------------------------------------------
# A check is a function of what it checks: the puzzle (its reference), the answer's data as it came back, the
# names left to fill in, the givens edited and the settings. A class hands in the same answer many times (the
# course's answer, copied; one common slip), so a grading process keeps its latest verdicts by that data, hashed
# here (nothing the submission's process says about itself is trusted), and gives each later copy the verdict of
# its own file. Only verdicts that hold no file's name are kept: solved, and failing with no target in error and no
# stray write or read (an error or a leak names the file; a time limit depends on how busy the machine is).
_MEMO = kept.latest("grading verdicts", 256, refresh=True)  # per grading process, the least recently used dropped
_MEMO_SERVED = [0]  # verdicts this process served from _MEMO


def clear_memo() -> None:
    """Forget every verdict kept (the next copy of an answer is checked again)."""
    _MEMO.clear()


def memo_served() -> int:
    """How many verdicts this process has served from the memo instead of checking again."""
    return _MEMO_SERVED[0]


def _memo_key(ref: Attempt, stem: str, n_examples: int, message: dict, missing: list, edits: list) -> tuple | None:
    """What a check's verdict depends on, as a key: None when the answer's data has no canonical text."""
    data = {"answer": message.get("answer"), "calls": message.get("calls")}
    try:
        text = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    except (TypeError, ValueError, RecursionError):
        return None
    digest = hashlib.sha256(text.encode()).hexdigest()
    changed = tuple((e.name, e.line, e.removed) for e in edits)
    return (str(ref.path), stem, n_examples, digest, tuple(sorted(missing)), changed)


def _remember(key: tuple | None, result: checker.PuzzleResult) -> None:
    """Keep `result` under `key` when it names no file: solved, or failing with no target in error or leak."""
    if key is None or result.status not in ("solved", "failing") or result.leak is not None or result.error:
        return
    if any(t.status == "error" or t.error is not None for t in result.targets):
        return
    _MEMO.keep(key, replace(result, attempt=None))  # the first file's attempt is not kept: each copy gets its own


def _decoded(attempt: Attempt, raw: dict) -> tuple[types.SimpleNamespace, list[str]]:
    puzzle, values, missing = attempt.puzzle, {"params": {}}, []
    for name in [*puzzle.answer, *puzzle.optional]:
        d = raw.get(name)
        if d is None:
            if name in puzzle.answer:
                raise CircuitError(
                    f"{attempt.path} does not define {name} (the answer needs {', '.join(puzzle.answer)})"
                )
            continue
        if not isinstance(d, dict):
            raise CircuitError(f"{attempt.path}: {name} came back unreadable")
        if "absent" in d:
            raise CircuitError(f"{attempt.path} does not define {name} (the answer needs {', '.join(puzzle.answer)})")
        if "unreadable" in d:
            if any(t.kind is Kind.CODE for t in puzzle.targets):
                raise CircuitError(f"{attempt.path}: {name} is {d['unreadable']}")
            raise CircuitError(
                f"{attempt.path}: {name} is {d['unreadable']}; grading takes numbers "
                "(lists, numpy arrays, named matrices, sympy polynomials in params' symbols)"
            )
        if "stub" in d:
            missing.append(name)
        if "function" in d:
            continue
        try:
            values[name] = codec.to_answer_value(d)
        except (codec.Unreadable, KeyError, TypeError, ValueError) as e:
            raise CircuitError(f"{attempt.path}: {name} came back unreadable ({e})") from None
    return types.SimpleNamespace(**values), missing


def _check_code(attempt: Attempt, message: dict, stem: str, n_examples: int) -> checker.PuzzleResult:
    start = time.perf_counter()
    plan = _code_plan(stem, n_examples)
    outcomes = message.get("calls") or []
    names = attempt.puzzle.answer
    targets, at = [], 0
    for target, inputs, batches in plan:
        answer = code.replayed(names, message.get("answer") or {}, batches, outcomes[at : at + len(batches)])
        at += len(batches)
        try:
            targets.append(checker.check_code_on(target, answer, inputs))
        except CircuitError as e:
            targets.append(checker.TargetResult(target.label, Kind.CODE, "error", error=e))
    status = (
        "solved"
        if all(t.status == "passed" for t in targets)
        else ("error" if any(t.status == "error" for t in targets) else "failing")
    )
    return checker.PuzzleResult(attempt, status, targets, seconds=time.perf_counter() - start)


def _error(attempt: Attempt, error: CircuitError) -> checker.PuzzleResult:
    targets = [checker.TargetResult(t.label, t.kind, "error", error=error) for t in attempt.puzzle.targets]
    return checker.PuzzleResult(attempt, "error", targets, error=error)


def first_failure(result: checker.PuzzleResult) -> str:
    """The gradebook's one line: what to fill in, the first failing target and its finding, or the error."""
    from circuits.explain import summary, words

    if result.status == "solved":
        return ""
    if result.status == "not attempted":
        return (
            f"fill in {', '.join(result.attempt.missing)}"
            if result.attempt and result.attempt.missing
            else said(result)
        )
    bad = next((t for t in result.targets if t.status in ("failed", "error")), None)
    if bad is None:
        return said(result)
    if bad.status == "error":
        return said(bad)
    f = bad.failure
    finding = (summary(f.explanation) if f.explanation is not None else words(f.finding)) if f is not None else ""
    where = f" on {shown_input(f.tokens)}" if f is not None and f.tokens else ""
    return f"fails: {bad.label}{where}" + (f": {finding}" if finding else "")


def one_line(text: str, n: int = 300) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= n else line[: n - 1] + "…"


def _row(student: str, stem: str, result: checker.PuzzleResult) -> PuzzleGrade:
    from circuits.display.html import failure_fragment
    from circuits.display.json import result_json
    from circuits.display.report import puzzle_report
    from circuits.display.terminal import to_text

    # grading never measures margins (no one asked for --no-margins): the report does not speak of them
    kept = [s for s in result.coverage.skipped if s != "margins"]
    shown = replace(result, coverage=replace(result.coverage, skipped=kept))
    report = to_text(puzzle_report(shown), width=80)
    html = "".join(
        failure_fragment(t.label, t.failure.trace)
        for t in result.targets
        if t.failure is not None and t.failure.trace is not None
    )
    solved = result.status == "solved"
    edits = result.attempt.edits if result.attempt is not None else []
    detail = one_line(first_failure(result))
    if edits:  # the gradebook shows who changed a given, though it changed nothing in the grade
        changed = f"changed given{'s' if len(edits) > 1 else ''} {', '.join(f'`{e.name}`' for e in edits)} (ignored)"
        detail = f"{detail} · {changed}" if detail else changed
    return PuzzleGrade(
        student,
        stem,
        result.status,
        1.0 if solved else 0.0,
        1.0,
        detail,
        report,
        html,
        result_json(result),
        [_edited(e) for e in edits],
    )


def _edited(e) -> str:
    """`given `W_E` changed (line 12): ignored, graded as the reference states it`: one edited given."""
    at = f" (line {e.line})" if e.line else ""
    return f"given `{e.name}` {'deleted' if e.removed else 'changed'}{at}: ignored, graded as the reference states it"
