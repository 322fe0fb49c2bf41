"""targets/: what a puzzle checks, one module per kind; the package lists the public names puzzles import,
each a target class, a typed kind or a helper several kinds share."""

from circuits import targets


def test_every_public_name_is_there_and_the_kinds_are_typed():
    assert all(hasattr(targets, name) for name in targets.__all__)
    classes = [getattr(targets, n) for n in targets.__all__ if isinstance(getattr(targets, n), type)]
    kinds = {c.kind for c in classes if issubclass(c, targets.Target) and isinstance(c.__dict__.get("kind"), str)}
    assert kinds <= set(targets.Kind) and targets.Kind.BEHAVIOUR in kinds
    assert {"Kind", "Shows"} <= set(targets.__all__)
