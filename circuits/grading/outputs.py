"""What grading writes: the CSV gradebook, the full JSON, Gradescope's results.json, a report per student.

Every file is refused up front if it exists (unless `force`), so a run never writes over
something it did not make; each is created exclusively ("x"), so one that appears meanwhile is not
overwritten either.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
from dataclasses import asdict
from pathlib import Path

from circuits.errors import CircuitError
from circuits.grading.grade import SubmissionGrade

CSV_COLUMNS = ["student", "puzzle", "status", "score", "max_score", "detail"]


def check_target(path: str | Path, force: bool, what: str) -> Path:
    """`path` may be written: not a Python file, not a folder, its folder exists, and it is new (or `force`)."""
    p = Path(path)
    if p.suffix.lower() in (".py", ".pyw", ".ipynb"):
        raise CircuitError(f"{what} {p} is a Python file; grading never writes over one: choose another name")
    if p.is_dir():
        raise CircuitError(f"{what} {p} is a folder; give a file name")
    if not p.parent.is_dir():
        raise CircuitError(f"{what} {p}: the folder {p.parent} does not exist")
    if (p.exists() or p.is_symlink()) and not force:
        raise CircuitError(f"{what} {p} exists; refusing to overwrite it (choose another name, or add --force)")
    return p


def _write(path: Path, text: str, force: bool) -> None:
    try:
        with open(path, "w" if force else "x", encoding="utf-8", newline="") as f:
            f.write(text)
    except FileExistsError:
        raise CircuitError(f"{path} appeared while grading ran; refusing to overwrite it (add --force)") from None
    except OSError as e:
        raise CircuitError(f"cannot write {path}: {e.strerror or e}") from None


def gradebook_csv(grades: list[SubmissionGrade]) -> str:
    """One row per student and puzzle: status, score and the first failing target in one line."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for g in grades:
        for p in g.puzzles:
            w.writerow([g.student, p.puzzle, p.status, f"{p.score:g}", f"{p.max_score:g}", p.detail])
    return out.getvalue()


def full_json(grades: list[SubmissionGrade]) -> str:
    """Everything: per student the notes, the fence, and per puzzle its row, its report and the check's JSON."""
    rows = []
    for g in grades:
        rows.append({"student": g.student, "source": g.source, "score": g.score, "max_score": g.max_score,
                     "notes": g.notes, "fence": g.fence, "seconds": round(g.seconds, 3),
                     "puzzles": [{k: v for k, v in asdict(p).items() if k not in ("html", "student")} for p in g.puzzles]})
    return json.dumps({"version": 1, "submissions": rows}, ensure_ascii=False, indent=1) + "\n"


def gradescope_json(grade: SubmissionGrade) -> str:
    """Gradescope's results.json: one test per puzzle, its output the report the learner sees with `circuits check`."""
    tests = []
    for p in grade.puzzles:
        number = p.puzzle[:2]
        tests.append({"name": p.puzzle, "number": str(int(number)) if number.isdigit() else number,
                      "score": p.score, "max_score": p.max_score,
                      "status": "passed" if p.status == "solved" else "failed",
                      "output": p.report, "visibility": "visible"})
    solved = sum(p.status == "solved" for p in grade.puzzles)
    summary = [f"solved {solved} of {len(grade.puzzles)} puzzles", *grade.notes]
    return json.dumps({"score": grade.score, "output": "\n".join(summary), "visibility": "visible",
                       "stdout_visibility": "hidden", "execution_time": round(grade.seconds, 1), "tests": tests},
                      ensure_ascii=False, indent=1) + "\n"


def student_text(grade: SubmissionGrade) -> str:
    head = [f"{grade.student}: {grade.score:g} of {grade.max_score:g} ({grade.source})", *grade.notes, ""]
    return "\n".join(head + [p.report for p in grade.puzzles])


def student_html(grade: SubmissionGrade) -> str:
    from circuits.display.html import report_page

    title = f"circuits · {grade.student}: {grade.score:g} of {grade.max_score:g}"
    sections = [("notes", "", "\n".join(grade.notes), "")] if grade.notes else []
    sections += [(p.puzzle, p.status, p.report, p.html) for p in grade.puzzles]
    return report_page(title, sections)


def safe_name(student: str) -> str:
    """A student's name as a file name: letters, digits, dot, dash and underscore only."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", student).lstrip(".") or "student"


def report_paths(folder: str | Path, grades_or_names, force: bool) -> list[tuple[Path, Path]]:
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise CircuitError(f"--report-dir {folder} is a file, not a folder")
    names = [g.student if isinstance(g, SubmissionGrade) else g for g in grades_or_names]
    pairs = [(folder / f"{safe_name(n)}.txt", folder / f"{safe_name(n)}.html") for n in names]
    seen: dict[str, str] = {}
    for n in names:
        if safe_name(n) in seen:
            raise CircuitError(f"students {seen[safe_name(n)]!r} and {n!r} would share the report "
                               f"{safe_name(n)}.txt: rename one")
        seen[safe_name(n)] = n
    if not force:
        for pair in pairs:
            for p in pair:
                if p.exists() or p.is_symlink():
                    raise CircuitError(f"report {p} exists; refusing to overwrite it (another --report-dir, or --force)")
    return pairs


def write_all(grades: list[SubmissionGrade], csv_path=None, json_path=None, gradescope_path=None, report_dir=None,
              force: bool = False) -> list[Path]:
    """Write each output asked for; returns the files written."""
    written = []
    for path, text in ((csv_path, lambda: gradebook_csv(grades)), (json_path, lambda: full_json(grades)),
                       (gradescope_path, lambda: gradescope_json(grades[0]))):
        if path:
            _write(Path(path), text(), force)
            written.append(Path(path))
    if report_dir:
        os.makedirs(report_dir, exist_ok=True)
        for g, (txt, page) in zip(grades, report_paths(report_dir, grades, force)):
            _write(txt, student_text(g), force)
            _write(page, student_html(g), force)
            written += [txt, page]
    return written
