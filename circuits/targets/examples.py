"""A puzzle's fixed inputs: its worked examples and its families' extremes (the checker's plan checks them
first; a mechanism target draws its pairs from them)."""


def worked_examples(puzzle) -> list[list[str]]:
    """The puzzle's worked examples as token lists: a string is split into characters when every token is one
    character, else at spaces."""
    chars = puzzle.inputs is not None and all(len(a) == 1 for a in puzzle.inputs.alphabet)
    return [
        list(e) if isinstance(e, str) and chars else (e.split() if isinstance(e, str) else list(e))
        for e in puzzle.examples
    ]


def extremes(inputs) -> list[list[str]]:
    """The extreme inputs of the families that have them (the longest runs, the deepest nesting)."""
    return [x for f in inputs.families if hasattr(f, "extremes") for x in f.extremes(inputs.min_len, inputs.max_len)]
