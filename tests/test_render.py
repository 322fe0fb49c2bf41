"""display/render.py: plain text from rich renderables, as pytest reports, grading and the tests read it; numbers as
a learner reads them, and the composition table, which explains a virtual-head strength where the table has one."""

from rich.table import Table
from rich.text import Text

from circuits.analysis import Composed
from circuits.analysis.composition import VIRTUAL_MEANING
from circuits.display.render import composition_table, number_text, to_text


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


def test_numbers_print_short_and_whole_numbers_whole():
    assert [number_text(x) for x in (0, 0.0, 3.0, -2, 0.123456, "s")] == ["0", "0", "3", "-2", "0.1235", "s"]


def test_a_virtual_strength_brings_its_meaning():
    row = {"kind": Composed.K, "earlier": "0.0", "later": "1.0", "score": 0.9, "baseline": 0.1, "baseline_std": 0.05}
    row |= {"z": 16.0, "verdict": "above"}
    first_line = VIRTUAL_MEANING.splitlines()[0]
    assert first_line not in to_text(composition_table([row]), width=120)
    virtual = {**row, "kind": Composed.VIRTUAL}
    assert first_line in to_text(composition_table([row, virtual]), width=120)
    assert first_line in to_text(composition_table([{**virtual, "kind": "virtual"}]), width=120)  # read from JSON


def test_a_wrapped_line_ends_without_a_space_in_plain_and_colour_output():
    import io
    import re

    from circuits.display.render import console

    sentence = "head 0.0's result is [1, 0] before the first consonant and [0, 1] from it on (±0.1)"
    for color in (False, True):
        out = io.StringIO()
        printer = console(file=out, width=30, color=color)
        printer.print(sentence, style="yellow")
        lines = [re.sub(r"\x1b\[[0-9;]*m", "", line) for line in out.getvalue().splitlines()]
        assert len(lines) > 2 and [line for line in lines if line != line.rstrip()] == []
        assert " ".join(lines) == sentence  # only the spaces at the breaks went
        assert ("\x1b[" in out.getvalue()) is color and printer.file.isatty() is False  # the file's own answer
