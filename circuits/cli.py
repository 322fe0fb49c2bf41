"""The `circuits` command: watch, list, check, hint, reset, show and analyze puzzles; scan real models."""

from __future__ import annotations

import argparse
import errno
import json
import os
import shlex
import sys
from pathlib import Path

from circuits.errors import CircuitError

MAX_TOKENS = 1024  # the longest input `show` and `scan` run on a model without n_ctx: patterns grow as tokens²
FORCE_HELP = "with --html: replace FILE even if circuits did not write it (never a .py file)"


class _Parser(argparse.ArgumentParser):
    """Usage mistakes are one line, like every other mistake."""

    def error(self, message: str):
        raise CircuitError(f"{message} (see circuits {self.prog.partition(' ')[2] or ''} --help)".replace("  ", " "))


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="circuits", description="Build transformer circuits by hand and check them.")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    no_cache = "check again even if this exact file was solved before (the cache is in $XDG_CACHE_HOME/circuits)"
    it = sub.add_parser("init", help="make a workspace: the puzzles to solve, a README and pytest's settings")
    it.add_argument(
        "folder",
        nargs="?",
        default="circuits-course",
        help="where (default: circuits-course); files already there are kept as they are",
    )
    it.add_argument(
        "--course",
        metavar="DIR",
        help="a course folder: its puzzles' stubs, checked against its "
        "solutions/ (recorded in pytest.ini) instead of the shipped puzzles",
    )
    wa = sub.add_parser("watch", help="check the first unsolved puzzle each time you save it, then move to the next")
    wa.add_argument("puzzle", nargs="?", help="start here instead of at the first unsolved puzzle")
    wa.add_argument("--no-cache", action="store_true", help=no_cache)
    ls = sub.add_parser("list", help="every puzzle and its status, and your progress")
    ls.add_argument("--solutions", action="store_true", help="the reference solutions instead of your files")
    ls.add_argument("--no-cache", action="store_true", help=no_cache)
    ck = sub.add_parser("check", help="check one puzzle; exit 0 only when every target passes")
    ck.add_argument("puzzle", help="a puzzle's name, number or file path")
    ck.add_argument("--solution", action="store_true", help="check the reference solution")
    ck.add_argument("--no-margins", action="store_true", help="skip the margin search")
    ck.add_argument(
        "--json", action="store_true", help="print JSON: status, targets, coverage (with skipped stages), margins"
    )
    ck.add_argument("--no-cache", action="store_true", help=no_cache)
    hi = sub.add_parser("hint", help="a puzzle's hints, one level at a time: from a nudge to a near-answer")
    hi.add_argument("puzzle")
    hi.add_argument("--level", type=int, default=1, metavar="N", help="show hints 1..N (default 1)")
    rs = sub.add_parser("reset", help="restore a puzzle's stub, after backing up your file (never overwritten)")
    rs.add_argument("puzzle")
    sh = sub.add_parser("show", help="one input through a puzzle's model: attention heatmaps, yours vs expected")
    sh.add_argument("puzzle")
    sh.add_argument("input", help="the input, e.g. abcce (tokens separated by spaces for word vocabularies)")
    sh.add_argument("--solution", action="store_true")
    sh.add_argument(
        "--json",
        action="store_true",
        help="print JSON: tokens, patterns[layer][head][query][key], and targets: each target's "
        "label, kind, expected and output per position",
    )
    sh.add_argument("--html", metavar="FILE", help="also write a self-contained HTML page")
    sh.add_argument("--force", action="store_true", help=FORCE_HELP)
    an = sub.add_parser("analyze", help="QK/OV circuits, composition scores and paths of a puzzle's model")
    an.add_argument("puzzle")
    an.add_argument("--solution", action="store_true")
    an.add_argument("--html", metavar="FILE", help="write a self-contained HTML page")
    an.add_argument("--json", action="store_true")
    an.add_argument("--force", action="store_true", help=FORCE_HELP)
    _scan_arguments(
        sub.add_parser(
            "scan",
            help="rank a real model's heads by behaviour (needs the [hf] extra for --hf)",
            description="Rank every head of a model by the puzzles' attention behaviours, "
            "on random tokens repeated once. Nothing is downloaded.",
        )
    )
    _authoring_parsers(sub)  # new, audit
    _grade_parser(sub)
    return p


def _scan_arguments(p) -> None:
    from circuits.analysis.scan import BEHAVIOURS, DEFAULT_BEHAVIOURS, DEFAULT_THRESHOLD

    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument(
        "--hf",
        metavar="PATH_OR_NAME",
        help="a local GPT-2 / GPT-Neo directory, or a name already in the "
        "local Hugging Face cache (needs the [hf] extra)",
    )
    src.add_argument("--npz", metavar="FILE", help="a model saved by circuits.io.save (.npz or .safetensors)")
    p.add_argument(
        "--behaviour",
        action="append",
        metavar="NAME",
        type=_behaviour_names,
        help=f"one of {', '.join(BEHAVIOURS)}; repeat or comma-separate (default: {', '.join(DEFAULT_BEHAVIOURS)})",
    )
    p.add_argument(
        "--threshold",
        type=float,
        default=DEFAULT_THRESHOLD,
        help=f"score at or above which a head shows the behaviour (default {DEFAULT_THRESHOLD})",
    )
    p.add_argument("--seq-len", type=int, default=20, help="random tokens before the repeat (default 20)")
    p.add_argument("--batch", type=int, default=4, help="sequences to average over (default 4)")
    p.add_argument("--seed", type=int, default=0, help="random seed of the tokens (default 0)")
    p.add_argument("--top", type=int, default=5, help="heads shown per behaviour (default 5)")
    p.add_argument("--json", action="store_true", help="print every score as JSON instead of a table")


def _behaviour_names(text: str) -> list[str]:
    """`--behaviour a,b`: the names, each known; an empty list (`--behaviour ,`) is a usage error, not an empty
    table."""
    from circuits.analysis.scan import BEHAVIOURS

    names = [b.strip() for b in text.split(",") if b.strip()]
    if not names:
        raise argparse.ArgumentTypeError(f"{text!r} names no behaviour; choose from {', '.join(BEHAVIOURS)}")
    for b in names:
        if b not in BEHAVIOURS:
            raise argparse.ArgumentTypeError(f"unknown behaviour {b!r}; choose from {', '.join(BEHAVIOURS)}")
    return names


def main(argv: list[str] | None = None) -> int:
    from circuits.errors import interrupts_as_usual

    argv = sys.argv[1:] if argv is None else argv
    interrupts_as_usual()  # from here Ctrl-C is a KeyboardInterrupt, which _guard turns into one line
    if sys.stdout is None:  # started with stdout closed (`circuits … >&-`): output goes nowhere, the exit code stays
        sys.stdout = open(os.devnull, "w", encoding="utf-8")

    def run():
        args = _parser().parse_args(argv)
        if args.command is None:
            _parser().print_help()
            return 2
        if args.command in SEALED:
            _warm()
        return COMMANDS[args.command](args)

    return _guard(run, "circuits scan" if argv[:1] == ["scan"] else "circuits")  # scan's lines name it


SEALED = ("check", "list", "watch", "show", "analyze", "hint", "reset")  # commands that run a learner's file


def _warm() -> None:
    """Start the warm process that runs learners' files (checking/sealed) now, so it is ready when needed."""
    from circuits.checking.sealed import sandbox

    try:
        sandbox.warm()
    except (OSError, sandbox.SandboxError):  # a load starts a fresh process instead, and says why if it cannot
        pass


def _warn(message, category, filename, lineno, file=None, line=None):
    print(f"circuits: warning: {message}", file=sys.stderr)


def _guard(run, prog: str = "circuits") -> int:
    """Run a command: a mistake, Ctrl-C or a closed output is one line on stderr (or none), never a traceback."""
    import warnings

    from circuits.errors import CircuitWarning

    old = warnings.showwarning
    warnings.showwarning = lambda m, c, *a, **k: (
        _warn(m, c, *a, **k) if issubclass(c, CircuitWarning) else old(m, c, *a, **k)
    )
    try:
        code = run()
        sys.stdout.flush()  # a closed or full output fails here, inside the guard, not at exit
        _held_warnings()
        return code
    except CircuitError as e:
        print(f"{prog}: {e}", file=sys.stderr)
        _held_warnings()
        return 2
    except KeyboardInterrupt:
        from circuits.errors import INTERRUPTED

        print(INTERRUPTED, file=sys.stderr)
        return 130
    except BrokenPipeError:  # `circuits … | head`: the reader stopped; exit 1 as Python's docs and rich do
        _discard_stdout()
        return 1
    except MemoryError:
        print(
            f"circuits: out of memory; try a shorter input (at most {MAX_TOKENS} tokens without n_ctx)", file=sys.stderr
        )
        return 2
    except OSError as e:
        if e.filename is not None:  # a file the command opened: not a bug in circuits, so one line
            print(f"{prog}: {e.filename}: {e.strerror or e}", file=sys.stderr)
            return 2
        if e.errno in (errno.ENOSPC, errno.EIO, errno.EBADF):  # writing the output failed
            _discard_stdout()
            print(f"circuits: cannot write the output: {e.strerror or e}", file=sys.stderr)
            return 2
        raise
    finally:
        warnings.showwarning = old


def _held_warnings() -> None:
    """The warnings a puzzle file's code raised (numpy's divide by zero, …), after the report: one line, paths
    as the learner types them, never before the report with absolute paths."""
    from circuits.checking.limits import take_warnings, warnings_line

    line = warnings_line(take_warnings(), _shown)
    if line:
        print(f"circuits: note: the puzzle file's code warned: {line}", file=sys.stderr)


def _discard_stdout() -> None:
    """Send what is still buffered for stdout nowhere, so the exit does not fail on it again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass


def _puzzle_file(name: str, solution: bool) -> Path:
    """The puzzle file a command names, or one line saying why there is none (see loader.find for the names)."""
    from circuits.checking.loader import find, reference_for

    if name.isdigit() and not name.isascii():  # '²' passes isdigit(), but int() cannot read it
        raise CircuitError(f"no puzzle named {name!r}: write a puzzle's number with the digits 0-9")
    if name.endswith(".py") or os.sep in name or (os.altsep and os.altsep in name):
        try:
            os.stat(name)
        except OSError as e:
            if e.errno == errno.ELOOP:
                raise CircuitError(
                    f"{name}: a symlink loop (it never reaches a file); point it at a puzzle file"
                ) from None
            if e.errno == errno.ENAMETOOLONG:
                raise CircuitError(f"{name[:40]}…: the file name is too long") from None
        else:
            if solution:  # the reference solution of the puzzle that file holds, not the file itself
                ref = reference_for(name)
                if ref is None:
                    raise CircuitError(
                        f"--solution: there is no reference solution for {name} "
                        f"(looked for solutions/{Path(name).name})"
                    )
                return ref
    return find(name, solution)


def _shown(path) -> str:
    """A path as the loader shows it (relative to here), even when it is a symlink loop."""
    from circuits.io import paths

    try:
        return paths.shown(path)
    except (OSError, RuntimeError):  # RuntimeError: pathlib's resolve() on a symlink loop
        return os.path.relpath(path)


def _load(name: str, solution: bool):
    from circuits.checking.pipeline import load

    return load(_puzzle_file(name, solution))


def _console():
    from circuits.display.render import console

    return console()


def cmd_list(args) -> int:
    from circuits.checking.cache import cached_check
    from circuits.checking.loader import puzzle_files
    from circuits.checking.pipeline import load
    from circuits.display.report import progress, summary_table

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
    from circuits.checking.cache import cached_check
    from circuits.checking.limits import session
    from circuits.display.report import puzzle_report

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
    from circuits.checking.reset import reset, resettable

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
    from circuits.checking.workspace import create

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


def _built(args, verb: str):
    """The attempt and the model its answer builds, or one line saying why there is none."""
    if getattr(args, "html", None):
        from circuits.display.html import html_target

        html_target(args.html, args.force)  # a page that cannot be written is refused before any work
    attempt = _load(args.puzzle, args.solution)
    if not attempt.attempted:
        raise CircuitError(f"{attempt.puzzle.id} is not attempted yet: fill in {', '.join(attempt.missing)} first")
    if attempt.puzzle.build is None:
        raise CircuitError(f"{attempt.puzzle.id} is a code puzzle: it has no model to {verb}")
    return attempt, attempt.model()


def shown_targets(attempt, trace, tokens) -> list[dict]:
    """Every behaviour target the puzzle checks, on one input: what it expects and what the model does, per position."""
    return [shown for t in attempt.puzzle.targets if (shown := t.shown(trace, tokens)) is not None]


def cmd_show(args) -> int:
    from circuits.display.shown import show_parts

    attempt, model = _built(args, "show")
    tokens = model.vocab.split(args.input)
    check_length(model, len(tokens), "the input")
    model.vocab.encode(args.input)  # an unknown token is reported against the text as typed
    trace = model.run([tokens])
    labels = trace.tokens(0)
    targets = shown_targets(attempt, trace, tokens)
    patterns = [[trace.pattern(l, h)[0].tolist() for h in range(model.n_heads(l))] for l in range(model.n_layers)]
    if args.html:
        from circuits.display.html import write_html

        write_html(args.html, trace, force=args.force)
    if args.json:
        first = targets[0] if targets else {"readout": "", "output": [], "expected": [], "kind": ""}
        expected = (
            [max(k) if k else None for k in first["expected"]] if first["kind"] == "attention" else first["expected"]
        )
        print(
            json.dumps(
                {
                    "puzzle": attempt.puzzle.id,
                    "tokens": labels,
                    "patterns": patterns,
                    "targets": targets,
                    # the first target alone, as before `targets` (attention: the latest expected key)
                    "readout": first["readout"],
                    "output": first["output"],
                    "expected": expected,
                }
            )
        )
        return 0
    c = _console()
    for part in show_parts(trace, targets):
        c.print(part)
    if args.html:
        c.print(f"wrote {args.html}", markup=False, highlight=False)
    return 0


def cmd_analyze(args) -> int:
    attempt, model = _built(args, "analyze")
    example = list(attempt.puzzle.examples[:1]) or None  # the worked example shows the patterns the puzzle is about
    return analyze_command(model, args.html, args.json, sys.stdout, inputs=example, force=args.force)


def analyze_command(
    model, html: str | None = None, as_json: bool = False, out=None, inputs=None, force: bool = False
) -> int:
    """`circuits analyze`: print the report (or JSON) to `out`, or write HTML to the path `html` and say so; returns 0.

    `force` lets the page replace an existing file that circuits did not write (never a Python file).
    """
    from circuits.analysis.summary import analyze, example_inputs

    out = out if out is not None else sys.stdout
    trace = model.run(inputs if inputs is not None else example_inputs(model))
    summary = analyze(model, trace)
    if as_json:
        json.dump(summary, out, indent=1, allow_nan=False)
        out.write("\n")
    elif not html:  # with --html the page is the report: one line says where it is
        from circuits.display.render import analysis_report, console

        console(file=out).print(analysis_report(summary))
    if html:
        from circuits.display.html import write_html

        path = write_html(html, trace=trace, model=model, summary=summary, force=force)
        if not as_json:
            out.write(f"wrote {path}\n")
    return 0


def check_length(model, n_tokens: int, what: str) -> None:
    """Refuse, before any work, an input too long for a model without n_ctx (the model itself checks its n_ctx)."""
    if model.n_ctx is None and n_tokens > MAX_TOKENS:
        raise CircuitError(
            f"{what} has {n_tokens} tokens; a model without n_ctx takes at most {MAX_TOKENS} "
            "(MAX_TOKENS in circuits/cli.py)"
        )


def _scanned_model(args):
    """The model named on the command line, and the BOS id to put in front of the scanned tokens."""
    if args.npz:
        from circuits.io.export import load

        return load(args.npz), None
    from circuits.io.hf import from_hf, load_hf, load_tokenizer

    hf_model = load_hf(args.hf)
    model = from_hf(hf_model, tokenizer=load_tokenizer(args.hf, required=False, n_vocab=hf_model.config.vocab_size))
    bos = hf_model.config.bos_token_id
    return model, (int(bos) if bos is not None and 0 <= bos < len(model.vocab) else None)


def _check_scan_numbers(args) -> None:
    """Numbers on the command line that are out of range, in one line, before a model is loaded."""
    from circuits.analysis.scan import MAX_BATCH

    if args.seed < 0:
        raise CircuitError(f"--seed {args.seed}: a seed is a whole number ≥ 0")
    if args.top < 1:
        raise CircuitError(f"--top {args.top}: show at least 1 head per behaviour")
    if not 1 <= args.batch <= MAX_BATCH:
        raise CircuitError(
            f"--batch {args.batch}: choose from 1 to {MAX_BATCH} sequences (MAX_BATCH in circuits/analysis/scan.py)"
        )
    if args.seq_len < 1:
        raise CircuitError(f"--seq-len {args.seq_len}: choose at least 1 token before the repeat")


def _check_scan_size(model, args, bos_id: int | None) -> None:
    """Refuse a scan longer than MAX_TOKENS (without n_ctx) or whose patterns would not fit MAX_PATTERN_BYTES."""
    from circuits.analysis.scan import MAX_PATTERN_BYTES

    bos = bos_id is not None
    T = 2 * args.seq_len + bos
    if model.n_ctx is not None and T > model.n_ctx:
        return  # repeated_inputs says the model's own limit
    if model.n_ctx is None and T > MAX_TOKENS:
        raise CircuitError(
            f"--seq-len {args.seq_len} makes {T} tokens; a model without n_ctx takes at most "
            f"{MAX_TOKENS} (MAX_TOKENS in circuits/cli.py): use --seq-len ≤ {(MAX_TOKENS - bos) // 2}"
        )
    heads = sum(model.n_heads(l) for l in range(model.n_layers))
    need = 8 * args.batch * heads * T * T
    if need > MAX_PATTERN_BYTES:
        raise CircuitError(
            f"--batch {args.batch} × {T} tokens on {heads} heads needs {need / 2**20:,.0f} MiB of "
            f"attention patterns; the limit is {MAX_PATTERN_BYTES / 2**20:,.0f} MiB "
            "(MAX_PATTERN_BYTES in circuits/analysis/scan.py): use a smaller --batch or --seq-len"
        )


def cmd_scan(args) -> int:
    """`circuits scan …`: print the ranked heads of a real model."""
    from circuits.analysis.scan import DEFAULT_BEHAVIOURS, scan

    _check_scan_numbers(args)
    behaviours = list(dict.fromkeys(b for names in (args.behaviour or [list(DEFAULT_BEHAVIOURS)]) for b in names))
    model, bos_id = _scanned_model(args)
    _check_scan_size(model, args, bos_id)
    result = scan(
        model,
        behaviours=behaviours,
        threshold=args.threshold,
        seq_len=args.seq_len,
        batch=args.batch,
        seed=args.seed,
        bos_id=bos_id,
    )
    if args.json:
        print(json.dumps(result.to_dict(), indent=1))
    else:
        from circuits.display.tables import scan_table

        _console().print(scan_table(result, top=args.top))
    return 0


def cli_scan(argv: list[str]) -> int:
    """`circuits scan ARGV…` as a function: the exit code, also for --help."""
    try:
        return main(["scan", *argv])
    except SystemExit as e:  # --help
        return int(e.code or 0)


COMMANDS = {
    "init": cmd_init,
    "watch": cmd_watch,
    "list": cmd_list,
    "check": cmd_check,
    "hint": cmd_hint,
    "reset": cmd_reset,
    "show": cmd_show,
    "analyze": cmd_analyze,
    "scan": cmd_scan,
}


# --- the authors' commands: new (a puzzle skeleton and its solution twin) and audit (mutation testing) ----------
def _authoring_parsers(sub) -> None:
    nw = sub.add_parser("new", help="write a puzzle skeleton and its solution twin (never overwrites)")
    nw.add_argument("name", metavar="NN_name", help="two digits, an underscore and a lowercase name, e.g. 91_dup")
    nw.add_argument(
        "folder",
        metavar="DIR",
        nargs="?",
        default=None,
        help="the folder to write puzzles/ and solutions/ in (default: this project)",
    )
    au = sub.add_parser(
        "audit",
        help="mutation-test a reference solution; exit 1 when a mutant survives unreviewed "
        "or time runs out (CIRCUITS_AUDIT_SECONDS)",
    )
    au.add_argument("puzzle", metavar="FILE|N", help="a reference solution's file, or a puzzle's number or name")
    au.add_argument(
        "--json",
        action="store_true",
        help="print JSON: kill rate, survivors (entry, change, closest call), allowed mutants",
    )
    au.add_argument("-v", "--verbose", action="store_true", help="also list the allowed mutants and their reasons")


def cmd_new(args) -> int:
    from circuits.checking.scaffold import new
    from circuits.io import paths

    written = new(args.name, args.folder)
    for p in written:
        print(f"wrote {paths.shown(p)}")
    print("next: write the statement and the solution, then")
    print(f"  pytest {paths.shown(written[0].parent)}               (the puzzle: not attempted)")
    print(f"  circuits check {paths.shown(written[1])}")
    print(f"  circuits audit {paths.shown(written[1])}")
    return 0


def cmd_audit(args) -> int:
    from circuits.checking.audit import reference, run

    path = Path(args.puzzle) if args.puzzle.endswith(".py") else _puzzle_file(args.puzzle, True)
    out = run(reference(path))
    if args.json:
        from circuits.display.json import audit_json

        print(json.dumps(audit_json(out), ensure_ascii=False))
    else:
        from circuits.display.words import audit_lines

        print("\n".join(audit_lines(out, verbose=args.verbose)))
    return 1 if out.survivors or not out.result.complete else 0  # an audit cut short by its time budget is not a pass


COMMANDS.update({"new": cmd_new, "audit": cmd_audit})


# --- the instructor's command: grade a class -------------------------------------------------------------------
def _grade_parser(sub) -> None:
    g = sub.add_parser(
        "grade",
        help="grade submissions against the shipped puzzles, each in a fenced process",
        description="Grade each SUBMISSION (a folder or a .zip of NN_name.py files, in puzzles/ or at "
        "the top) against the shipped puzzles. Only the answer names come from a student's file; its "
        "code runs in a process of its own, under limits, and hands back numbers.",
    )
    g.add_argument("submissions", nargs="+", metavar="SUBMISSION")
    g.add_argument("--puzzles", metavar="SPEC", help="which puzzles, e.g. 0-8 or 1,4,10-12 (default: all)")
    g.add_argument(
        "--course",
        metavar="DIR",
        help="a course folder: its solutions/ state its own puzzles, graded "
        "as the shipped ones are (default --puzzles: the course's)",
    )
    g.add_argument("--out", metavar="FILE", help="the CSV gradebook (default grades.csv)")
    g.add_argument("--json", metavar="FILE", help="also write the full results as JSON")
    g.add_argument("--gradescope", metavar="FILE", help="write Gradescope's results.json (one submission only)")
    g.add_argument("--report-dir", metavar="DIR", help="write each student's report, as text and an HTML page")
    g.add_argument("--workers", type=int, metavar="N", help="submissions graded at once (default: the cores)")
    g.add_argument("--scheduler", metavar="ADDRESS", help="run on this Dask scheduler instead (the [cluster] extra)")
    g.add_argument("--timeout", type=float, default=10.0, metavar="S", help="seconds per puzzle file (default 10)")
    g.add_argument("--memory", type=int, default=2048, metavar="MB", help="memory per submission (default 2048)")
    g.add_argument("--force", action="store_true", help="overwrite output files that exist")


TIMEOUTS = (1.0, 3600.0)  # seconds per puzzle file: less stops files still importing, more is a typo


def _grade_limits(args):
    """--timeout and --memory as the sandbox's limits, or one line saying why not: checked before any grading."""
    import math

    from circuits.checking.sealed.sandbox import Limits

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


COMMANDS["grade"] = cmd_grade

if __name__ == "__main__":
    raise SystemExit(main())
