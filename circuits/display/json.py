"""A check's result as plain JSON (`circuits check --json`, a grader's report): the same facts, and the same
words, as the text report."""

from __future__ import annotations

from circuits import explain
from circuits.display import words
from circuits.explain import hint, summary


def result_json(result) -> dict:
    """A PuzzleResult as plain JSON: status, each target (with its failure), coverage with skipped stages, margins.
    The facts are the result's own `to_dict`; the words (messages, notes, the failure's summary and hint) are
    added here."""
    facts, cov = result.to_dict(), result.coverage
    counts = facts["coverage"]
    targets = []
    for t, d in zip(result.targets, facts["targets"]):
        row = {
            "label": d["label"],
            "kind": d["kind"],
            "status": d["status"],
            "checked": d["checked"],
            "metric": d["metric"] or None,
            "worst": d["worst"],
            "message": words.said(t) or None,
        }
        f = t.failure
        if f is not None:
            e = f.explanation
            row["failure"] = {
                "stage": f.stage,
                "input": list(f.tokens),
                "found_length": f.found_len,
                "summary": summary(e) if e is not None else explain.words(f.finding),
                "hint": hint(e) if e is not None else _notes(f),
            }
        targets.append(row)
    return {
        "puzzle": facts["puzzle"],
        "file": str(result.attempt.path) if result.attempt else None,
        "status": facts["status"],
        "message": words.said(result) or None,
        "targets": targets,
        "coverage": {
            "examples": counts["examples"],
            "small_inputs": counts["small"],
            "small_inputs_note": words.small_note(cov) or None,
            "random": counts["random"],
            "property_examples": counts["property_examples"],
            "lengths": counts["lengths"],
            "skipped": words.skipped(cov),
        },
        "margins": words.margins(result.margins) if result.margins is not None else None,
        "edited_givens": [
            {"name": e.name, "line": e.line, "removed": e.removed}
            for e in (result.attempt.edits if result.attempt else [])
        ],
        "seconds": round(facts["seconds"], 3),
    }


def _notes(failure) -> str | None:
    """A finding's notes (a stray write or read), as the text report says them after it."""
    return " ".join(f"Note: {n.detail}" for n in failure.notes) or None


def audit_json(audit) -> dict:
    """An audit.AuthorAudit as plain JSON (`circuits audit --json`): the kill rate, each survivor with its closest
    call in one line and its allow-list entry ("allow": pasted into ALLOWED_MUTANTS, it matches that mutant only),
    the mutants the rules spared (counted per rule, and each with its rules), the allow-list's reasons, its entries
    that matched no mutant and those no mutant needs."""
    r = audit.result
    return {
        "puzzle": r.puzzle,
        "file": audit.path,
        "mutants": r.total,
        "killed": len(r.killed),
        "kill_rate": r.kill_rate,
        "allowed": [{"mutant": n, "why": w} for n, w in r.allowed],
        "spared_by_rule": words.spared_counts(r),
        "spared": [{"mutant": n, "rules": w} for n, w in r.spared],
        "survived": [
            {
                "mutant": s.name,
                "allow": s.allow,
                "entry": s.entry,
                "change": s.change,
                "closest_call": " ".join(words.survivor_closest(s)),
            }
            for s in audit.survivors
        ],
        "stale_allowed": audit.stale,
        "covered_by_rule": audit.covered,
        "matched_no_mutant": audit.unmatched,
        "seconds": round(r.seconds, 2),
        "mutants_made": r.made,
        "sampled": r.sampled,
        "not_run": r.not_run,
        "complete": r.complete,
        "mechanisms": [
            {"target": label, "interventions": explain.words(tried), "reference": "passed"}
            for label, tried in audit.mechanisms
        ],
    }
