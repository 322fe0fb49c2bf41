"""What grading writes: the CSV gradebook, the full JSON, Gradescope's results.json, a report per student.

Every output is checked before the first student is graded (`Outputs.checked`): no two of them one file
(by name, symbolic link or hard link), none a file that exists unless `--force` (or the unfinished run being
resumed wrote it). Each is written whole or not at all (a temporary file renamed over it) as each student
finishes, so a crash or Ctrl-C keeps every student graded so far and never leaves a half-written file. Text a
student controls reaches every format printable (`printable`), and no CSV cell starts a spreadsheet formula.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path

from circuits.errors import CircuitError
from circuits.grading.grade import SubmissionGrade

CSV_COLUMNS = ["student", "puzzle", "status", "score", "max_score", "detail"]
_ESCAPED = re.compile("[\udc80-\udcff]+")  # how Python spells the bytes of a name that is not UTF-8
FORMULA = ("=", "+", "-", "@", "\t", "\r")  # what makes a spreadsheet run a cell (OWASP's CSV injection list)


# --- text a student controls ------------------------------------------------------------------------------------
def printable(text: str) -> str:
    """`text` as any UTF-8 file can hold it: the bytes of a non-UTF-8 name (surrogate escapes) as \\xNN, any other
    lone surrogate (one raised in a student's error message) as \\udNNN; everything else unchanged."""
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        as_bytes = _ESCAPED.sub(
            lambda m: m[0].encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace"), text
        )
        return as_bytes.encode("utf-8", "backslashreplace").decode("utf-8")


def _printable(data):
    """Every string in nested dicts and lists made printable."""
    if isinstance(data, str):
        return printable(data)
    if isinstance(data, dict):
        return {_printable(k): _printable(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [_printable(v) for v in data]
    return data


def cell(value) -> str:
    """A CSV cell a spreadsheet shows as text: one that would start a formula gets a leading quote (OWASP)."""
    text = printable(str(value))
    return "'" + text if text.startswith(FORMULA) else text


# --- the formats ------------------------------------------------------------------------------------------------
def gradebook_csv(grades: list[SubmissionGrade]) -> str:
    """One row per student and puzzle: status, score and the first failing target in one line."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    w.writerow(CSV_COLUMNS)
    for g in grades:
        for p in g.puzzles:
            w.writerow([cell(x) for x in (g.student, p.puzzle, p.status, f"{p.score:g}", f"{p.max_score:g}", p.detail)])
    return out.getvalue()


def full_json(grades: list[SubmissionGrade], complete: bool = True) -> str:
    """Everything: per student the notes, the fence, and per puzzle its row, its report and the check's JSON.
    `complete` is false while the class is still being graded (or when the run was stopped)."""
    rows = []
    for g in grades:
        rows.append(
            {
                "student": g.student,
                "source": g.source,
                "score": g.score,
                "max_score": g.max_score,
                "notes": g.notes,
                "fence": g.fence,
                "seconds": round(g.seconds, 3),
                "puzzles": [{k: v for k, v in asdict(p).items() if k not in ("html", "student")} for p in g.puzzles],
            }
        )
    data = _printable({"version": 1, "complete": complete, "submissions": rows})
    return json.dumps(data, ensure_ascii=False, indent=1) + "\n"


def gradescope_json(grade: SubmissionGrade) -> str:
    """Gradescope's results.json: one test per puzzle, its output the report the learner sees with `circuits check`."""
    tests = []
    for p in grade.puzzles:
        number = p.puzzle[:2]
        tests.append(
            {
                "name": p.puzzle,
                "number": str(int(number)) if number.isdigit() else number,
                "score": p.score,
                "max_score": p.max_score,
                "status": "passed" if p.status == "solved" else "failed",
                "output": p.report,
                "visibility": "visible",
            }
        )
    solved = sum(p.status == "solved" for p in grade.puzzles)
    summary = [f"solved {solved} of {len(grade.puzzles)} puzzles", *grade.notes]
    data = _printable(
        {
            "score": grade.score,
            "output": "\n".join(summary),
            "visibility": "visible",
            "stdout_visibility": "hidden",
            "execution_time": round(grade.seconds, 1),
            "tests": tests,
        }
    )
    return json.dumps(data, ensure_ascii=False, indent=1) + "\n"


def student_text(grade: SubmissionGrade) -> str:
    head = [f"{grade.student}: {grade.score:g} of {grade.max_score:g} ({grade.source})", *grade.notes, ""]
    return printable("\n".join(head + [p.report for p in grade.puzzles]))


def student_html(grade: SubmissionGrade) -> str:
    from circuits.display.html import report_page

    title = f"circuits · {grade.student}: {grade.score:g} of {grade.max_score:g}"
    sections = [("notes", "", "\n".join(grade.notes), "")] if grade.notes else []
    sections += [(p.puzzle, p.status, p.report, p.html) for p in grade.puzzles]
    return printable(report_page(title, sections))


def safe_name(student: str) -> str:
    """A student's name as a file name: letters, digits, dot, dash and underscore only."""
    return re.sub(r"[^A-Za-z0-9._-]", "_", student).lstrip(".") or "student"


# --- checked before grading, written as each student finishes ---------------------------------------------------
def check_target(path: str | Path, force: bool, what: str, owned: frozenset = frozenset()) -> Path:
    """`path` may be written: not a Python file, not a folder, its folder exists and is writable, and it is new,
    empty (a crash's leftover), written by the run being resumed (`owned`), or `force`."""
    p = Path(path)
    if p.suffix.lower() in (".py", ".pyw", ".ipynb"):
        raise CircuitError(f"{what} {p} is a Python file; grading never writes over one: choose another name")
    if p.is_dir():
        raise CircuitError(f"{what} {p} is a folder; give a file name")
    parent = p.parent if str(p.parent) else Path(".")
    if not parent.is_dir():
        raise CircuitError(f"{what} {p}: the folder {parent} does not exist")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise CircuitError(f"{what} {p}: the folder {parent} is not writable")
    if p.is_symlink() and not force:
        raise CircuitError(f"{what} {p} is a symbolic link (--force replaces the link)")
    if p.exists() and not force and _identity(p) not in owned and not _empty(p):
        raise CircuitError(f"{what} {p} exists; refusing to overwrite it (choose another name, or add --force)")
    return p


def _empty(p: Path) -> bool:
    return p.is_file() and not p.is_symlink() and p.stat().st_size == 0


def _identity(p: Path) -> str:
    """One name per file: its real path (symbolic links in its folders resolved)."""
    return os.path.realpath(p)


def report_paths(
    folder: str | Path, grades_or_names, force: bool, owned: frozenset = frozenset()
) -> list[tuple[Path, Path]]:
    folder = Path(folder)
    if folder.exists() and not folder.is_dir():
        raise CircuitError(f"--report-dir {folder} is a file, not a folder")
    made = next((f for f in [folder, *folder.parents] if f.exists()), Path("."))  # the folder, or where it goes
    if not made.is_dir() or not os.access(made, os.W_OK | os.X_OK):
        raise CircuitError(f"--report-dir {folder}: {made} is not a folder that can be written")
    names = [g.student if isinstance(g, SubmissionGrade) else g for g in grades_or_names]
    pairs = [(folder / f"{safe_name(n)}.txt", folder / f"{safe_name(n)}.html") for n in names]
    seen: dict[str, str] = {}
    for n in names:
        if safe_name(n) in seen:
            raise CircuitError(
                f"students {printable(seen[safe_name(n)])!r} and {printable(n)!r} would share the "
                f"report {safe_name(n)}.txt: rename one"
            )
        seen[safe_name(n)] = n
    if not force:
        for pair in pairs:
            for p in pair:
                if (p.exists() or p.is_symlink()) and _identity(p) not in owned and not _empty(p):
                    raise CircuitError(
                        f"report {p} exists; refusing to overwrite it (another --report-dir, or --force)"
                    )
    return pairs


def one_file_each(named: list[tuple[str, Path]]) -> None:
    """No two outputs are one file: not by name, nor through a symbolic link, nor as two names of one file."""
    seen: dict[object, str] = {}
    for what, p in named:
        keys = [_identity(p)]
        if p.exists():
            st = p.stat()
            keys.append((st.st_dev, st.st_ino))
        for key in keys:
            if key in seen and seen[key] != what:
                raise CircuitError(f"{seen[key]} and {what} are one file: give each its own")
            seen[key] = what


@dataclass
class Outputs:
    """The files a run writes, checked before grading; `write` rewrites them whole as each student finishes."""

    csv: Path | None = None
    json: Path | None = None
    gradescope: Path | None = None
    reports: dict[str, tuple[Path, Path]] = field(default_factory=dict)  # student -> (text, page)
    force: bool = False
    owned: set[str] = field(default_factory=set)  # files this run (or the one it resumes) wrote: replaced freely

    @classmethod
    def checked(
        cls,
        csv_path,
        json_path,
        gradescope_path,
        report_dir,
        students: list[str],
        force: bool,
        owned: frozenset = frozenset(),
        journal: Path | None = None,
    ) -> Outputs:
        """Every output checked now, before any student is graded: a one-line CircuitError for the first problem."""
        named = []
        for path, what in ((csv_path, "--out"), (json_path, "--json"), (gradescope_path, "--gradescope")):
            if path:
                named.append((f"{what} {path}", check_target(path, force, what, owned)))
        reports = {}
        if report_dir:
            pairs = report_paths(report_dir, students, force, owned)
            reports = dict(zip(students, pairs))
            named += [(f"report {p}", p) for pair in pairs for p in pair]
        if journal is not None:
            named.append((f"the run's record {journal}", journal))
        one_file_each(named)
        return cls(
            Path(csv_path) if csv_path else None,
            Path(json_path) if json_path else None,
            Path(gradescope_path) if gradescope_path else None,
            reports,
            force,
            set(owned),
        )

    def paths(self) -> list[Path]:
        """Every file this run may write."""
        reports = [p for pair in self.reports.values() for p in pair]
        return [p for p in (self.csv, self.json, self.gradescope) if p] + reports

    def write(self, grades: list[SubmissionGrade], complete: bool) -> list[Path]:
        """The gradebook, the JSON and (once its one submission is graded) Gradescope's file, each rewritten whole."""
        written = []
        for path, text in (
            (self.csv, lambda: gradebook_csv(grades)),
            (self.json, lambda: full_json(grades, complete)),
            (self.gradescope if grades else None, lambda: gradescope_json(grades[0])),
        ):
            if path:
                self._put(path, text())
                written.append(path)
        return written

    def write_reports(self, grade: SubmissionGrade) -> list[Path]:
        if grade.student not in self.reports:
            return []
        txt, page = self.reports[grade.student]
        os.makedirs(txt.parent, exist_ok=True)
        self._put(txt, student_text(grade))
        self._put(page, student_html(grade))
        return [txt, page]

    def _put(self, path: Path, text: str) -> None:
        """`text` into `path` whole or not at all; a file that appeared since the check is never replaced."""
        replace = self.force or _identity(path) in self.owned or _empty(path)
        try:
            write_whole(path, text, replace)
        except FileExistsError:
            raise CircuitError(f"{path} appeared while grading ran; refusing to overwrite it (add --force)") from None
        self.owned.add(_identity(path))


def write_whole(path: Path, text: str, replace: bool) -> None:
    """Write a temporary file beside `path`, flush it to disk, then rename it over `path` (`replace`) or link it
    there (FileExistsError if `path` exists): a reader, or a crash, sees the old file or the new, never half."""
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    data = text.encode("utf-8", "backslashreplace")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o644)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        if not replace:
            try:
                os.link(tmp, path)  # fails if path exists: created exclusively, and already whole
                return
            except FileExistsError:
                raise
            except OSError:  # a file system without hard links: look, then rename
                if path.exists() or path.is_symlink():
                    raise FileExistsError(path) from None
        os.replace(tmp, path)
    except FileExistsError:
        raise
    except OSError as e:
        raise CircuitError(f"cannot write {path}: {e.strerror or e}") from None
    finally:
        if tmp.exists():
            tmp.unlink()
