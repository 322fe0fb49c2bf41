"""docs/adding_a_target_kind.md shows real code: every file it names exists, each excerpt is in the file it names
(lines elided with "…" aside), a new kind touches at most five files, and the error it quotes is the one raised."""

import re

import pytest
from helpers import ROOT

PAGE = ROOT / "docs" / "adding_a_target_kind.md"
EXCERPT = re.compile(r"^`([^`]+)`:\n```python\n(.*?)^```$", re.M | re.S)


def excerpts(text: str) -> list[tuple[str, str]]:
    """(path, code) for each fenced block the page heads with its file, as "`path`:"."""
    return EXCERPT.findall(text)


def missing(path: str, code: str) -> list[str]:
    """The pieces of `code` (split where the page elides lines with "…") not found, in order, in the file `path`."""
    source = (ROOT / path).read_text(encoding="utf-8")
    found, at = [], 0
    for piece in re.split(r"^…\n", code, flags=re.M):
        i = source.find(piece, at)
        if i < 0:
            found.append(piece.strip().splitlines()[0])
        else:
            at = i + len(piece)
    return found


def test_every_excerpt_is_in_the_file_it_names():
    shown = excerpts(PAGE.read_text(encoding="utf-8"))
    assert len(shown) >= 6
    assert {p: missing(p, code) for p, code in shown if missing(p, code)} == {}


def test_the_excerpt_rule_catches_a_changed_line():
    code = "@words.register\ndef _(f: ValueRows) -> str:\n    return f'a value of {f.shape[0]} rows'\n"
    assert missing("circuits/explain/width.py", code) == ["@words.register"]
    assert missing("circuits/explain/width.py", "@words.register\n…\ndef _(f: ValueRows) -> str:\n") == []


def test_a_new_kind_touches_at_most_five_files_and_each_exists():
    rows = re.findall(r"^\| (\d) \| `([^`]+)` \|", PAGE.read_text(encoding="utf-8"), re.M)
    assert [n for n, _ in rows] == ["1", "2", "3", "4", "5"]
    assert [p for _, p in rows if not (ROOT / p).is_file()] == []
    named = set(re.findall(r"`((?:circuits|tests|docs)/[\w/]+\.(?:py|md))`", PAGE.read_text(encoding="utf-8")))
    assert [p for p in sorted(named) if not (ROOT / p).is_file()] == []


def test_the_error_the_page_quotes_is_the_one_a_fact_without_words_raises():
    from circuits import explain

    quoted = re.search(r"`TypeError: (no words for a ValueRows[^`]*)`", PAGE.read_text(encoding="utf-8")).group(1)
    unsaid = type("ValueRows", (), {})  # a fact of that name that no module has given words
    with pytest.raises(TypeError) as raised:
        explain.words(unsaid())
    assert str(raised.value) == quoted


def test_the_page_is_linked_from_the_readme_and_the_authoring_guide():
    assert "docs/adding_a_target_kind.md" in (ROOT / "README.md").read_text(encoding="utf-8")
    assert "(adding_a_target_kind.md)" in (ROOT / "docs" / "authoring.md").read_text(encoding="utf-8")
