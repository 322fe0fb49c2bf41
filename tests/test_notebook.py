"""Notebooks: results render as HTML and plain text; an answer given as values is checked against the shipped puzzle;
a big trace's rendering is capped; and (with the notebook extra) a notebook runs headless with nbclient."""

from __future__ import annotations

import importlib.util
import re
from html.parser import HTMLParser

import numpy as np
import pytest

import circuits
from circuits import CircuitError, Head, Layer, Model, Vocab
from circuits.checking.curriculum import reference_file
from circuits.checking.loader import load
from circuits.display.html import MAX_CELLS

WRONG_01 = {"W_Q": [[1, 1]], "W_K": [[0, 5]], "W_V": [[1, 0], [0, 1]]}  # aimed right, not sharp enough


def pretty(obj) -> str:
    """What IPython's pretty printer shows of `obj` (its _repr_pretty_), without needing IPython."""

    class Printer:
        parts: list = []

        def text(self, s):
            self.parts.append(s)

    printer = Printer()
    printer.parts = []
    obj._repr_pretty_(printer, False)
    return "".join(printer.parts)


def reference_values(stem: str, **changed) -> dict:
    attempt = load(reference_file(stem))
    values = {name: getattr(attempt.answer, name) for name in [*attempt.puzzle.answer, "params"]}
    return values | changed


class Text(HTMLParser):
    """The visible text of an HTML fragment (no styles, no scripts)."""

    def __init__(self):
        super().__init__()
        self.parts, self.skip = [], 0

    def handle_starttag(self, tag, attrs):
        self.skip += tag in ("style", "script")

    def handle_endtag(self, tag):
        self.skip -= tag in ("style", "script")

    def handle_data(self, data):
        if not self.skip:
            self.parts.append(data)


def visible(html: str) -> str:
    p = Text()
    p.feed(html)
    return " ".join(" ".join(p.parts).split())


@pytest.fixture(scope="module")
def failing():
    return circuits.check("consonants", **WRONG_01)


@pytest.fixture(scope="module")
def solved():
    return circuits.check("01_consonants", **reference_values("01_consonants"))


def test_a_wrong_answer_given_as_values_fails_with_the_whole_report(failing):
    assert failing.status == "failing"
    html = failing._repr_html_()
    text = visible(html)
    assert "01_consonants · Consonant detection · failing" in text
    assert re.search(r"✗ head 0\.0's result is .*: fails on 'aaaaaaaaaaaaaaaaab' \(18 tokens\): at position 17", text)
    assert "shortest failing input: 'aaaaaaaaaaaaaaaaab' (18 tokens)" in text
    assert "yours vs expected, per position:" in text and "[0.103, 0.897]" in text
    assert "attention of head 0.0" in text and 'class="cv-pat"' in html  # the heatmap, as a table of cells
    assert "hint: attention is aimed right but not sharp enough" in text and "puzzle hint 1 of 3" in text
    assert 'class="cv-worst"' in html  # the failing row stands out
    assert "checked on:" in text
    assert "\x1b[" not in html and "http" not in html  # no terminal colours, nothing fetched


def test_the_reference_values_solve_it_with_margins(solved):
    assert solved.status == "solved"
    text = visible(solved._repr_html_())
    assert "· solved" in text and text.count("✓") == len(solved.targets)
    assert "checked on:" in text and "margins: holds" in text and "✗" not in text


def test_plain_text_is_the_terminal_report_without_colour(failing, solved):
    shown = pretty(failing)
    assert shown.startswith("01_consonants · Consonant detection · failing")
    assert "shortest failing input: 'aaaaaaaaaaaaaaaaab'" in shown and "\x1b[" not in shown
    assert "PuzzleResult(" not in shown and len(shown) < 6000
    assert "margins: holds" in pretty(solved)


def test_the_reports_read_on_light_and_dark_themes(failing):
    """The card sets its own background and text colour, so a dark notebook theme does not hide dark text."""
    html = failing._repr_html_()
    root = re.search(r"\.cv-root \{([^}]*)\}", html)[1]
    assert "background: #fff" in root and "color: #111" in root


def test_an_attention_failure_outlines_the_expected_keys():
    result = circuits.check(4, **reference_values("04_previous_token", params={"s": 1}))
    assert result.status == "failing"
    html = result._repr_html_()
    assert "outlined = target key" in visible(html) and 'class="cv-mark"' in html


def test_answer_names_are_checked_in_one_line():
    with pytest.raises(CircuitError) as e:
        circuits.check("consonants", W_Q=[[1, 1]], W_X=[[0]])
    assert str(e.value) == (
        "circuits.check('01_consonants'): W_X is not part of the answer; it is W_Q, W_K, W_V (optional: params)"
    )
    with pytest.raises(CircuitError, match=r"^circuits.check\('01_consonants'\): give W_K, W_V too"):
        circuits.check("consonants", W_Q=[[1, 1]])
    with pytest.raises(CircuitError, match=r"no puzzle named 'consonant'; did you mean 'consonants'"):
        circuits.check("consonant", W_Q=[[1, 1]])
    wrong_shape = circuits.check("consonants", **{**WRONG_01, "W_Q": [[1, 1, 1]]})
    said = str(wrong_shape.error)  # the result holds the CircuitError as raised
    assert wrong_shape.status == "error" and "W_Q" in said and "(1, 3)" in said
    assert "\n" not in said


def test_hint_and_show():
    hints = circuits.hint("consonants", level=2)
    text = visible(hints._repr_html_())
    assert "hints 1 to 2 of 3" in text and "circuits.hint(1, level=3)" in text
    assert pretty(hints).startswith("hint 1 of 3:") and pretty(hints).endswith("more: circuits.hint(1, level=3)")
    with pytest.raises(CircuitError, match="has hints 1 to 3"):
        circuits.hint("consonants", level=4)
    trace = circuits.show("consonants", "abcab", **WRONG_01)
    np.testing.assert_allclose(trace.pattern(0, 0)[0].sum(-1), 1.0)
    assert "head 0.0" in visible(trace._repr_html_())


def test_analyze_renders_the_analysis():
    analysis = circuits.analyze("consonants", **reference_values("01_consonants"))
    text = visible(analysis._repr_html_())
    assert "attention patterns" in text and "circuits" in text and "W_QK" in text
    assert "head 0.0" in pretty(analysis)


def test_an_audit_renders_its_lines():
    from circuits.audit.author import AuthorAudit
    from circuits.audit.run import Audit

    audit = AuthorAudit("solutions/01_consonants.py", Audit("01_consonants", killed=["a", "b"], survived=["c"]))
    assert "mutants killed: 2/3" in visible(audit._repr_html_())
    assert pretty(audit).splitlines()[0] == "01_consonants · solutions/01_consonants.py"


# --- a big trace: the rendering is capped ---------------------------------------------------------------------
def big_model(n_layers=12, n_heads=12, d=16, n_vocab=50, n_ctx=128):
    """GPT-2's shape of heads and context, with small matrices: built here, nothing downloaded."""
    rng = np.random.default_rng(0)
    r = lambda *s: rng.normal(size=s)  # noqa: E731
    layers = [
        Layer(heads=[Head(W_Q=r(4, d), W_K=r(4, d), W_V=r(4, d), W_O=r(d, 4)) for _ in range(n_heads)])
        for _ in range(n_layers)
    ]
    return Model(
        Vocab.numbered(n_vocab), r(d, n_vocab), W_pos=r(d, n_ctx), layers=layers, W_U=r(n_vocab, d), name="big"
    )


@pytest.fixture(scope="module")
def big_trace():
    return big_model().run_ids(np.random.default_rng(1).integers(0, 50, size=(4, 128)))


def cells(html: str) -> int:
    return len(re.findall(r"<td[ >]", html))


def test_a_big_trace_renders_within_the_cap_and_says_what_it_left_out(big_trace):
    html = big_trace._repr_html_()
    assert cells(html) <= MAX_CELLS and len(html) < 8 * 2**20
    text = visible(html)
    heads = len(set(re.findall(r"\bhead \d+\.\d+\b", text)))  # the same heads for each input
    assert 1 <= heads < 144
    assert f"shown: {heads} of 144 heads (0.0 to " in text
    assert "the first 64 of 128 positions" in text and "circuits.patterns(trace, heads=[(layer, head), ...]" in text


def test_chosen_heads_are_shown_and_a_missing_head_is_named(big_trace):
    view = circuits.patterns(big_trace, heads=[(11, 3), (5, 0)], max_tokens=128, max_inputs=1)
    text = visible(view._repr_html_())
    assert re.findall(r"\bhead \d+\.\d+\b", text) == ["head 5.0", "head 11.3"]
    assert "positions" not in text and "1 of 4 inputs" in text
    with pytest.raises(CircuitError, match=r"^no head 12\.0 in big: it has layers 0 to 11"):
        circuits.patterns(big_trace, heads=[(12, 0)])


# --- a real notebook, headless -----------------------------------------------------------------------------------
NOTEBOOK = ["notebook" for name in ("nbclient", "nbformat", "ipykernel") if importlib.util.find_spec(name) is None]


@pytest.mark.skipif(bool(NOTEBOOK), reason="the notebook extra (nbclient, nbformat, ipykernel) is not installed")
def test_a_notebook_renders_the_report(tmp_path):
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("import circuits"),
        nbformat.v4.new_code_cell(f"circuits.check('consonants', **{WRONG_01!r})"),
        nbformat.v4.new_code_cell("circuits.hint('consonants')"),
    ]
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}).execute()
    [check_out] = nb.cells[1].outputs
    assert check_out.output_type == "execute_result"
    html, plain = check_out.data["text/html"], check_out.data["text/plain"]
    assert "01_consonants · Consonant detection · failing" in visible(html)
    assert "shortest failing input: 'aaaaaaaaaaaaaaaaab'" in visible(html) and 'class="cv-pat"' in html
    assert plain.startswith("01_consonants · Consonant detection · failing")
    assert "hint 1 of 3" in nb.cells[2].outputs[0].data["text/plain"]


def test_print_and_repr_of_a_result_are_the_compact_report():
    """Issue 37: `print(result)` dumped the whole dataclass (16.7k characters for 01), the near-answer hint included."""
    result = circuits.check("consonants", **WRONG_01)
    for said in (repr(result), str(result)):
        assert said.startswith("01_consonants · Consonant detection · failing"), said[:200]
        assert "PuzzleResult(" not in said and "Attempt(" not in said and len(said) < 6000
        assert "hint 2" not in said and all(len(line) <= 80 for line in said.splitlines())


def test_show_as_text_is_labelled_heatmaps_not_an_array_dump():
    trace = circuits.show("consonants", "abcab", **WRONG_01)
    for said in (repr(trace), str(trace), pretty(trace)):
        assert "head 0.0" in said and "query ↓ key →" in said, said
        assert "array(" not in said and "Trace(" not in said


def test_show_prints_what_each_mlp_writes_by_direction():
    """Issue 37: 26's hint advises `circuits show` for what the MLP writes into sum:cos and sum:sin."""
    from helpers import solution

    answer = solution("26_modular_addition").answer
    trace = circuits.show(
        "modular_addition", "12", W_in=answer.W_in, W_out=answer.W_out, W_U=answer.W_U, params=answer.params
    )
    said = str(trace)
    assert "the MLP of layer 0 writes" in said and "sum:cos" in said and "sum:sin" in said, said
    row = [line for line in said.splitlines() if line.strip().startswith("1 2")][
        -1
    ]  # the MLP's row, after the heatmap's
    assert "-0.8968" in row and "-0.5" in row, row  # cos(w·3) ≈ −0.809, approximated by the ReLUs
