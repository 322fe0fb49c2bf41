"""The learner's verbs: init, watch, list, check, hint, reset."""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path

from circuits.cli.puzzles import _console, _load, _puzzle_file, _shown
from circuits.errors import CircuitError


def cmd_list(args) -> int:
    from circuits.checking.loader import puzzle_files
    from circuits.checking.pipeline import load
    from circuits.display.report import progress, summary_table
    from circuits.explain import cached_check

    files = puzzle_files(args.solutions)
    if not files:
        raise CircuitError("no puzzle files found: run this inside the project (it looks for puzzles/ and solutions/)")
    results = []
    for f in files:
        try:
            attempt = load(_puzzle_file(_shown(f), False))
            results.append(cached_check(attempt, not args.no_cache, n_random=2000, property_examples=50, margins=False))
        except CircuitError as e:
            from circuits.checking.checker import PuzzleResult

            error = e if _shown(f) in str(e) else e.within(_shown(f))  # most messages name the file already: once
            results.append(PuzzleResult.unloaded(f, error))  # a row of its own, never dropped
            print(f"circuits: {error}", file=sys.stderr)
    c = _console()
    c.print(summary_table(results, title="circuits · " + ("solutions" if args.solutions else "your puzzles")))
    c.print(progress(results))
    return 1 if any(r.attempt is None for r in results) else 0


def cmd_check(args) -> int:
    from circuits.display.report import puzzle_report
    from circuits.explain import cached_check
    from circuits.limits import session

    # one worker for the file's every stage (import, validation, check), each under its own limit
    result = session(
        lambda: cached_check(_load(args.puzzle, args.solution), not args.no_cache, margins=not args.no_margins),
        args.puzzle,
    )
    if result.status == "error" and result.error is not None:  # the answer could not even be built: its one line
        raise result.error
    if getattr(args, "json", False):
        from circuits.display.json import result_json

        print(json.dumps(result_json(result), ensure_ascii=False))
        return 0 if result.status == "solved" else 1
    _console().print(puzzle_report(result))
    return 0 if result.status == "solved" else 1


def cmd_hint(args) -> int:
    from circuits.display.report import hints_report

    attempt = _load(args.puzzle, False)
    hints = list(attempt.puzzle.hints)
    if not hints:
        raise CircuitError(f"{attempt.puzzle.id} declares no hints (hints=[...] in its Puzzle)")
    if not 1 <= args.level <= len(hints):
        raise CircuitError(f"--level {args.level}: {attempt.puzzle.id} has hints 1 to {len(hints)}")
    _console().print(hints_report(hints, args.level, attempt.puzzle.number))
    return 0


def cmd_reset(args) -> int:
    from circuits.checking.loader import find, puzzle_folder, reference_for
    from circuits.workspace.reset import reset, resettable

    try:
        puzzle = find(args.puzzle, False)
    except CircuitError:  # a deleted puzzle file is restored too, from its solution
        twin = find(args.puzzle, True)
        puzzle = puzzle_folder(False) / twin.name  # this project's puzzles/, never beside the reference
    resettable(puzzle)  # only a learner's file in a puzzle folder: never a solution, never a file elsewhere
    solution = reference_for(puzzle)
    if solution is None or not solution.is_file():
        raise CircuitError(
            f"no reference solution for {_shown(puzzle)} (looked for solutions/{puzzle.name}), "
            "so its stub cannot be restored"
        )
    existed = puzzle.exists()
    saved = reset(puzzle, solution)
    if saved is not None:
        print(f"saved your {_shown(puzzle)} to {saved}")
        print(f"restored the stub of {_shown(puzzle)}")
    elif existed:
        print(f"{_shown(puzzle)} is the stub already: nothing to back up, nothing changed")
    else:
        print(f"{_shown(puzzle)} was missing: restored its stub, nothing to back up")
    return 0


def cmd_init(args) -> int:
    from circuits.workspace.init import create

    done = create(Path(args.folder), Path(args.course) if args.course else None)
    where = _shown(done.folder)
    puzzles = sum(p.parent.name == "puzzles" for p in done.written)
    if done.written and not done.kept:
        ini = "" if done.settings_in else " and pytest.ini"
        counted = f"{puzzles} puzzle{'' if puzzles == 1 else 's'}"
        print(f"created {where}/: {counted} in {where}/puzzles{', README.md' if ini else ' and README.md'}{ini}")
    elif done.written:
        names = ", ".join(p.name for p in done.written)
        print(f"added to {where}/: {names}")
        print(f"kept as they are: {len(done.kept)} files already there")
    else:
        print(
            f"{where}/ already has all {len(done.kept)} files (your puzzle files are kept as they are); "
            "nothing was written"
        )
    if done.settings_in:
        print(f"pytest.ini not written: it would override your pytest settings in {done.settings_in}")
        print('to check your puzzles with `pytest`, add "puzzles" to testpaths there')
    _said_course(done)
    here = Path(args.folder).resolve() == Path.cwd().resolve()  # `init .`: nowhere to cd to
    print("next: circuits watch" if here else f"next: cd {shlex.quote(where)} && circuits watch")
    return 0


def _said_course(done) -> None:
    """What init --course adds: where the statements come from, and what keeps it from being recorded."""
    if done.course is None:
        return
    for stem in done.shipped_wins:
        print(f"note: {stem}: a shipped puzzle has this id and wins; renumber the course's")
    if done.unrecorded:
        value = f'"{done.course}"' if done.unrecorded == "pyproject.toml" else done.course  # TOML quotes it
        print(f"{done.unrecorded} kept as it is, so the course is not recorded; add to its pytest settings:")
        print(f"  circuits_course = {value}")
    else:
        print(f"course: {_shown(done.course)} (recorded in pytest.ini: puzzles checked against it)")


def cmd_watch(args) -> int:
    from circuits.display.watch import watch

    return watch(args.puzzle, use_cache=not args.no_cache)
