"""Offline HTML: self-contained, no web address anywhere, every head's pattern with hover values and token labels."""

import re
from html.parser import HTMLParser

import numpy as np
import pytest
from test_analysis import induction_model, random_model, virtual_head_model

from circuits import CircuitError, Head, Model, Vocab
from circuits import analysis as A
from circuits.display.html import analysis_html, matrix_html, trace_html, write_html


class Tables(HTMLParser):
    """Collects every pattern table: its head, and its cells' values and hover titles by row."""

    def __init__(self, cls="cv-pat"):
        super().__init__()
        self.cls, self.tables, self.current, self.tags = cls, [], None, []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.tags.append(tag)
        if tag == "table" and self.cls in (a.get("class") or "").split():
            self.current = {"head": a.get("data-head"), "rows": [], "titles": []}
            self.tables.append(self.current)
        elif self.current is not None and tag == "tr":
            self.current["rows"].append([])
            self.current["titles"].append([])
        elif self.current is not None and tag == "td":
            self.current["rows"][-1].append(float(a["data-v"]) if "data-v" in a else 0.0)
            self.current["titles"][-1].append(a.get("title"))

    def handle_endtag(self, tag):
        if tag == "table":
            self.current = None


def tables(text, cls="cv-pat"):
    p = Tables(cls)
    p.feed(text)
    return p.tables


def no_web_address(text):
    return re.search(r"https?://", text, flags=re.IGNORECASE) is None


def test_the_page_holds_every_heads_pattern_with_its_values():
    model = random_model(5, n_heads=(2, 3))
    trace = model.run_ids(np.random.default_rng(0).integers(0, 7, size=(2, 6)))
    found = tables(trace_html(trace))
    assert [t["head"] for t in found] == ["head 0.0", "head 0.1", "head 1.0", "head 1.1", "head 1.2"] * 2
    for n in range(2):
        for t, h in zip(found[5 * n : 5 * n + 5], model.heads()):
            values = np.array([row for row in t["rows"] if row])  # [query, key]; the header row has no cells
            np.testing.assert_allclose(values, trace.pattern(h.layer, h.index)[n], rtol=1e-5, atol=1e-7)


def test_hover_gives_the_value_and_the_query_and_key_tokens():
    trace = induction_model().run("abcab")
    t = tables(trace_html(trace))[0]
    title = t["titles"][2][0]  # row 2 is query 1 (row 0 is the header)
    assert re.fullmatch(r"query 1 'b' → key 0 'a': 0\.99\d\d", title)


def test_padded_inputs_show_only_their_own_tokens():
    trace = induction_model().run(["abcab", "ab"])
    found = tables(trace_html(trace))
    assert [len([r for r in t["rows"] if r]) for t in found] == [5, 5, 2, 2]


def test_no_web_address_even_when_a_token_is_one():
    vocab = Vocab(["https://a.example", "http://b", "c/d"])
    model = Model(
        vocab,
        np.eye(3),
        layers=[[Head(W_Q=np.eye(3), W_K=np.eye(3), W_V=np.eye(3), W_O=np.eye(3))]],
        W_U=np.eye(3),
        name="http://model",
    )
    trace = model.run([["https://a.example", "http://b", "c/d"]])
    for text in (trace_html(trace), trace_html(trace, standalone=False), analysis_html(model, trace)):
        assert no_web_address(text)
        assert "https&#58;" not in text and "https:&#47;&#47;a.example" in text  # escaped, still readable


def test_the_page_is_self_contained():
    page = analysis_html(induction_model())
    assert page.startswith("<!DOCTYPE html>") and no_web_address(page)
    for outside in ("<link", " src=", "@import", "url(", "xmlns", "cdn"):
        assert outside not in page.lower()
    assert "<style>" in page and "<script>" in page


def test_the_web_address_check_rejects_a_page_with_one():
    assert not no_web_address('<svg xmlns="http://www.w3.org/2000/svg"></svg>')
    assert not no_web_address("<script src='HTTPS://cdn.example/x.js'></script>")


def test_jupyter_fragment():
    trace = virtual_head_model().run("abcd")
    fragment = trace._repr_html_()
    assert fragment.startswith('<div class="cv-root">') and "<html" not in fragment and "<!DOCTYPE" not in fragment
    assert len(tables(fragment)) == 2 and no_web_address(fragment)


def test_analysis_page_holds_patterns_and_circuit_tables():
    model = induction_model()
    page = analysis_html(model)
    assert len(tables(page)) == 2  # one input, two heads
    mats = tables(page, "cv-mat")
    # head 0.0: W_QK, W_OV, position table (token table and full OV are all zero); head 1.0: W_QK, W_OV, full OV
    assert len(mats) >= 5
    for needle in (
        "W_QK (exact)",
        "position QK table",
        "full OV circuit",
        "random baseline",
        "peaks at i-1",
        "0.0 → 1.0",
        "prev:0",
    ):
        assert needle in page, needle
    s = A.analyze(model)
    full = next(m for m in mats if m["titles"][1][0].startswith("output"))
    assert full["titles"][1][0] == "output a, attended a: 1" and full["rows"][1] == [1.0, 0, 0, 0, 0, 0]
    assert s["heads"][1]["full_ov"]["values"][0][0] == 1.0


def test_matrix_html_drops_zero_rows_and_marks_peaks():
    text = matrix_html([[0, 0, 0], [0, 2, -1], [0, 0, 0]], ["a", "b", "c"], ["x", "y", "z"], "m")
    [t] = tables(text, "cv-mat")
    assert [r for r in t["rows"] if r] == [[2.0, -1.0]]
    assert 'class="cv-peak"' in text and "2 row(s), 1 column(s) not shown" in text


def test_write_html(tmp_path):
    model = virtual_head_model()
    trace = model.run("abcdef")
    assert write_html(tmp_path / "t.html", trace=trace).read_text() == trace_html(trace)
    page = write_html(tmp_path / "a.html", model=model).read_text()
    assert "virtual heads" in page and no_web_address(page)
    with pytest.raises(CircuitError, match="write_html needs a model or a trace"):
        write_html(tmp_path / "x.html")
