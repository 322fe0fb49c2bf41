"""A class graded so that nothing is lost: each student recorded and written as they finish; a rerun resumes.

read the submissions → the unfinished run's record (journal) says who is kept → grade the rest (parallel) →
as each finishes: record it, write its reports, rewrite the gradebook whole → complete: the record goes.
"""

from __future__ import annotations

from collections.abc import Callable

from circuits.grading import parallel
from circuits.grading.grade import SubmissionGrade
from circuits.grading.journal import Journal
from circuits.grading.outputs import Outputs
from circuits.grading.submission import Submission
from circuits.sealed.sandbox import Limits


class Stopped(KeyboardInterrupt):
    """Ctrl-C while grading: `kept` students are in the outputs, of `total`."""

    def __init__(self, kept: int, total: int):
        super().__init__()
        self.kept, self.total = kept, total


def grade_class(
    subs: list[Submission],
    stems: list[str],
    outs: Outputs,
    record: Journal,
    limits: Limits,
    workers: int | None = None,
    scheduler: str | None = None,
    said: Callable[[str], None] = lambda line: None,
) -> list[SubmissionGrade]:
    """Every submission's grade, in the order given; the outputs hold each one as soon as it is graded."""
    kept = record.kept(subs)
    if kept:
        said(f"resuming: {len(kept)} of {len(subs)} students kept from {record.path} (delete it to grade all again)")
    record.start(kept, subs, outs.paths())
    order = {s.student: n for n, s in enumerate(subs)}
    by_name = {s.student: s for s in subs}
    graded = dict(kept)

    def in_order() -> list[SubmissionGrade]:
        return sorted(graded.values(), key=lambda g: order[g.student])

    def done(g: SubmissionGrade) -> None:
        record.add(by_name[g.student], g)  # first: a crash from here on still keeps this student
        outs.write_reports(g)
        graded[g.student] = g
        outs.write(in_order(), complete=len(graded) == len(subs))
        said(f"graded {' '.join(g.student.split())}: {g.score:g} of {g.max_score:g} ({g.seconds:.1f} s)")

    for g in kept.values():
        outs.write_reports(g)
    try:
        parallel.grade_all([s for s in subs if s.student not in kept], stems, workers, scheduler, limits, done=done)
    except KeyboardInterrupt:
        raise Stopped(len(graded), len(subs)) from None
    outs.write(in_order(), complete=True)
    record.finish()
    return in_order()
