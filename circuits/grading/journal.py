"""An unfinished run's record: who is graded so far, so that running the same command again resumes.

`grades.csv.progress` (beside the first output) holds one JSON line of the run's settings and then one line
per student as each finishes: the grade and a hash of the files it was graded on. It is deleted when the run
completes. A rerun with the same settings keeps each recorded student whose files are unchanged and grades
the rest; with other settings (puzzles, limits, circuits' version) it is refused unless `--force`, which starts
again. A line cut short by a crash is ignored (that student is graded again).
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import asdict
from pathlib import Path

from circuits.errors import CircuitError
from circuits.grading.grade import PuzzleGrade, SubmissionGrade
from circuits.grading.outputs import write_whole
from circuits.grading.submission import Submission

MARK = "circuits grade: an unfinished run"


def path_for(first_output: str | Path) -> Path:
    p = Path(first_output)
    return p.with_name(p.name + ".progress")


def fingerprint(sub: Submission) -> str:
    """What a student was graded on: every file's name and bytes, and the notes on what was not read."""
    h = hashlib.sha256()
    for name in sorted(sub.files):
        h.update(name.encode("utf-8", "surrogateescape") + b"\0" + sub.files[name] + b"\0")
    h.update(json.dumps(sub.notes).encode())
    return h.hexdigest()


class Journal:
    """The record of one run: `previous` holds the grades a resumed run keeps, by student."""

    def __init__(self, path: Path, settings: dict, force: bool):
        self.path = Path(path)
        self.settings = settings
        self.previous: dict[str, tuple[str, SubmissionGrade]] = {}  # student -> (fingerprint, grade)
        self.owned: frozenset[str] = frozenset()  # the outputs the unfinished run wrote (their real paths)
        if self.path.exists() or self.path.is_symlink():
            self._read(force)

    def _read(self, force: bool) -> None:
        lines = []
        try:
            if not self.path.is_symlink() and self.path.is_file():
                lines = self.path.read_text(encoding="utf-8").splitlines()
            head = json.loads(lines[0]) if lines else {}
        except (OSError, ValueError):
            head = {}
        if not isinstance(head, dict) or head.get("mark") != MARK:
            if not force:
                raise CircuitError(
                    f"{self.path} exists and is not circuits' record of a run; refusing to overwrite it (add --force)"
                )
            return
        recorded = {}
        for line in lines[1:]:
            try:
                entry = json.loads(line)
                grade = _grade(entry["grade"])
                recorded[grade.student] = (str(entry["files"]), grade)
            except (ValueError, KeyError, TypeError, AttributeError):
                continue  # cut short by a crash: that student is graded again
        if head.get("settings") != self.settings:
            # a run that graded no one (say, its cluster was unreachable) holds nothing to lose: start again
            if recorded and not force:
                old = head["settings"] if isinstance(head.get("settings"), dict) else {}
                differ = sorted(k for k in self.settings if old.get(k) != self.settings[k]) or ["settings"]
                raise CircuitError(
                    f"{self.path}: an unfinished run with other {', '.join(differ)}: rerun as it "
                    "was, or --force to grade all again"
                )
            return
        self.owned = frozenset(head.get("outputs", []))
        self.previous = recorded

    def kept(self, subs: list[Submission]) -> dict[str, SubmissionGrade]:
        """The recorded grades still good: the student's files are the ones graded."""
        out = {}
        for s in subs:
            if s.student in self.previous and self.previous[s.student][0] == fingerprint(s):
                out[s.student] = self.previous[s.student][1]
        return out

    def start(self, kept: dict[str, SubmissionGrade], subs: list[Submission], outputs: list[Path]) -> None:
        """A fresh record holding the settings, the outputs this run may write and the grades kept."""
        prints = {s.student: fingerprint(s) for s in subs}
        owned = sorted(self.owned | {os.path.realpath(p) for p in outputs})
        head = {"mark": MARK, "settings": self.settings, "outputs": owned}
        lines = [_line(head)] + [_line({"files": prints[name], "grade": asdict(g)}) for name, g in kept.items()]
        write_whole(self.path, "".join(lines), replace=True)

    def add(self, sub: Submission, grade: SubmissionGrade) -> None:
        """One student graded: appended and flushed to disk before its outputs are written."""
        try:
            with open(self.path, "a", encoding="utf-8") as f:
                f.write(_line({"files": fingerprint(sub), "grade": asdict(grade)}))
                f.flush()
                os.fsync(f.fileno())
        except OSError as e:
            raise CircuitError(f"cannot write {self.path}: {e.strerror or e}") from None

    def finish(self) -> None:
        self.path.unlink(missing_ok=True)


def _line(data: dict) -> str:
    return json.dumps(data, ensure_ascii=True, separators=(",", ":")) + "\n"  # ASCII: lone surrogates kept exactly


def _grade(d: dict) -> SubmissionGrade:
    puzzles = [PuzzleGrade(**p) for p in d.pop("puzzles")]
    return SubmissionGrade(**d, puzzles=puzzles)
