"""The authors' commands of `circuits`: `new` (a puzzle skeleton and its solution) and `audit` (mutation testing)."""

from __future__ import annotations


def add_parsers(sub) -> None:
    nw = sub.add_parser("new", help="write a puzzle skeleton and its solution twin (never overwrites)")
    nw.add_argument("name", metavar="NN_name", help="two digits, an underscore and a lowercase name, e.g. 91_dup")
    nw.add_argument("folder", metavar="DIR", nargs="?", default=None,
                    help="the folder to write puzzles/ and solutions/ in (default: this project)")
    au = sub.add_parser("audit", help="mutation-test a reference solution; exit 1 when a mutant survives unreviewed")
    au.add_argument("puzzle", metavar="FILE|N", help="a reference solution's file, or a puzzle's number or name")
    au.add_argument("--json", action="store_true", help="print JSON: kill rate, survivors (entry, change, closest "
                                                        "call), allowed mutants")
    au.add_argument("-v", "--verbose", action="store_true", help="also list the allowed mutants and their reasons")


def cmd_new(args) -> int:
    from .scaffold import cmd_new

    return cmd_new(args)


def cmd_audit(args) -> int:
    from .audit import cmd_audit

    return cmd_audit(args)


COMMANDS = {"new": cmd_new, "audit": cmd_audit}
