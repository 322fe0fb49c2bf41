"""Puzzles are stated by behaviour (issue 37, item 1): what the model must do, never how.

The README's puzzle table and every worksheet past the openers (00, 01) say what each model must do; the
construction lives in the hint ladder (circuits/curriculum/hints.toml). The phrases below are the recipes
that were once in the table, the worksheets and the stubs ("the OV circuit is one rotation by 36°", "its
W_in row the key … with a threshold", "query reads the prediction", "K-composition on its dup flag",
"tracr's small position term"), and the answer sizes that gave a design away: `FILL_ME_IN("roughly N
non-zero entries")` or "(N is enough)" are for one-star puzzles only; from two stars on, a stub gives the
shape. The test reads the files beside it as text (no import of the curriculum), so it can be pointed at an
older checkout by copying it there.

A blind trial of the rewritten text (issue 37) still found a construction to transcribe in 11 of 22 two- and
three-star puzzles: the sentences it copied are in GIVEAWAYS, by puzzle, and may not come back into that puzzle's
worksheet, stub or README row. Nor may they open its hint ladder: level 1 of a two- or three-star puzzle is a nudge,
short of the construction (the construction belongs to levels 2–3), and no level gives the whole answer.
"""

import ast
import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CURRICULUM = ROOT / "circuits" / "curriculum"
STEMS = sorted(p.stem for p in (CURRICULUM / "solutions").glob("[0-9][0-9]_*.py"))
OPENERS = {"00_attention", "01_consonants"}  # the first worksheets walk through a construction on purpose

# a construction stated as a recipe (case-insensitive), with the phrase it was derived from
RECIPES = {
    r"\brotation by \d": "the OV circuit is one rotation by 36°",
    r"\b2-D rotations?\b": "from sinusoidal positions (a 2-D rotation)",
    r"\bW_in row the key\b|\brow of W_in is an? \*?key": "one unit per fact, its W_in row the key",
    r"\bone (hidden )?unit per fact\b": "one unit per fact, its W_in row the key",
    r"\bW_out column the value\b|\bcolumn of W_out is the \*?value": "its W_out column the value (a city)",
    r"\bwith a threshold\b|\bthreshold from a constant\b": "(previous and current name, with a threshold)",
    r"\bquery reads (the prediction|it\b|pred)": "(query reads the prediction, key the content)",
    r"\b[QK]-composition on\b": "an S-inhibition head (K-composition on its dup flag)",
    r"\binduction by K-composition:": "induction by K-composition: a previous-token head writes … into `prev:*`",
    r"\b[QK]-composition: the\b": "a name mover (Q-composition: the subject it must avoid)",
    r"\bposition term\b": "and tracr's small position term to break ties",
    r"\bbreaks? (such )?ties by adding\b|\bposition breaks ties\b": "Position breaks ties only",
    r"\bscores? that fall with the value\b|\bscores fall as the value rises\b": "scores that fall with the value",
    r"\bso build a bump\b": "no single threshold isolates x = y, so build a bump",
    r"\bmust beat every\b|\bthe latest must win\b": (
        "a vowel must beat every consonant and the latest vowel every earlier one"
    ),
    r"\bmust lose to any\b": "BOS must lose to any letter of the other kind",
    r"\bscores in units of s\b": "Its scores in units of s, keys 0 … 7",
    r"\bown unembedding row\b": "write each token's own unembedding row",
    r"\bmust count against its own key\b": "so one-hot positions must count against its own key",
    r"\bkeys that read .*prev:\*": "keys that read a given previous-token head's `prev:*` skip the query itself",
    r"\bstands in for the products\b": "a ReLU MLP that stands in for the products of cos(w(a + b))",
}
# by puzzle: the sentences a blind trial transcribed as the construction (pattern -> the phrase it was derived from)
GIVEAWAYS = {
    "04_previous_token": {
        r"\bis the same point rotated by\b": "position n − 1 is the same point rotated by −αᵢ",
        r"\bproject(ion)? onto \(cos": "let the query and key both project onto (cos:0, sin:0, cos:1, sin:1)",
    },
    "05_virtual_head": {
        r"\bcopies dimensions \d": "head 1 (0.0)  copies dimensions 0–3 of the previous token into dimensions 8–11",
        r"\binto 15 the dimension 8\b": "into 15 the dimension 8 of the previous position",
        r"\bat \(8, 0\)": "W_net¹ should have four 1s, at (8, 0), (9, 1), (10, 2) and (11, 3)",
    },
    "06_induction_pointer": {
        r"\bweighs \W*not myself": 'a symbol β, bound in `params`, weighs "not myself" against "the same token"',
        r"\bsame point\s+rotated by\b": "position n ± 1 is the same point rotated by ±αᵢ",
        r"\bturn that position one step forward\b": "copy *its position* into spare directions, turn that position "
        "one step forward, and attend there",
        r"\byour β must keep the copy ahead\b": "Your β must keep the copy ahead at every pair of distances up to 15",
        r"\b04's rotation\b": "(and, for (c), puzzle 04's rotation)",
    },
    "07_induction_k_composition": {
        r"\bkeys are built from what\b": "the induction head's keys are built from what that head wrote",
        r"\bkeys read only what head 1 wrote\b": "its keys read only what head 1 wrote (prev:a … prev:d)",
        r"\bwhose patched prev holds\b": "on the keys whose patched prev holds its query's token",
        r"\brotate each position pair\b": "rotate each position pair of the query back by αᵢ, times s",
    },
    "08_induction_repeated": {
        r"\bpuzzle 07's head 2\b": "of n's letter (puzzle 07's head 2), and to BOS when there is none",
        r"\band to BOS when there is none\b": "of n's letter (puzzle 07's head 2), and to BOS when there is none",
        r"\bput it on BOS\b": "put it on BOS, whose content is empty, so the logits stay flat",
        r"\bquery row k reads\b": "query row k reads tok:(letter k) times s, key row k reads prev:(letter k)",
        r"\bW_U reads out:x\b": "W_U reads out:x into the logit of x, times γ",
    },
    "09_duplicate_token": {
        r"\bone answer scores\b": "one answer scores a content match 1, BOS ½, the key at the query's own position",
        r"\bBOS ½, the key at the query's own position\b": "BOS ½, the key at the query's own position 1 less",
        r"\bmust count against the key\b": "something must count against the key at the query's own position",
    },
    "10_seen_before": {
        r"\bwhose patched prev holds its own token\b": "on the keys whose patched prev holds its own token",
        r"\(BOS where none does\)": "the keys whose patched prev holds its own token (BOS where none does)",
    },
    "11_copying_head": {
        r"\bwrites γ·\(": "a head that writes γ·(−.809, .588), c's own row of W_U",
        r"\bown row of W_U\b": "a head that writes γ·(−.809, .588), c's own row of W_U",
        r"\beigenvalues are\s+2\.5γ": "The full OV circuit of that head is γ times the pentagon's table of cosines, "
        "whose eigenvalues are 2.5γ, 2.5γ, 0, 0, 0",
    },
    "13_copy_suppression": {
        r"\bset by the prediction\b": "what the head looks for is set by the prediction, pred:*, not the current token",
        r"\bmirror image of a copying head": "Its full OV circuit is the mirror image of a copying head's (puzzle 11)",
        r"\battends to that earlier appearance\b": "it attends to that earlier appearance and pushes the token's logit "
        "down",
        r"\bquery reads pred\b": "the query reads pred:*, the key reads tok:*",
    },
    "14_skip_trigram": {
        r"\bquery rows \W*I am in or at": 'One head with query rows "I am in or at" against key "I am keep" (score s)',
        r"\bvalue keep → γ": "and value keep → γ·(out:mind + out:bay)",
    },
    "17_kv_memory": {
        r'\bW_in\[\d+, "one"\]': 'fill by name: W_in[0, "one"] = -1.',
        r"\brow of W_in is an? \*?key": "each hidden unit's row of W_in is a key that fires on one pattern",
    },
    "18_histogram": {
        r"\breads a 1 from BOS\b": "the head attends evenly to BOS and to every key the selector picks, and reads a 1 "
        "from BOS only",
        r"\be\^\(−s\) of a picked key's share\b": "that should get no attention gets e^(−s) of a picked key's share",
        r"\bone more key whose value counts differently\b": "plus one more key whose value counts differently",
    },
    "21_ioi_mini": {r'\bW_Q1\[\d+, "tok:to"\]': 'you fill by name (W_Q1[0, "tok:to"] = s)'},
    "22_recent_vowel": {r'\bW_K\[\d+, "pos:\d+"\]': 'fill by name: W_K[0, "pos:3"] = 1.'},
}
# a hint that is the whole answer (pasted in, it passes): no level of the ladder may say it
ANSWERS = {
    "26_modular_addition": {
        r"[+−-]½, [+−-]½, [+−-]½, [+−-]½": "written back with +½, +½, −½, −½ (times the sign the identity gives that "
        "product)",
    },
}
# an answer's size: only a one-star stub may say it
SIZES = r"\broughly \d+(–\d+)? non-zero entr|\(\d+ is enough\)"


def recipes(text: str, patterns=RECIPES) -> list[str]:
    flat = " ".join(text.split())
    return [m.group(0) for pattern in patterns if (m := re.search(pattern, flat, flags=re.IGNORECASE))]


def giveaways(stem: str, text: str) -> list[str]:
    """The sentences of `text` that a blind trial transcribed as `stem`'s construction."""
    return recipes(text, GIVEAWAYS.get(stem, {}))


def hints(stem: str) -> list[str]:
    """The puzzle's hint ladder, level 1 first."""
    return tomllib.loads((CURRICULUM / "hints.toml").read_text(encoding="utf-8"))[stem]["hints"]


def table() -> dict[str, str]:
    """The README's puzzle table: the "what you build" cell of each puzzle's row, by number."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## The puzzles", 1)[1].split("\n## ", 1)[0]
    rows = {}
    for line in section.splitlines():
        if re.match(r"\| \d\d \|", line):
            cells = line.strip().strip("|").split(" | ")
            rows[cells[0].strip()] = " | ".join(cells[3:-1])
    return rows


def worksheet(stem: str) -> str:
    """The worksheet's prose: the module docstring of the reference file, which the learner's stub copies."""
    source = (CURRICULUM / "solutions" / f"{stem}.py").read_text(encoding="utf-8")
    return ast.get_docstring(ast.parse(source), clean=False) or ""


def stub_block(stem: str) -> str:
    """The stub below the answer line, as `circuits reset` restores it (the commented `# ── stub` block)."""
    source = (CURRICULUM / "solutions" / f"{stem}.py").read_text(encoding="utf-8")
    return source.split("# ── stub", 1)[1]


def stars(stem: str) -> int:
    return tomllib.loads((CURRICULUM / "levels.toml").read_text(encoding="utf-8"))[stem]["difficulty"]


def test_every_puzzle_has_a_row():
    assert sorted(table()) == [s[:2] for s in STEMS]


@pytest.mark.parametrize("number", [s[:2] for s in STEMS])
def test_the_readme_row_says_what_not_how(number):
    cell = table()[number]
    assert recipes(cell) == [], f"README row {number} states a construction: {cell!r}"


@pytest.mark.parametrize("stem", [s for s in STEMS if s not in OPENERS])
def test_the_worksheet_says_what_not_how(stem):
    assert recipes(worksheet(stem)) == [], f"{stem}'s worksheet states a construction (a hint's job)"


@pytest.mark.parametrize("stem", [s for s in STEMS if s not in OPENERS])
def test_no_answer_size_beyond_one_star(stem):
    if stars(stem) == 1:
        pytest.skip("a first try may say how much to write")
    said = re.findall(SIZES, worksheet(stem) + stub_block(stem))
    assert said == [], f"{stem} (★★ or more) gives its answer's size: {said}"


def test_each_recipe_is_caught():
    """Every pattern finds the phrase it was derived from (a pattern that matches nothing would pass all)."""
    for pattern, phrase in RECIPES.items():
        assert re.search(pattern, phrase, flags=re.IGNORECASE), (pattern, phrase)
    assert re.search(SIZES, 'W_K = FILL_ME_IN("roughly 16 non-zero entries")')
    assert re.search(SIZES, "d_head of your choice (5 is enough)")
    assert not re.search(SIZES, 'W_K = FILL_ME_IN("(d_head, 17)")')


def test_the_giveaways_name_shipped_puzzles():
    assert set(GIVEAWAYS) | set(ANSWERS) <= set(STEMS)


@pytest.mark.parametrize("stem", sorted(GIVEAWAYS))
def test_no_transcribed_construction_in_the_worksheet_or_stub(stem):
    said = giveaways(stem, worksheet(stem) + "\n" + stub_block(stem) + "\n" + table()[stem[:2]])
    assert said == [], f"{stem}'s worksheet, stub or README row states its construction: {said}"


@pytest.mark.parametrize("stem", [s for s in STEMS if s not in OPENERS and stars(s) >= 2])
def test_the_first_hint_is_a_nudge(stem):
    """Level 1 of a ★★/★★★ ladder is short of the construction: none of its recipes or transcribed sentences."""
    first = hints(stem)[0]
    said = recipes(first) + giveaways(stem, first)
    assert said == [], f"{stem}'s first hint states the construction: {said}"


@pytest.mark.parametrize("stem", sorted(ANSWERS))
def test_no_hint_is_the_answer(stem):
    said = [m for hint in hints(stem) for m in recipes(hint, ANSWERS[stem])]
    assert said == [], f"{stem}'s hint ladder ends in the answer: {said}"


def test_each_giveaway_is_caught():
    """Every pattern finds the sentence it was derived from (one that matches nothing would pass all)."""
    for table_ in (GIVEAWAYS, ANSWERS):
        for stem, patterns in table_.items():
            for pattern, phrase in patterns.items():
                assert re.search(pattern, " ".join(phrase.split()), flags=re.IGNORECASE), (stem, pattern, phrase)
