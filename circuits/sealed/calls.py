"""The code puzzle, graded without running the learner's functions here: record the calls, run them there, replay.

The grader asks each Code target's own `compare` which calls it makes on the checker's inputs
(`record`), the submission's process makes those calls and hands back their outputs as data,
and `replayed` gives `compare` an answer whose functions return those outputs. So the verdict
is the library's compare, on the library's inputs, in the grader's process.
"""

from __future__ import annotations

import json
import keyword
import types

from circuits.errors import CircuitError
from circuits.sealed import codec


class _Recorder:
    """A stand-in for a learner's function: notes the arguments it is called with, returns None."""

    def __init__(self, name: str, log: list):
        self.name, self.log = name, log

    def __call__(self, *args):
        self.log.append([self.name, codec.value(list(args))])


def record(target, inputs: list, names) -> list[list]:
    """For each input, the calls [name, args as data] its compare makes on the learner's functions."""
    batches = []
    for example in inputs:
        log: list = []
        answer = types.SimpleNamespace(**{n: _Recorder(n, log) for n in names})
        try:
            target.compare(answer, example)
        except Exception:  # noqa: BLE001 - compare may choke on None; the calls are recorded by then
            pass
        batches.append(log)
    return batches


def _key(name: str, args) -> str:
    return json.dumps([name, args], sort_keys=True)


class _Replayed:
    """The learner's function, as seen from here: the outputs its process handed back, looked up by input.
    (No __code__, so compare's report names the learner's line from the outcome, not this file.)"""

    def __init__(self, name: str, outcomes: dict):
        self.name, self.outcomes = name, outcomes

    def __call__(self, *args):
        key = _key(self.name, codec.value(list(args)))
        if key not in self.outcomes:
            raise CircuitError(
                f"grading: the check called {self.name} on an input the submission's process was not given"
            )
        outcome = self.outcomes[key]
        if "raised" in outcome:
            r = outcome["raised"]
            name = str(r.get("type", "Exception"))
            name = name if name.isidentifier() and not keyword.iskeyword(name) else "Exception"
            said = str(r.get("message", "")) + str(r.get("where", ""))
            raise type(name, (Exception,), {})(said)
        if "unreadable" in outcome:
            kind = str(outcome["unreadable"]).rpartition(" ")[2]
            return type(kind if kind.isidentifier() else "object", (), {})()
        return codec.to_value(outcome["value"])


def replayed(names, functions: dict, batches: list[list], outcomes: list[list]):
    """The answer compare sees: each name a _Replayed (or the library's own function, if that is what was handed in)."""
    from circuits.checking.reference import LIBRARY

    table: dict[str, dict] = {n: {} for n in names}
    for batch, results in zip(batches, outcomes):
        for (name, args), result in zip(batch, results):
            if name in table and isinstance(result, dict):
                table[name][_key(name, args)] = result
    answer = {}
    for n in names:
        if functions.get(n, {}).get("library"):
            answer[n] = next((f for f in LIBRARY if f.__name__ == n), next(iter(LIBRARY)))
        else:
            answer[n] = _Replayed(n, table[n])
    return types.SimpleNamespace(**answer, params={})
