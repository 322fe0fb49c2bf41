"""The authors' verbs, new (a puzzle skeleton and its solution twin) and audit (mutation testing), and the
instructor's, grade (a class's submissions, each in a fenced process)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from circuits.cli.puzzles import _puzzle_file
from circuits.errors import CircuitError


def cmd_new(args) -> int:
    from circuits.io import paths
    from circuits.workspace.scaffold import new

    written = new(args.name, args.folder)
    for p in written:
        print(f"wrote {paths.shown(p)}")
    print("next: write the statement and the solution, then")
    print(f"  pytest {paths.shown(written[0].parent)}               (the puzzle: not attempted)")
    print(f"  circuits check {paths.shown(written[1])}")
    print(f"  circuits audit {paths.shown(written[1])}")
    return 0


def cmd_audit(args) -> int:
    from circuits.audit.author import reference, run
    from circuits.checking import cores

    if args.workers is not None and args.workers < 1:
        raise CircuitError(f"--workers {args.workers}: give at least 1")
    path = Path(args.puzzle) if args.puzzle.endswith(".py") else _puzzle_file(args.puzzle, True)
    out = run(reference(path), workers=args.workers or cores.count())
    if args.json:
        from circuits.display.json import audit_json

        print(json.dumps(audit_json(out), ensure_ascii=False))
    else:
        from circuits.display.words import audit_lines

        print("\n".join(audit_lines(out, verbose=args.verbose)))
    return 1 if out.survivors or not out.result.complete else 0  # an audit cut short by its time budget is not a pass


TIMEOUTS = (1.0, 3600.0)  # seconds per puzzle file: less stops files still importing, more is a typo


def _grade_limits(args):
    """--timeout and --memory as the sandbox's limits, or one line saying why not: checked before any grading."""
    import math

    from circuits.sealed.sandbox import Limits

    if not (math.isfinite(args.timeout) and TIMEOUTS[0] <= args.timeout <= TIMEOUTS[1]):
        raise CircuitError(
            f"--timeout {args.timeout:g}: give {TIMEOUTS[0]:g} to {TIMEOUTS[1]:g} seconds per puzzle file"
        )
    most = (1 << 20) if args.scheduler else max(_memory_mb(), 2048)  # a cluster's workers may have more
    if not 256 <= args.memory <= most:
        raise CircuitError(
            f"--memory {args.memory}: give 256 to {most} MB" + ("" if args.scheduler else " (this machine's memory)")
        )
    return Limits(seconds=args.timeout, memory_mb=args.memory)


def _memory_mb() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") >> 20
    except (ValueError, OSError, AttributeError):
        return 1 << 20


def cmd_grade(args) -> int:
    if os.name != "posix":
        raise CircuitError(
            "circuits grade runs submissions in POSIX processes: use Linux (or macOS, without the Landlock fence)"
        )
    from circuits import __version__
    from circuits.grading import grade, journal, outputs, parallel, run

    # every option and every output checked before the first student is graded
    if args.workers is not None and args.workers < 1:
        raise CircuitError(f"--workers {args.workers}: give at least 1")
    limits = _grade_limits(args)
    if args.gradescope and len(args.submissions) != 1:
        raise CircuitError(f"--gradescope writes one submission's results.json; {len(args.submissions)} were given")
    course = grade.use_course(args.course) if args.course else None
    stems = grade.select(args.puzzles) if args.puzzles or course is None else course
    subs = parallel.submissions(args.submissions)
    csv_path = args.out or ("grades.csv" if not args.gradescope else None)
    first = next(p for p in (csv_path, args.json, args.gradescope) if p)
    settings = {
        "puzzles": stems,
        "course": str(Path(args.course).resolve()) if args.course else None,
        "timeout": args.timeout,
        "memory": args.memory,
        "examples": grade.PROPERTY_EXAMPLES,
        "circuits": __version__,
    }
    record = journal.Journal(journal.path_for(first), settings, args.force)
    outs = outputs.Outputs.checked(
        csv_path,
        args.json,
        args.gradescope,
        args.report_dir,
        [s.student for s in subs],
        args.force,
        record.owned,
        record.path,
    )
    progress = lambda line: print(outputs.printable(line)[:80], file=sys.stderr)  # noqa: E731 - a student's name
    try:
        grades = run.grade_class(subs, stems, outs, record, limits, args.workers, args.scheduler, progress)
    except run.Stopped as stop:
        progress(f"circuits: kept {stop.kept} of {stop.total} students in {first}; the same command grades the rest")
        raise
    unfenced = sorted({g.fence for g in grades if g.fence and not g.fence.startswith("Landlock")})
    if unfenced:  # said once, not hidden in the JSON: the instructor decides whether that is acceptable here
        print(
            f"circuits: warning: submissions ran without a file system fence ({unfenced[0]}): they could read "
            "what this user can; see docs/grading.md",
            file=sys.stderr,
        )
    for path in outs.paths():
        print(f"wrote {outputs.printable(str(path))}")
    return 0
