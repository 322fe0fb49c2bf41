"""Mutation testing: the checker rejects every small wrong edit of every reference answer.

A mutant may pass only if the reviewed allow-list (circuits/audit/allowed_mutants.py, which `circuits audit`
reads too) says why it is not a wrong circuit: the edit is
multiplied by a zero (exactly equivalent), or the check covers every input the model can take and
the edited answer meets the worksheet on all of them (another correct answer, not a missed bug).
A mutant that passes for any other reason means a target is too loose: tighten the target.
"""

import pytest
from conftest import MUTATION_AUDITS
from helpers import solution

from circuits.audit.allowed_mutants import ALLOWED, POINTER, allowed_for
from circuits.audit.mutants import Numbers, allow_entry, matches, mutants, shown_name, tolerance_probes
from circuits.audit.run import FAST_RANDOM, audit, passes_in_full, rejects
from circuits.display.words import audit_summary

PUZZLES = [
    "00_attention",
    "01_consonants",
    "02_first_consonant",
    "03_uniform",
    "04_previous_token",
    "05_virtual_head",
    "06_induction_pointer",
    "07_induction_k_composition",
    "08_induction_repeated",
]


# ── curriculum A (puzzles 09–15); their allow-lists are in circuits/audit/allowed_mutants.py ──────────
PUZZLES += [
    "09_duplicate_token",
    "10_seen_before",
    "11_copying_head",
    "12_successor_head",
    "13_copy_suppression",
    "14_skip_trigram",
    "15_q_composition",
]

# --- curriculum B (puzzles 16-21); their allow-lists are in circuits/audit/allowed_mutants.py ----------
PUZZLES += ["16_xor_mlp", "17_kv_memory", "18_histogram", "19_balanced_parens", "20_find_min", "21_ioi_mini"]

# --- puzzles that ask for invention (issue 28): two challenges and the capstone --------------------------
PUZZLES += ["22_recent_vowel", "23_look_back", "24_other_kind", "25_equal_mlp", "26_modular_addition"]
PUZZLES += ["27_split_copy", "28_same_predecessor", "29_smaller_by_value"]  # the OV, composition, RASP challenges


def audit_of(stem: str):
    """The audit of solutions/<stem>.py against its allow-list (run in a worker process by `audits`)."""
    attempt = solution(stem)
    return audit(attempt, allowed_for(attempt))


@pytest.fixture(scope="module")
def audits(request):
    """`audits(stem)`: each puzzle's audit, run once for every test that reads it. The audits the selected tests
    name run two at a time in worker processes (each audit runs on one core; the suite's goal counts two)."""
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor

    wanted = {
        item.callspec.params["stem"]
        for item in request.session.items
        if item.module is request.module and "stem" in getattr(getattr(item, "callspec", None), "params", {})
    }
    pool = ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn"))  # no fork of a threaded pytest
    running = {stem: pool.submit(audit_of, stem) for stem in sorted(wanted, key=PUZZLES.index)}
    done: dict = {}

    def of(stem: str):
        if stem not in done:
            done[stem] = running[stem].result() if stem in running else audit_of(stem)
        return done[stem]

    yield of
    pool.shutdown(cancel_futures=True)


@pytest.mark.parametrize("stem", PUZZLES)
def test_the_checker_kills_every_non_equivalent_mutant(stem, request, audits):
    result = audits(stem)
    request.config.stash[MUTATION_AUDITS].append(result)
    print(f"\n{audit_summary(result)}")
    for name, why in result.allowed:
        print(f"  allowed: {name}: {why}")
    assert not result.survived, f"{stem}: these wrong answers pass the checker: {result.survived}"
    stale = [p for p, _ in ALLOWED.get(stem, ()) if not any(matches(n, p) for n, _ in result.allowed)]
    assert not stale, f"{stem}: allow-list entries that no surviving mutant needs (remove them): {stale}"


def one_at_a_time(attempt, allowed) -> dict[str, str]:
    """The audit as it ran before it shared its plan and ran under the check's context: every mutant's inputs
    (sample, examples, extremes, small inputs) made afresh, its specs computed afresh, BLAS as the caller left it."""
    from circuits.audit.equivalence import Judge
    from circuits.audit.run import sharper

    verdicts = {}
    numbers = Numbers()
    judge = Judge(attempt, [])  # the rules alone, unconfirmed: the shared audit confirms them on its inputs
    for m in mutants(attempt):
        if rejects(attempt, m.answer, FAST_RANDOM, numbers):  # no plan given: one made for this mutant alone
            verdicts[m.name] = "killed"
        elif sharper(attempt, m.name) or judge(m.answer, numbers) is not None:
            verdicts[m.name] = "spared"
        elif any(matches(m.name, p) for p, _ in allowed):
            verdicts[m.name] = "allowed"
        else:
            verdicts[m.name] = "survived" if passes_in_full(attempt, m.answer) else "killed"
    return verdicts


@pytest.mark.parametrize("stem", ["01_consonants", "04_previous_token"])
def test_sharing_the_plan_across_mutants_changes_no_verdict(stem, audits):
    """01's mutants change its token classes (so its certified small inputs), 04's share spec values."""
    attempt = solution(stem)
    shared = audits(stem)
    alone = one_at_a_time(attempt, allowed_for(attempt))
    verdicts = {
        **{n: "killed" for n in shared.killed},
        **{n: "allowed" for n, _ in shared.allowed},
        **{n: "spared" for n, _ in shared.spared},
        **{n: "survived" for n in shared.survived},
    }
    edits = {n: v for n, v in verdicts.items() if not n.endswith("(tolerance probe)")}  # one_at_a_time: the edits
    assert len(alone) == len(edits) >= 10
    assert edits == alone


@pytest.mark.parametrize("stem", ["01_consonants", "08_induction_repeated"])
def test_mutants_cover_every_non_zero_entry(stem):
    attempt = solution(stem)
    names = {m.name for m in mutants(attempt)}
    from circuits.model.weights import raw_array as _raw

    for matrix in attempt.puzzle.answer:
        raw = _raw(getattr(attempt.answer, matrix))
        nonzero = sum(1 for x in raw.flat if not x == 0)
        assert sum(1 for n in names if n.startswith(f"{matrix}[") and n.endswith("× −1")) == nonzero


def test_06_allowed_pointer_edits_hold_at_every_copy_and_query(audits):
    """The POINTER reason, checked: every allowed edit of head 1.0 attends right for each copy m < query q ≤ 15."""
    import copy

    from circuits.checking.evaluation import evaluate

    attempt = solution("06_induction_pointer")
    f = next(t for t in attempt.puzzle.targets if t.label.startswith("(f)"))
    filler = "bcd"
    batch = [[("a" if i in (m, q) else filler[i % 3]) for i in range(q + 1)] for q in range(1, 16) for m in range(q)]
    pointer = [p for p, why in ALLOWED["06_induction_pointer"] if why == POINTER]
    passed = {n for n, _ in audits("06_induction_pointer").allowed}  # the fast check let these through
    edits = [m for m in mutants(attempt) if any(matches(m.name, p) for p in pointer) and m.name in passed]
    assert len(edits) >= 6  # the ones the checker lets through (declared reads and (f)'s mechanism refuse the rest)
    for m in edits:
        trial = copy.copy(attempt)
        trial.answer = m.answer
        ok, worst = evaluate(trial.model(), [f], batch)
        assert ok.all(), f"{m.name}: head 1.0 misses the key after the copy, worst {worst.min():.3f}"


@pytest.mark.parametrize("stem", PUZZLES)
def test_each_mutants_printed_entry_matches_it_alone_and_every_allow_list_entry_matches_a_mutant(stem):
    """`circuits audit` prints a survivor as allow_entry(name); pasted into ALLOWED_MUTANTS (or its name, or its shown
    form unescaped) it matches that mutant and no other of the puzzle's. And no shipped entry matches nothing (the
    audit would say "matched no mutant"). Names only: nothing is checked."""
    attempt = solution(stem)
    names = [m.name for m in mutants(attempt)] + [name for name, *_ in tolerance_probes(attempt, Numbers())]
    assert len(set(names)) == len(names)
    for name in names:
        for form in (allow_entry(name), shown_name(name), name):
            assert [n for n in names if matches(n, form)] == [name], form
    assert [p for p, _ in allowed_for(attempt) if not any(matches(n, p) for n in names)] == []
