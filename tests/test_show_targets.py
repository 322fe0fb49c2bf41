"""`circuits show` shows every target a puzzle checks: each head's pattern with * on the expected keys, each readout."""

import json

from circuits.cli import main


def show(capsys, *args):
    import os

    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "200"  # whole sentences on one line, so they can be searched for
    try:
        assert main(["show", *args, "--solution"]) == 0
    finally:
        os.environ.pop("COLUMNS") if old is None else os.environ.__setitem__("COLUMNS", old)
    return capsys.readouterr().out


def test_04_shows_both_heads_with_their_expected_keys(capsys):
    out = show(capsys, "04", "abcab")
    assert "head 0.0 — head 0.0 puts ≥ 0.9 of its attention on its own position (* = expected key)" in out
    assert "head 0.1 — head 0.1 puts ≥ 0.9 of its attention on the previous position (* = expected key)" in out
    previous = out[out.index("head 0.1 —") :]
    assert "1 b 1.*   0" in previous  # query 1 expects key 0


def test_06_marks_every_key_of_an_even_split(capsys):
    out = show(capsys, "06", "abcab")
    assert "3 a .50*    0   0 .50*" in out  # (a): query 3 'a' expects keys 0 and 3
    for part in "abcdef":
        assert f"({part}) head" in out
    assert "(e) head 0.3 writes nothing outside v:0 … v:7" in out


def test_08_shows_the_second_half_and_the_induction_head(capsys):
    out = show(capsys, "08", "abcabc")
    assert "head 1.0 — head 1.0 puts ≥ 0.9 of its attention right after an earlier copy" in out
    assert "first half:" in out and "second half:" in out


def test_json_lists_every_target(capsys):
    data = json.loads(show(capsys, "08", "abcabc", "--json"))
    assert [t["kind"] for t in data["targets"]] == ["attention", "next-token", "next-token"]
    head = data["targets"][0]
    assert head["head"] == [1, 0] and len(head["expected"]) == len(data["tokens"])
    assert data["targets"][2]["expected"][4:6] == ["b", "c"]  # the second half: what followed last time
    data = json.loads(show(capsys, "04", "abc", "--json"))
    assert [t["head"] for t in data["targets"]] == [[0, 0], [0, 1]]
    assert data["targets"][1]["expected"] == [None, [0], [1]]  # query 0 has no previous position
    assert data["expected"] == [0, 1, 2]  # the first target alone, as before
