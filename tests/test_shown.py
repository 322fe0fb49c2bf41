"""display/shown.py: `circuits show`'s view of one input: every head's heatmap, the attention targets' expected keys
marked on their head, then each other target's yours vs expected."""

from helpers import solution

from circuits.display.render import to_text
from circuits.display.shown import show_parts


def test_an_attention_target_is_marked_on_its_head_and_others_get_a_table():
    attempt = solution("11_copying_head")
    model, tokens = attempt.model(), list("abcde")
    trace = model.run([tokens])
    shown = [s for t in attempt.puzzle.targets if (s := t.shown(trace, tokens)) is not None]
    text = "".join(to_text(p, width=100) for p in show_parts(trace, shown))
    assert "head 0.0" in text and "yours vs expected" in text  # the next-token target's table
    attempt = solution("04_previous_token")
    trace = attempt.model().run([list("abcd")])
    shown = [t.shown(trace, list("abcd")) for t in attempt.puzzle.targets]
    text = "".join(to_text(p, width=100) for p in show_parts(trace, shown))
    assert "(* = expected key)" in text and "yours vs expected" not in text
