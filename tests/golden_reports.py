"""Every report of every mutant of every shipped solution, written to a folder: run it before and after a
reshaping and compare the two folders (`diff -r BEFORE AFTER`) to show that nothing printed changed.

    python tests/golden_reports.py OUT [STEM ...]     (PYTHONPATH=. from a checkout; STEMs: all when none)

Per mutant (and for the reference itself) it writes the printed report (80 columns), each target's failure
line, the JSON and the notebook HTML, one file per mutant: OUT/<stem>/<n>.txt. Not a test (pytest does not
collect it): it checks ~3,000 answers and takes minutes.
"""

from __future__ import annotations

import copy
import json
import sys
from pathlib import Path


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
    return "\n".join(lines)


def write(stem: str, out: Path) -> int:
    try:  # the check every report is shown from: explained (circuits.explain), where the tree has it
        from circuits.explain import check
    except ImportError:
        from circuits.checking.checker import check
    from circuits.audit.mutants import mutants
    from circuits.checking.checker import check
    from circuits.checking.curriculum import folder
    from circuits.checking.pipeline import load

    attempt = load(folder() / f"{stem}.py")
    folder = out / stem
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "reference.txt").write_text(_render(check(attempt, margins=True)))
    made = mutants(copy.copy(attempt))
    for n, m in enumerate(made):
        trial = copy.copy(attempt)
        trial.answer = m.answer
        try:
            said = _render(check(trial, margins=False))
        except Exception as e:  # a crash is a difference too
            said = f"crashed: {type(e).__name__}: {e}"
        (folder / f"{n:04d}.txt").write_text(f"{m.name}\n{said}")
    return len(made)


def main(argv: list[str]) -> None:
    from circuits.checking.curriculum import ids

    out, wanted = Path(argv[0]), argv[1:]
    for stem in wanted or ids():
        print(stem, write(stem, out), flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
