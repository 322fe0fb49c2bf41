"""The words of a check's facts: what it ran on, what it skipped, the margins and the one-line mistake, for the
text report, the summary table, `watch`, notebooks and JSON alike (checking/ keeps the numbers)."""

from __future__ import annotations

import textwrap

from circuits import explain
from circuits.io import paths


def printable(text: str) -> str:
    """`text` with what no terminal can write (a lone surrogate from a learner's message or a file name's stray
    byte) as its escape, \\udcff: it cannot stop a table from printing or shift its columns."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def said(result) -> str:
    """The one line a PuzzleResult or TargetResult says for itself: its error as raised, what is left to fill in,
    or nothing."""
    if result.error is not None:
        return printable(str(result.error))
    if result.todo is not None:
        return printable(f"not attempted: fill in {', '.join(result.todo.missing)} in {paths.shown(result.todo.path)}")
    return ""


def _span(cov) -> str:
    top = cov.small_max_len
    return f"≤ {top}" if cov.small_min_len == 1 else f"{cov.small_min_len}..{top}"


def _classes(cov) -> str:
    classes = cov.small_classes
    return "/".join(classes) if len(classes) <= 4 else f"{len(classes)}-class"


def small_note(cov) -> str:
    """ "every input of length ≤ 5 (3,905 inputs)", or the class patterns certified; "" when none ran."""
    if not cov.small:
        return ""
    if cov.certified:
        return (
            f"all {cov.small:,} {_classes(cov)} patterns of length {_span(cov)} (certified: {cov.small_tokens} tokens "
            f"fall into {len(cov.small_classes)} interchangeable classes)"
        )
    return f"every input of length {_span(cov)} ({cov.small:,} inputs)"


def small_short(cov) -> str:
    """ "exhaustive to length 5", or "certified for all … patterns of length ≤ 9", for a summary row."""
    if not cov.small:
        return ""
    if cov.certified:
        return f"certified for all {cov.small:,} {_classes(cov)} patterns of length {_span(cov)}"
    return f"exhaustive to length {cov.small_max_len}"


def whole_domain(cov) -> bool:
    """Whether the small inputs were every input there is (each token, each length the puzzle takes): then the
    random inputs and the property test only repeat them, and a count of them says nothing."""
    return bool(cov.small) and not cov.certified and cov.small_max_len >= cov.lengths[1] > 0


def _every(cov) -> str:
    """ "all 25 pairs", "all 3,905 inputs": what was enumerated, by name."""
    what = (
        {1: "tokens", 2: "pairs", 3: "triples"}.get(cov.lengths[0], "inputs")
        if cov.lengths[0] == cov.lengths[1]
        else "inputs"
    )
    return f"all {cov.small:,} {what}"


def checked(t, cov) -> str:
    """How many inputs a target was checked on, as a target's line says it: "all 25 pairs" where the check
    enumerated every input there is, else "10,129 inputs"."""
    return _every(cov) if whole_domain(cov) else f"{t.checked:,} inputs"


def tried(t) -> str:
    """What a passing mechanism target tried, as its line says it: "390 patches, 198 zeroed"; "" for others."""
    i = getattr(t, "interventions", None)
    return "" if i is None else f"{i.patched:,} patches, {i.zeroed:,} zeroed"


def coverage(cov) -> str:
    """ "2 worked examples, every input of length ≤ 5 (3,905 inputs), 10,000 random inputs (lengths 1..20), …"."""
    if whole_domain(cov):
        every = _every(cov)
        span = (
            ""
            if not every.endswith(" inputs")
            else (f" of length {cov.lengths[0]}" if cov.lengths[0] == cov.lengths[1] else f" of lengths {_span(cov)}")
        )
        return f"{every}{span}, every input there is (the worked examples among them)"
    parts = []
    if cov.examples:
        parts.append(f"{cov.examples} worked example{'s' if cov.examples > 1 else ''}")
    if note := small_note(cov):
        parts.append(note)
    if cov.random:
        parts.append(f"{cov.random:,} random inputs (lengths {cov.lengths[0]}..{cov.lengths[1]})")
    if cov.property_examples:
        parts.append(f"a {cov.property_examples}-example property test")
    return ", ".join(parts)


def skipped(cov) -> list[str]:
    """Each stage the check did not run, and why: never left to be assumed."""
    a, L = cov.small_tokens, cov.small_min_len
    why = {
        "exhaustive": (
            f"exhaustive: skipped, {a}^{L} = {a**L:,} inputs exceed the budget of {cov.small_budget:,} the puzzle "
            "allows"
        ),
        "random": "random inputs: skipped, n_random = 0",
        "property": "property test: skipped, 0 examples asked for",
        "margins": "margins: skipped, as asked (--no-margins)",
        "writes": (
            "declared writes: no reference solution found (solutions/NN_name.py beside puzzles/, or in "
            "$CIRCUITS_COURSE) and no writes= in the Puzzle"
        ),
        "reads": (
            "declared reads: no reference solution found (solutions/NN_name.py beside puzzles/, or in "
            "$CIRCUITS_COURSE) and no reads= in the Puzzle"
        ),
    }
    if "writes" in cov.skipped and "reads" in cov.skipped:  # one reason: one line
        why["writes"] = (
            why["writes"]
            .replace("declared writes", "declared writes and reads")
            .replace("no writes= in", "no writes= or reads= in")
        )
        return [why[stage] for stage in cov.skipped if stage != "reads"]
    return [why[stage] for stage in cov.skipped]


def margins(m) -> str:
    """ "holds to length 24 (fails at 25); W_QK can shrink to 0.29×", or "" when nothing was measured."""
    if m is None:
        return ""
    parts = []
    if m.longest is not None:
        if m.first_failure is None:
            parts.append(f"holds at every length searched (to {m.searched_to})")
        else:
            parts.append(f"holds to length {m.longest} (fails at {m.longest + 1})")
    if m.sharpness is not None:
        parts.append(
            "no sharpness needed" if m.sharpness == 0 else f"{m.sharpness_of} can shrink to {_factor(m.sharpness)}×"
        )
    return "; ".join(parts)


def inputs(i) -> str:
    """What a puzzle is checked on: "lengths 1..12 over 26 tokens (runs of one class)"."""
    fams = ", ".join(f.name for f in i.families)
    return f"lengths {i.min_len}..{i.max_len} over {len(i.alphabet)} tokens ({fams})"


def audit_summary(r) -> str:
    """One run.Audit in a line: "01_consonants: 40/40 non-equivalent mutants killed (100%), …"."""
    spared = f"{len(r.spared)} spared by a rule, " if r.spared else ""
    return (
        f"{r.puzzle}: {len(r.killed)}/{len(r.killed) + len(r.survived)} non-equivalent mutants "
        f"killed ({r.kill_rate:.0%}), {spared}{len(r.allowed)} allowed as equivalent, {r.total} in all, "
        f"{r.seconds:.1f} s" + "".join(f"; {n}" for n in audit_notes(r))
    )


def audit_notes(r) -> list[str]:
    """What a run.Audit did not do: mutants left out by sampling, or unjudged when the time ran out."""
    from circuits.audit.run import MAX_MUTANTS

    out = []
    if r.sampled:
        out.append(f"sampled {r.total + r.not_run:,} of {r.made:,} mutants (MAX_MUTANTS = {MAX_MUTANTS:,})")
    if r.not_run:
        out.append(
            f"stopped after {r.budget:g} s with {r.not_run:,} mutants not run (to allow more time, "
            "set CIRCUITS_AUDIT_SECONDS)"
        )
    return out


def spared_counts(r) -> dict[str, int]:
    """How many mutants each rule (or combination of rules) spared, most first: {"masked": 10, …}."""
    counts: dict[str, int] = {}
    for _, rules in r.spared:
        counts[rules] = counts.get(rules, 0) + 1
    return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def spared_line(r) -> list[str]:
    """The mutants the rules proved equivalent, counted per rule, wrapped to 80 columns: "spared by rule: 11 (10
    masked, 1 BOS-only query)"; nothing when no rule spared any."""
    said = ", ".join(f"{n} {rules}" for rules, n in spared_counts(r).items())
    return textwrap.wrap(f"spared by rule: {len(r.spared)} ({said})", 78, subsequent_indent="  ") if said else []


def closest(c) -> list[str]:
    """An audit.Closest in two lines: the input and the value against its bound, then the target."""
    from circuits.limits import quoted, shown_input

    shown = shown_input(c.tokens)
    shown = shown if len(shown) <= 32 else shown[:30] + "…'"
    return [f"closest call: on {shown}, {c.metric} {c.value:.4g} ({c.bound})", f"in {quoted(c.label, 70)}"]


def survivor_closest(s) -> list[str]:
    """A survivor's closest call, or why it could not be found; nothing when the audit had no time left for it."""
    return closest(s.closest) if s.closest is not None else [str(s.error)] if s.error is not None else []


def audit_lines(audit, verbose: bool = False) -> list[str]:
    """`circuits audit`'s report: the kill rate, the mutants the rules spared (per rule; each one when verbose), what
    was not run, each survivor with its closest call, the allow-list's reasons (verbose), its entries that matched
    no mutant, those no mutant needs and those a rule now covers."""
    r = audit.result
    judged = len(r.killed) + len(r.survived)
    head = f"{r.puzzle} · {audit.path}"
    out = [
        *([head] if len(head) <= 80 else [r.puzzle, f"  {audit.path}"]),  # a path is never broken
        (
            f"mutants killed: {len(r.killed)}/{judged} ({r.kill_rate:.0%}); allowed as equivalent: {len(r.allowed)}; "
            f"{r.total} in all ({r.seconds:.1f} s)"
        ),
        *spared_line(r),
        *audit_notes(r),
    ]
    for label, tried in audit.mechanisms:  # what each mechanism target tried; the reference passed it all
        said = f"the reference passes every intervention: {explain.words(tried)}"
        out += [*_wrapped(f"mechanism: {label}", "", "  "), *_wrapped(said, "  ")]
    if audit.survivors:
        out += [
            f"survived, not in the allow-list ({len(audit.survivors)}): a target is too loose, or the edit is",
            "equivalent (then allow it, with the reason, in ALLOWED_MUTANTS)",
        ]
        for s in audit.survivors:
            out.append(f"  {s.allow}")  # pasted into ALLOWED_MUTANTS, it allows this mutant and no other
            out += [f"    {line}" for line in survivor_closest(s)]
    if verbose:
        for name, rules in r.spared:
            out += _wrapped(f"spared: {name} ({rules})", "  ", "    ")
        for name, why in r.allowed:
            out += [*_wrapped(f"allowed: {name}", "  ", "    "), *_wrapped(why, "    ")]
    out += [f"matched no mutant: {p}" for p in audit.unmatched]
    for said, entries in (
        ("allow-list entries no mutant needs (remove them): ", audit.stale),
        ("allow-list entries a rule now covers (remove them): ", audit.covered),
    ):
        if entries:  # an entry is never broken across lines
            joined = said + ", ".join(p.replace(" ", "\0") for p in entries)
            out += [line.replace("\0", " ") for line in textwrap.wrap(joined, 78, subsequent_indent="  ")]
    return out


def _wrapped(text: str, indent: str, rest: str | None = None) -> list[str]:
    """`text` in lines of at most 78 columns (80 with a margin), the first indented by `indent`, the others by `rest`
    (the same where not given); a word longer than a line (a matrix entry, a path) is kept whole."""
    return textwrap.wrap(
        text, 78, initial_indent=indent, subsequent_indent=indent if rest is None else rest, break_long_words=False
    )


def _factor(x: float) -> str:
    """0.29, or 0.0031 where two decimals would print a factor that is not zero as 0.00."""
    return f"{x:.2f}" if x >= 0.1 else f"{x:.2g}"
