"""Every report of every mutant of every shipped solution, written to a folder: run it before and after a
reshaping and compare the two folders (`diff -r BEFORE AFTER`) to show that nothing printed changed.

    python tests/golden_reports.py OUT [STEM ...] [--reverse] [--part K/N]    (PYTHONPATH=. from a checkout)

Per mutant (and for the reference itself) it writes the printed report (80 columns), each target's failure
line, the JSON and the notebook HTML, one file per mutant: OUT/<stem>/<n>.txt; the checkout's own folder is
written as <root>, so two checkouts compare. All stems when none is named. A stem whose folder exists in OUT
is skipped, so two runs (one with --reverse) share the work on two cores; --part K/N writes only the mutants
numbered K mod N (and K = 0 the reference), for N runs sharing one long stem; a mutant's file
already written is kept, so a stopped run resumes where it was. Not a test (pytest does not
collect it): it checks ~4,000 answers and takes long.
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path

ROOT = str(Path(__file__).resolve().parent.parent)


def _render(result) -> str:
    from circuits.display import report
    from circuits.display.json import result_json
    from circuits.display.notebook import result_html, result_text

    for r in (result, *result.targets):  # times differ run to run
        if hasattr(r, "seconds"):
            r.seconds = 0.0
    lines = [result_text(result, width=80)]
    lines += [report.failure_line(t) for t in result.targets if t.status in ("failed", "error")]
    lines.append(json.dumps(result_json(result), sort_keys=True, indent=1, default=str))
    lines.append(result_html(result))
    return "\n".join(lines).replace(ROOT, "<root>")


def _checker():
    """The check every report is shown from: explained (circuits.explain) where the tree has that stage."""
    try:
        from circuits.explain import check
    except ImportError:  # a tree from before the explain stage: its checker explained
        from circuits.checking.checker import check
    return check


def write(stem: str, out: Path, part: tuple[int, int] = (0, 1)) -> int:
    from circuits.audit.mutants import mutants
    from circuits.checking.curriculum import folder
    from circuits.checking.pipeline import load

    check = _checker()
    attempt = load(folder() / f"{stem}.py")
    where = out / stem
    where.mkdir(parents=True, exist_ok=part != (0, 1))  # claimed: another whole run over OUT skips it
    k, n_parts = part
    if k == 0:
        (where / "reference.txt").write_text(_render(check(attempt, margins=True)))
    made = mutants(copy.copy(attempt))
    for n, m in enumerate(made):
        if n % n_parts != k or (where / f"{n:04d}.txt").exists():
            continue  # another part's, or written by a run that was stopped (each file is written whole)
        trial = copy.copy(attempt)
        trial.answer = m.answer
        try:
            said = _render(check(trial, margins=False))
        except Exception as e:  # a crash is a difference too
            said = f"crashed: {type(e).__name__}: {e}"
        (where / f".{n:04d}.txt").write_text(f"{m.name}\n{said}")
        (where / f".{n:04d}.txt").replace(where / f"{n:04d}.txt")  # whole or not at all: a stopped run resumes
    return len(made)


def main(argv: list[str]) -> None:
    from circuits.checking.curriculum import ids

    reverse = "--reverse" in argv
    part = (0, 1)
    if "--part" in argv:
        i = argv.index("--part")
        k, n = argv[i + 1].split("/")
        part = (int(k), int(n))
        argv = argv[:i] + argv[i + 2 :]
    argv = [a for a in argv if a != "--reverse"]
    if not argv or any(a.startswith("-") for a in argv):  # --help, or a flag misspelt: never a folder named so
        sys.exit(__doc__.split("\n\n")[1])
    out, wanted = Path(argv[0]), argv[1:]
    for stem in sorted(wanted or ids(), reverse=reverse):
        if part == (0, 1) and (out / stem).exists():
            continue  # written, or being written by another run
        print(stem, write(stem, out, part), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
