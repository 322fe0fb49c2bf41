"""The `circuits` command's arguments: one subparser per verb; a usage mistake is one line."""

from __future__ import annotations

import argparse
import difflib
import re

from circuits.errors import CircuitError

FORCE_HELP = "with --html: replace FILE even if circuits did not write it (never a .py file)"


class _Parser(argparse.ArgumentParser):
    """Usage mistakes are one line, like every other mistake."""

    def error(self, message: str):
        message = _choice(message) or _one_of(message) or _number(message) or _typed(message) or message
        see = f" (see circuits {self.prog.partition(' ')[2] or ''} --help)".replace("  ", " ")
        fits = len(f"{self.prog}: {message}{see}") <= 80  # the line as the command prints it
        raise CircuitError(message + see if fits else message)


def _typed(message: str) -> str | None:
    """A value one of ours refused ("argument --behaviour: 'copyng': did you mean 'copying'?"), without argparse's
    "argument": "--behaviour 'copyng': …"."""
    found = re.fullmatch(r"argument (--\S+): ('.*)", message)
    return None if found is None else f"{found[1]} {found[2]}"


def _one_of(message: str) -> str | None:
    """argparse's "one of the arguments --hf --npz is required", shorter: "give --hf or --npz"."""
    found = re.fullmatch(r"one of the arguments (.+) is required", message)
    if found is None:
        return None
    *most, last = found[1].split()
    return f"give {', '.join(most)} or {last}" if most else f"give {last}"


def _number(message: str) -> str | None:
    """argparse's "argument --threshold: invalid float value: 'lots'", shorter: "--threshold 'lots' is not a number"."""
    found = re.fullmatch(r"argument (\S+): invalid (float|int) value: '(.*)'", message)
    if found is None:
        return None
    return f"{found[1]} {found[3]!r} is not {'a number' if found[2] == 'float' else 'a whole number'}"


_INVALID = re.compile(r"argument (\S+): invalid choice: '([^']*)' \(choose from (.*)\)$")


def _choice(message: str) -> str | None:
    """argparse's "invalid choice: 'chek' (choose from 'init', 'watch', … twelve of them)" said in a line that fits:
    the closest choice, if one is close; None for any other message."""
    found = _INVALID.search(message)
    if found is None:
        return None
    what, given, options = found[1], found[2], re.findall(r"'([^']*)'", found[3])
    name = "a command" if what == "COMMAND" else f"a choice of {what}"
    close = difflib.get_close_matches(given, options, n=1)
    if close:
        return f"{given!r} is not {name}: did you mean {close[0]!r}?"
    listed = ", ".join(options)
    return f"{given!r} is not {name}" + (f" (one of {listed})" if len(listed) <= 40 else "")


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
    from circuits.targets.behaviours import BEHAVIOURS, DEFAULT_BEHAVIOURS, DEFAULT_THRESHOLD  # not all of analysis

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
    from circuits.targets.behaviours import BEHAVIOURS

    names = [b.strip() for b in text.split(",") if b.strip()]
    if not names:
        raise argparse.ArgumentTypeError(f"{text!r} names no behaviour")
    for b in names:
        if b not in BEHAVIOURS:
            close = difflib.get_close_matches(b, list(BEHAVIOURS), n=1)
            raise argparse.ArgumentTypeError(f"{b!r}: did you mean {close[0]!r}?" if close else f"{b!r} is unknown")
    return names


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
    au.add_argument(
        "--workers", type=int, metavar="N", help="processes judging the mutants (default: the cores; same results)"
    )


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
