"""display/json.py: `--json` takes its facts from the result's own `to_dict` and adds the words (messages, the
failure's summary and hint) on top; kinds print as their names."""

import copy
import json

from helpers import solution

from circuits.audit.mutants import mutants
from circuits.display import words
from circuits.display.json import result_json
from circuits.explain import check


def failing():
    attempt = solution("01_consonants")
    for m in mutants(attempt):
        trial = copy.copy(attempt)
        trial.answer = m.answer
        if (r := check(trial, n_random=100, property_examples=0, margins=False)).status == "failing":
            return r
    raise AssertionError("no mutant of 01 fails")


def test_the_facts_are_the_results_and_the_words_are_added():
    r = failing()
    out, facts = result_json(r), r.to_dict()
    assert (out["puzzle"], out["status"]) == (facts["puzzle"], facts["status"])
    for row, t, d in zip(out["targets"], r.targets, facts["targets"]):
        assert {k: row[k] for k in ("label", "kind", "status", "checked", "worst")} == {
            k: d[k] for k in ("label", "kind", "status", "checked", "worst")
        }
        assert row["message"] == (words.said(t) or None)
    failed = next(row for row in out["targets"] if row["status"] == "failed")
    assert failed["failure"]["summary"] and failed["failure"]["input"]  # words and the shrunk input, not in to_dict
    assert out["coverage"]["lengths"] == facts["coverage"]["lengths"]
    assert '"kind": "behaviour"' in json.dumps(out)
