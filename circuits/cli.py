"""The `circuits` command: list, check, show and analyze puzzles; scan real models."""

from __future__ import annotations

import argparse
import json
import sys

import numpy as np

from .errors import CircuitError


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
    sh = sub.add_parser("show", help="one input through a puzzle's model: attention heatmaps, yours vs expected")
    sh.add_argument("puzzle")
    sh.add_argument("input", help="the input, e.g. abcce (tokens separated by spaces for word vocabularies)")
    sh.add_argument("--solution", action="store_true")
    sh.add_argument("--json", action="store_true", help="print JSON: tokens, patterns[layer][head][query][key], output, expected")
    sh.add_argument("--html", metavar="FILE", help="also write a self-contained HTML page")
    an = sub.add_parser("analyze", help="QK/OV circuits, composition scores and paths of a puzzle's model")
    an.add_argument("puzzle")
    an.add_argument("--solution", action="store_true")
    an.add_argument("--html", metavar="FILE", help="write a self-contained HTML page")
    an.add_argument("--json", action="store_true")
    sub.add_parser("scan", help="rank a real model's heads by behaviour (needs the [hf] extra for --hf)", add_help=False)
    return p


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
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
    import warnings

    from .errors import CircuitWarning

    old = warnings.showwarning
    warnings.showwarning = lambda m, c, *a, **k: _warn(m, c, *a, **k) if issubclass(c, CircuitWarning) else old(m, c, *a, **k)
    try:
        return run()
    except CircuitError as e:
        print(f"circuits: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    finally:
        warnings.showwarning = old


def _console():
    from .render import console

    return console()


def cmd_list(args) -> int:
    from .checker import check
    from .loader import display, load, puzzle_files
    from .report import summary_table

    files = puzzle_files(args.solutions)
    if not files:
        raise CircuitError("no puzzle files found: run this inside the project (it looks for puzzles/ and solutions/)")
    results = []
    for f in files:
        try:
            results.append(check(load(f), n_random=2000, property_examples=50, margins=False))
        except CircuitError as e:
            from .checker import PuzzleResult

            results.append(PuzzleResult(None, "error", [], message=str(e)))
            print(f"circuits: {display(f)}: {e}", file=sys.stderr)
    _console().print(summary_table([r for r in results if r.attempt], title="circuits · " + ("solutions" if args.solutions else "your puzzles")))
    return 0


def cmd_check(args) -> int:
    from .checker import check
    from .loader import load_puzzle
    from .report import puzzle_report

    result = check(load_puzzle(args.puzzle, args.solution), margins=not args.no_margins)
    if result.status == "error" and result.message:  # the answer could not even be built: one line, on stderr
        raise CircuitError(result.message)
    _console().print(puzzle_report(result))
    return 0 if result.status == "solved" else 1


def _built(args, verb: str):
    """The attempt and the model its answer builds, or one line saying why there is none."""
    from .loader import load_puzzle

    attempt = load_puzzle(args.puzzle, args.solution)
    if not attempt.attempted:
        raise CircuitError(f"{attempt.puzzle.id} is not attempted yet: fill in {', '.join(attempt.missing)} first")
    if attempt.puzzle.build is None:
        raise CircuitError(f"{attempt.puzzle.id} is a code puzzle: it has no model to {verb}")
    return attempt, attempt.model()


def _expected_and_output(attempt, trace, tokens) -> tuple[list, list, str]:
    from .targets import Attention, NextToken, Output

    for t in attempt.puzzle.targets:
        if isinstance(t, Output):
            yours = t.readout.get(trace)[0]
            off = yours.shape[0] - len(tokens)
            exp = [None] * off + [None if e is None else list(map(float, e)) for e in t.spec(tokens)]
            return exp, yours.tolist(), t.readout.label
        if isinstance(t, Attention):
            pat = trace.pattern(t.layer, t.head)[0]
            tg = t.targets(trace, [tokens])[0]
            return [int(x) if x >= 0 else None for x in tg], [int(np.argmax(r)) for r in pat], \
                f"head {t.layer}.{t.head}: attended key (argmax)"
        if isinstance(t, NextToken):
            vocab = trace.model.vocab
            off = trace.ids.shape[1] - len(tokens)
            exp = [None] * off + list(t.spec(tokens))
            return exp, [vocab.tokens[int(i)] for i in trace.logprobs[0].argmax(-1)], "next-token prediction"
    return [], [], ""


def cmd_show(args) -> int:
    from rich.table import Table
    from rich.text import Text

    from .render import pattern_heatmap

    attempt, model = _built(args, "show")
    model.vocab.encode(args.input)  # an unknown token is reported against the text as typed
    tokens = model.vocab.split(args.input)
    trace = model.run([tokens])
    labels = trace.tokens(0)
    expected, output, what = _expected_and_output(attempt, trace, tokens)
    patterns = [[trace.pattern(l, h)[0].tolist() for h in range(model.n_heads(l))] for l in range(model.n_layers)]
    if args.html:
        from .html import write_html

        write_html(args.html, trace)
    if args.json:
        print(json.dumps({"puzzle": attempt.puzzle.id, "tokens": labels, "patterns": patterns, "readout": what,
                          "output": output, "expected": expected}))
        return 0
    c = _console()
    for l in range(model.n_layers):
        for h in range(model.n_heads(l)):
            c.print(pattern_heatmap(trace.pattern(l, h)[0], labels, title=f"head {l}.{h}"))
            c.print()
    if what:
        table = Table(title=what, title_justify="left", box=None, header_style="bold")
        for col in ("pos", "token", "expected", "yours"):
            table.add_column(col, justify="right")
        fmt = lambda v: "—" if v is None else (  # noqa: E731
            "[" + ", ".join(f"{x:.3g}" for x in v) + "]" if isinstance(v, list) else str(v))
        for i, tok in enumerate(labels):
            e = expected[i] if i < len(expected) else None
            table.add_row(str(i), repr(tok), fmt(e), fmt(output[i]))
        c.print(table)
    if args.html:
        c.print(Text(f"wrote {args.html}"))
    return 0


def cmd_analyze(args) -> int:
    from .analysis import analyze_command

    attempt, model = _built(args, "analyze")
    example = list(attempt.puzzle.examples[:1]) or None  # the worked example shows the patterns the puzzle is about
    return analyze_command(model, args.html, args.json, sys.stdout, inputs=example)


COMMANDS = {"list": cmd_list, "check": cmd_check, "show": cmd_show, "analyze": cmd_analyze}

if __name__ == "__main__":
    raise SystemExit(main())
