"""The one error type circuits raises for a user's mistake, and its warning."""


class CircuitError(ValueError):
    """A mistake in a user's weights, inputs or puzzle file, said in one line.

    The message names the culprit (which matrix, which head, which token or
    symbol) and, for shapes, both the shape it has and the shape it needs.
    """

    def __init__(self, message: str):
        super().__init__(" ".join(str(message).split("\n")))

    def within(self, context: str) -> "CircuitError":
        """The same error with `context` (a puzzle, a file) put in front."""
        err = CircuitError(f"{context}: {self}")
        err.__cause__ = self.__cause__
        return err


class CircuitWarning(UserWarning):
    """Something that runs but is probably not what was meant."""
