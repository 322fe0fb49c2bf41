"""Puzzles are stated by behaviour (issue 37, item 1): what the model must do, never how.

The README's puzzle table and every worksheet past the openers (00, 01) say what each model must do; the
construction lives in the hint ladder (circuits/curriculum/hints.toml). The phrases below are the recipes
that were once in the table, the worksheets and the stubs ("the OV circuit is one rotation by 36°", "its
W_in row the key … with a threshold", "query reads the prediction", "K-composition on its dup flag",
"tracr's small position term"), and the answer sizes that gave a design away: `FILL_ME_IN("roughly N
non-zero entries")` or "(N is enough)" are for one-star puzzles only; from two stars on, a stub gives the
shape. The test reads the files beside it as text (no import of the curriculum), so it can be pointed at an
older checkout by copying it there.
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
# an answer's size: only a one-star stub may say it
SIZES = r"\broughly \d+(–\d+)? non-zero entr|\(\d+ is enough\)"


def recipes(text: str) -> list[str]:
    flat = " ".join(text.split())
    return [m.group(0) for pattern in RECIPES if (m := re.search(pattern, flat, flags=re.IGNORECASE))]


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
