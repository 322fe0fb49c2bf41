"""display/render.py: plain text from rich renderables, as pytest reports, grading and the tests read it."""

from rich.table import Table
from rich.text import Text

from circuits.display.render import to_text


def test_to_text_wraps_at_the_width_and_leaves_no_trailing_space():
    """A report wrapped at 80 columns (a Gradescope output, a grading report) has no space left where it broke."""
    line = "41_first_vowel · Attend to the first vowel seen so far, or to BOS when there is none · failing"
    text = to_text(Text(line), width=80)
    lines = text.splitlines()
    assert len(lines) == 2 and all(len(x) <= 80 for x in lines)
    assert all(x == x.rstrip() for x in lines), [x for x in lines if x != x.rstrip()]
    assert " ".join(lines) == line


def test_to_text_has_no_colour_codes_and_keeps_a_tables_cells():
    table = Table("key", "mass")
    table.add_row("0 '<bos>'", "0.500")
    text = to_text(table, width=40)
    assert "\x1b[" not in text and "0 '<bos>'" in text and "0.500" in text
    assert all(x == x.rstrip() for x in text.splitlines())
