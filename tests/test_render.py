"""display/render.py: rich renderables for the reports; numbers as a learner reads them, and the composition table,
which explains a virtual-head strength where the table has one."""

from circuits.analysis import Composed
from circuits.analysis.composition import VIRTUAL_MEANING
from circuits.display.render import composition_table, number_text, to_text


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
