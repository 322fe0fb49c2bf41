"""circuits/pytest_plugin.py: what an xdist worker sends of a result is its `to_dict` and the parts of its file the
summary reads; the controller rebuilds a result that the summary says in the same words. (The plugin end to end,
through pytester, is in tests/test_plugin.py and tests/test_plugin_habits.py.)"""

import json

from circuits.checking.results import PuzzleResult
from circuits.display import words
from circuits.display.render import to_text
from circuits.display.report import summary_table
from circuits.errors import CircuitError
from circuits.pytest_plugin import _received, _sent


def test_an_unloaded_file_crosses_as_plain_data_and_reads_the_same():
    r = PuzzleResult.unloaded("puzzles/07_x.py", CircuitError("puzzles/07_x.py: line 3: invalid syntax"))
    sent = json.loads(json.dumps(_sent("puzzles/07_x.py::07_x", r)))
    assert sent["result"] == r.to_dict() and sent["path"] is None
    back = _received(sent)
    assert back.attempt is None and words.said(back) == words.said(r)
    assert to_text(summary_table([back]), width=100) == to_text(summary_table([r]), width=100)
