"""The `circuits` command: list, check, show and analyze puzzles; scan real models."""

from __future__ import annotations

import argparse
import errno
import json
import os
import sys
from pathlib import Path

import numpy as np

from .errors import CircuitError

MAX_TOKENS = 1024  # the longest input `show` and `scan` run on a model without n_ctx: patterns grow as tokens²
FORCE_HELP = "with --html: replace FILE even if circuits did not write it (never a .py file)"


class _Parser(argparse.ArgumentParser):
    """Usage mistakes are one line, like every other mistake."""

    def error(self, message: str):
        raise CircuitError(f"{message} (see circuits {self.prog.partition(' ')[2] or ''} --help)".replace("  ", " "))


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="circuits", description="Build transformer circuits by hand and check them.")
    sub = p.add_subparsers(dest="command", metavar="COMMAND")
    ls = sub.add_parser("list", help="every puzzle and its status")
    ls.add_argument("--solutions", action="store_true", help="the reference solutions instead of your files")
    ck = sub.add_parser("check", help="check one puzzle; exit 0 only when every target passes")
    ck.add_argument("puzzle", help="a puzzle's name, number or file path")
    ck.add_argument("--solution", action="store_true", help="check the reference solution")
    ck.add_argument("--no-margins", action="store_true", help="skip the margin search")
    ck.add_argument("--json", action="store_true", help="print JSON: status, targets, coverage (with skipped stages), margins")
    sh = sub.add_parser("show", help="one input through a puzzle's model: attention heatmaps, yours vs expected")
    sh.add_argument("puzzle")
    sh.add_argument("input", help="the input, e.g. abcce (tokens separated by spaces for word vocabularies)")
    sh.add_argument("--solution", action="store_true")
    sh.add_argument("--json", action="store_true", help="print JSON: tokens, patterns[layer][head][query][key], and targets: each target's "
                    "label, kind, expected and output per position")
    sh.add_argument("--html", metavar="FILE", help="also write a self-contained HTML page")
    sh.add_argument("--force", action="store_true", help=FORCE_HELP)
    an = sub.add_parser("analyze", help="QK/OV circuits, composition scores and paths of a puzzle's model")
    an.add_argument("puzzle")
    an.add_argument("--solution", action="store_true")
    an.add_argument("--html", metavar="FILE", help="write a self-contained HTML page")
    an.add_argument("--json", action="store_true")
    an.add_argument("--force", action="store_true", help=FORCE_HELP)
    sub.add_parser("scan", help="rank a real model's heads by behaviour (needs the [hf] extra for --hf)", add_help=False)
    from .authoring_cli import add_parsers

    add_parsers(sub)  # new, audit
    return p


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if sys.stdout is None:  # started with stdout closed (`circuits … >&-`): output goes nowhere, the exit code stays
        sys.stdout = open(os.devnull, "w", encoding="utf-8")
    if argv[:1] == ["scan"]:
        from .scan import cli_scan

        return _guard(lambda: cli_scan(argv[1:]))

    def run():
        args = _parser().parse_args(argv)
        if args.command is None:
            _parser().print_help()
            return 2
        return COMMANDS[args.command](args)

    return _guard(run)


def _warn(message, category, filename, lineno, file=None, line=None):
    print(f"circuits: warning: {message}", file=sys.stderr)


def _guard(run) -> int:
    """Run a command: a mistake, Ctrl-C or a closed output is one line on stderr (or none), never a traceback."""
    import warnings

    from .errors import CircuitWarning

    old = warnings.showwarning
    warnings.showwarning = lambda m, c, *a, **k: _warn(m, c, *a, **k) if issubclass(c, CircuitWarning) else old(m, c, *a, **k)
    try:
        code = run()
        sys.stdout.flush()  # a closed or full output fails here, inside the guard, not at exit
        return code
    except CircuitError as e:
        print(f"circuits: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("circuits: interrupted (Ctrl-C)", file=sys.stderr)
        return 130
    except BrokenPipeError:  # `circuits … | head`: the reader stopped; exit 1 as Python's docs and rich do
        _discard_stdout()
        return 1
    except MemoryError:
        print(f"circuits: out of memory; try a shorter input (at most {MAX_TOKENS} tokens without n_ctx)",
              file=sys.stderr)
        return 2
    except OSError as e:
        if e.filename is not None:  # a file the command opened: not a bug in circuits, so one line
            print(f"circuits: {e.filename}: {e.strerror or e}", file=sys.stderr)
            return 2
        if e.errno in (errno.ENOSPC, errno.EIO, errno.EBADF):  # writing the output failed
            _discard_stdout()
            print(f"circuits: cannot write the output: {e.strerror or e}", file=sys.stderr)
            return 2
        raise
    finally:
        warnings.showwarning = old


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
    from .loader import find, puzzle_files

    if name.isdigit() and not name.isascii():  # '²' passes isdigit(), but int() cannot read it
        raise CircuitError(f"no puzzle named {name!r}: write a puzzle's number with the digits 0-9")
    if name.endswith(".py") or os.sep in name or (os.altsep and os.altsep in name):
        try:
            os.stat(name)
        except OSError as e:
            if e.errno == errno.ELOOP:
                raise CircuitError(f"{name}: a symlink loop (it never reaches a file); "
                                   "point it at a puzzle file") from None
            if e.errno == errno.ENAMETOOLONG:
                raise CircuitError(f"{name[:40]}…: the file name is too long") from None
        else:
            if solution:  # the reference solution of the puzzle that file holds, not the file itself
                same = [f for f in puzzle_files(True, root=Path(name).resolve().parent) if f.name == Path(name).name]
                if not same:
                    raise CircuitError(f"--solution: there is no reference solution for {name} "
                                       f"(looked for solutions/{Path(name).name})")
                return same[0]
    return find(name, solution)


def _shown(path) -> str:
    """A path as the loader shows it (relative to here), even when it is a symlink loop."""
    from .loader import display

    try:
        return display(path)
    except (OSError, RuntimeError):  # RuntimeError: pathlib's resolve() on a symlink loop
        return os.path.relpath(path)


def _load(name: str, solution: bool):
    from .loader import load

    return load(_puzzle_file(name, solution))


def _console():
    from .render import console

    return console()


def cmd_list(args) -> int:
    from .checker import check
    from .loader import load, puzzle_files
    from .report import summary_table

    files = puzzle_files(args.solutions)
    if not files:
        raise CircuitError("no puzzle files found: run this inside the project (it looks for puzzles/ and solutions/)")
    results = []
    for f in files:
        try:
            attempt = load(_puzzle_file(_shown(f), False))
            results.append(check(attempt, n_random=2000, property_examples=50, margins=False))
        except CircuitError as e:
            from .checker import PuzzleResult

            said = str(e)  # most messages name the file already: name it once
            said = said if _shown(f) in said else f"{_shown(f)}: {said}"
            results.append(PuzzleResult.unloaded(f, said))  # a row of its own, never dropped
            print(f"circuits: {said}", file=sys.stderr)
    _console().print(summary_table(results, title="circuits · " + ("solutions" if args.solutions else "your puzzles")))
    return 1 if any(r.attempt is None for r in results) else 0


def cmd_check(args) -> int:
    from .checker import check
    from .report import puzzle_report

    result = check(_load(args.puzzle, args.solution), margins=not args.no_margins)
    if result.status == "error" and result.message:  # the answer could not even be built: one line, on stderr
        raise CircuitError(result.message)
    if getattr(args, "json", False):
        from .certified import result_json

        print(json.dumps(result_json(result), ensure_ascii=False))
        return 0 if result.status == "solved" else 1
    _console().print(puzzle_report(result))
    return 0 if result.status == "solved" else 1


def _built(args, verb: str):
    """The attempt and the model its answer builds, or one line saying why there is none."""
    if getattr(args, "html", None):
        from .html import html_target

        html_target(args.html, args.force)  # a page that cannot be written is refused before any work
    attempt = _load(args.puzzle, args.solution)
    if not attempt.attempted:
        raise CircuitError(f"{attempt.puzzle.id} is not attempted yet: fill in {', '.join(attempt.missing)} first")
    if attempt.puzzle.build is None:
        raise CircuitError(f"{attempt.puzzle.id} is a code puzzle: it has no model to {verb}")
    return attempt, attempt.model()


def shown_targets(attempt, trace, tokens) -> list[dict]:
    """Every behaviour target the puzzle checks, on one input: what it expects and what the model does, per position."""
    from .targets import Attention, NextToken, Output

    out = []
    for t in attempt.puzzle.targets:
        if isinstance(t, Attention):
            pattern = trace.pattern(t.layer, t.head)[0]
            keys = t.key_sets(trace, [tokens])[0]  # [query, key]
            out.append({"label": t.label, "kind": "attention", "head": [t.layer, t.head],
                        "readout": f"head {t.layer}.{t.head}: attended key (argmax)",
                        "expected": [[int(k) for k in np.flatnonzero(row)] or None for row in keys],
                        "output": [int(np.argmax(r)) for r in pattern]})
        elif isinstance(t, Output):
            yours = t.readout.get(trace)[0]
            off = yours.shape[0] - len(tokens)
            exp = [None] * off + [None if e is None else list(map(float, e)) for e in t.spec(tokens)]
            out.append({"label": t.label, "kind": "output", "readout": t.readout.label, "expected": exp,
                        "output": yours.tolist()})
        elif isinstance(t, NextToken) and trace.logprobs is not None:
            vocab = trace.model.vocab
            off = trace.ids.shape[1] - len(tokens)
            out.append({"label": t.label, "kind": "next-token", "readout": "next-token prediction",
                        "expected": [None] * off + list(t.spec(tokens)),
                        "output": [vocab.tokens[int(i)] for i in trace.logprobs[0].argmax(-1)]})
    return out


def _readout_table(target: dict, labels: list[str]):
    from rich.table import Table

    table = Table(box=None, header_style="bold")
    for col in ("pos", "token", "expected", "yours"):
        table.add_column(col, justify="right")
    fmt = lambda v: "—" if v is None else (  # noqa: E731
        "[" + ", ".join(f"{x:.3g}" for x in v) + "]" if isinstance(v, list) else str(v))
    for i, tok in enumerate(labels):
        e = target["expected"][i] if i < len(target["expected"]) else None
        table.add_row(str(i), repr(tok), fmt(e), fmt(target["output"][i]))
    return table


def cmd_show(args) -> int:
    from rich.text import Text

    from .render import pattern_heatmap

    attempt, model = _built(args, "show")
    tokens = model.vocab.split(args.input)
    check_length(model, len(tokens), "the input")
    model.vocab.encode(args.input)  # an unknown token is reported against the text as typed
    trace = model.run([tokens])
    labels = trace.tokens(0)
    targets = shown_targets(attempt, trace, tokens)
    patterns = [[trace.pattern(l, h)[0].tolist() for h in range(model.n_heads(l))] for l in range(model.n_layers)]
    if args.html:
        from .html import write_html

        write_html(args.html, trace, force=args.force)
    if args.json:
        first = targets[0] if targets else {"readout": "", "output": [], "expected": [], "kind": ""}
        expected = [max(k) if k else None for k in first["expected"]] if first["kind"] == "attention" else first["expected"]
        print(json.dumps({"puzzle": attempt.puzzle.id, "tokens": labels, "patterns": patterns, "targets": targets,
                          # the first target alone, as before `targets` (attention: the latest expected key)
                          "readout": first["readout"], "output": first["output"], "expected": expected}))
        return 0
    c = _console()
    marked = {tuple(t["head"]): t for t in targets if t["kind"] == "attention"}
    for l in range(model.n_layers):
        for h in range(model.n_heads(l)):
            target = marked.get((l, h))
            title = f"head {l}.{h}" + (f" — {target['label']} (* = expected key)" if target else "")
            c.print(Text(title, style="bold"))
            c.print(pattern_heatmap(trace.pattern(l, h)[0], labels, targets=target["expected"] if target else None))
            c.print()
    for target in targets:
        if target["kind"] != "attention":
            c.print(Text(f"{target['label']} — {target['readout']}, yours vs expected", style="bold"))
            c.print(_readout_table(target, labels))
            c.print()
    if args.html:
        c.print(Text(f"wrote {args.html}"))
    return 0


def cmd_analyze(args) -> int:
    from .analysis import analyze_command

    attempt, model = _built(args, "analyze")
    example = list(attempt.puzzle.examples[:1]) or None  # the worked example shows the patterns the puzzle is about
    return analyze_command(model, args.html, args.json, sys.stdout, inputs=example, force=args.force)


def check_length(model, n_tokens: int, what: str) -> None:
    """Refuse, before any work, an input too long for a model without n_ctx (the model itself checks its n_ctx)."""
    if model.n_ctx is None and n_tokens > MAX_TOKENS:
        raise CircuitError(f"{what} has {n_tokens} tokens; a model without n_ctx takes at most {MAX_TOKENS} "
                           "(MAX_TOKENS in circuits/cli.py)")


COMMANDS = {"list": cmd_list, "check": cmd_check, "show": cmd_show, "analyze": cmd_analyze}


def _authoring_commands() -> dict:
    from .authoring_cli import COMMANDS as authoring

    return authoring


COMMANDS.update(_authoring_commands())

if __name__ == "__main__":
    raise SystemExit(main())
