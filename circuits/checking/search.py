"""The property test's search: hypothesis.find over a puzzle's input strategy, and the list of inputs it tries while
nothing fails (the same for every answer, since find is derandomized: drawn once per puzzle, kept on disk)."""

from __future__ import annotations

import contextlib
import tempfile
import threading

from circuits.checking.evaluation import evaluate
from circuits.targets import Tokens


@contextlib.contextmanager
def hypothesis_stores_nothing_here():
    """hypothesis as a check runs it: its constants cache (./.hypothesis) in a temporary folder, so checking writes
    nothing; and its draws independent of the source on this machine (own_constants_only)."""
    from hypothesis import configuration

    old = vars(configuration).get("__hypothesis_home_directory")
    with tempfile.TemporaryDirectory(prefix="circuits-hypothesis-") as tmp, own_constants_only():
        configuration.set_hypothesis_home_dir(tmp)
        try:
            yield
        finally:
            configuration.set_hypothesis_home_dir(old)


_PINNED: dict = {"depth": 0, "saved": None, "ours": None}
_PINNING = threading.Lock()


@contextlib.contextmanager
def own_constants_only():
    """hypothesis (6.131 on) sometimes draws a constant found in the source of the "local" modules this process has
    imported: circuits itself where it is installed editable, the references a command loaded. So which inputs the
    property test tried depended on circuits' source and on the entry point, and the first search in each process
    parsed every such module (~0.3 s). Within this context hypothesis draws only its own built-in constants, kept in
    a cache of their own; outside it, nothing changes (a learner's own hypothesis tests keep theirs)."""
    from hypothesis.internal.conjecture import providers

    if not callable(getattr(providers, "_get_local_constants", None)) or not hasattr(providers, "CONSTANTS_CACHE"):
        yield  # a hypothesis without local constants: nothing to pin
        return
    with _PINNING:
        if _PINNED["depth"] == 0:
            _PINNED["saved"] = (providers._get_local_constants, providers.CONSTANTS_CACHE)
            if _PINNED["ours"] is None:  # the permitted constants per kind of choice, hypothesis's alone
                _PINNED["ours"] = type(providers.CONSTANTS_CACHE)(providers.CONSTANTS_CACHE.max_size)
            none = providers.Constants()
            providers._get_local_constants, providers.CONSTANTS_CACHE = (lambda: none), _PINNED["ours"]
        _PINNED["depth"] += 1
    try:
        yield
    finally:
        with _PINNING:
            _PINNED["depth"] -= 1
            if _PINNED["depth"] == 0:
                providers._get_local_constants, providers.CONSTANTS_CACHE = _PINNED["saved"]


def property_test(
    model, targets, open_idx, strategy, n_examples, inputs=None, kept: str | None = None
) -> dict[int, Tokens]:
    """hypothesis.find over the inputs' strategy (None: `inputs.strategy()`, made only if needed); returns
    {target index: minimal failing input}. `kept` names the list of inputs tried kept on disk (drawn.py)."""
    found: dict[int, Tokens] = {}
    remaining = list(open_idx)
    if inputs is not None:
        tried = examples_tried(inputs, n_examples, kept)
        if tried is not None and evaluate(model, [targets[i] for i in remaining], tried)[0].all():
            return found  # the verdict find would give, without hypothesis or a forward pass per example
    from hypothesis import find
    from hypothesis.errors import NoSuchExample, Unsatisfiable

    strategy = inputs.strategy() if strategy is None else strategy
    cfg = _settings(n_examples)
    if inputs is None:
        tried = _examples_tried(strategy, cfg)
        if tried is not None and evaluate(model, [targets[i] for i in remaining], tried)[0].all():
            return found
    while remaining:
        targets_now = [targets[i] for i in remaining]

        def fails(s: Tokens) -> bool:
            return bool(s) and not evaluate(model, targets_now, [list(s)])[0].all()

        try:
            with hypothesis_stores_nothing_here():
                example = list(find(strategy, fails, settings=cfg))
        except (NoSuchExample, Unsatisfiable):
            return found
        ok = evaluate(model, targets_now, [example])[0][:, 0]
        for i, good in zip(list(remaining), ok):
            if not good:
                found[i] = example
                remaining.remove(i)
    return found


_TRIED: dict[tuple[int, int], tuple[object, list[Tokens] | None]] = {}
_TRIED_KEPT = 64  # puzzles' lists kept; `watch` reloads a file (new Inputs) at each save


def examples_tried(inputs, n_examples: int, on_disk: str | None = None) -> list[Tokens] | None:
    """What the property test tries on `inputs` while nothing fails (as _examples_tried): the same list for every
    answer, since find is derandomized, so it is drawn once per Inputs and size, not once per check; and, where
    `on_disk` names it (drawn.key), once per machine."""
    from circuits.checking import drawn

    key = (id(inputs), n_examples)
    kept = _TRIED.get(key)
    if kept is None or kept[0] is not inputs:
        tried = drawn.load(on_disk)
        if tried is None:
            cfg = _settings(n_examples)
            tried = _examples_tried(inputs.strategy(), cfg)
            if tried is not None:
                drawn.store(on_disk, tried)
        if len(_TRIED) >= _TRIED_KEPT:
            _TRIED.pop(next(iter(_TRIED)))
        kept = _TRIED[key] = (inputs, tried)  # holds inputs: its id stays its own
    return kept[1]


def drawn_key(attempt, inputs, n_examples: int) -> str | None:
    """The name of this puzzle's property-test inputs on disk: its statement's file (the reference for a shipped
    or course puzzle, else the file itself) is part of it, since the strategy is code in that file."""
    from circuits.checking import drawn
    from circuits.checking.loader import statement_file

    try:
        source = (statement_file(attempt) or attempt.path).read_bytes()
    except (OSError, TypeError):
        return None
    return drawn.key(attempt.puzzle.id, inputs, n_examples, source)


def _examples_tried(strategy, cfg) -> list[Tokens] | None:
    """The inputs hypothesis.find tries when none of them fails, in order (derandomized, so the same each time:
    find sees the same outcomes, so it draws the same inputs). None: the strategy could not make enough."""
    from hypothesis import find
    from hypothesis.errors import NoSuchExample, Unsatisfiable

    tried: list[Tokens] = []

    def record(s) -> bool:
        tried.append(list(s))
        return False

    try:
        with hypothesis_stores_nothing_here():
            find(strategy, record, settings=cfg)
    except NoSuchExample:
        return [s for s in tried if s]  # find's condition skips the empty input
    except Unsatisfiable:
        return None
    return None


def _settings(n_examples: int):
    """The property test's hypothesis settings: n_examples, derandomized, no database, no deadline, no health checks."""
    from hypothesis import HealthCheck, Phase, settings

    return settings(
        max_examples=n_examples,
        derandomize=True,
        database=None,
        deadline=None,
        phases=[Phase.generate, Phase.shrink],
        suppress_health_check=list(HealthCheck),
    )
