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


INTERRUPTED = "circuits: interrupted (Ctrl-C)"


def _interrupted_on_start(signum, frame) -> None:
    import os

    os.write(2, (INTERRUPTED + "\n").encode())
    os._exit(130)  # nothing is written yet: only imports were running


def quiet_interrupt_on_start() -> None:
    """In the `circuits` command only: Ctrl-C while the package is still being imported is the same one line and
    exit 130 as Ctrl-C during a command, not an import traceback (cli.main hands Ctrl-C back to Python once the
    command's own guard is in place). A library user's `import circuits` is left alone."""
    import os
    import signal
    import sys
    import threading

    argv = getattr(sys, "orig_argv", sys.argv)
    command = os.path.basename(sys.argv[0] if sys.argv else "").removesuffix(".exe") == "circuits" or any(
        a == "-m" and b in ("circuits.cli", "circuits") for a, b in zip(argv, argv[1:])
    )
    if (
        command
        and threading.current_thread() is threading.main_thread()
        and signal.getsignal(signal.SIGINT) is signal.default_int_handler
    ):
        signal.signal(signal.SIGINT, _interrupted_on_start)


def interrupts_as_usual() -> None:
    """Undo quiet_interrupt_on_start: Ctrl-C raises KeyboardInterrupt again, for the command's guard to report; and
    a Ctrl-C that lands where Python cannot raise it (a weakref callback of the import system, while the command
    imports what its verb needs) is delivered again, not printed as "Exception ignored" and lost."""
    import signal
    import sys

    if signal.getsignal(signal.SIGINT) is _interrupted_on_start:
        signal.signal(signal.SIGINT, signal.default_int_handler)
        if getattr(sys.unraisablehook, "__name__", "") != _ctrl_c_again.__name__:
            sys.unraisablehook = _ctrl_c_again(sys.unraisablehook)


def _ctrl_c_again(previous):
    """An unraisablehook that presses Ctrl-C again for a KeyboardInterrupt Python had to drop, and leaves every other
    unraisable exception to `previous`."""
    import threading

    def _ctrl_c_again(unraisable) -> None:
        if unraisable.exc_type is not None and issubclass(unraisable.exc_type, KeyboardInterrupt):
            # a moment later, from another thread: pressed here, it would be raised inside this hook, and dropped
            # again; where it lands in a callback again, this hook presses it once more
            again = threading.Timer(AGAIN_SECONDS, _interrupt_main)
            again.daemon = True
            again.start()
            return
        previous(unraisable)

    return _ctrl_c_again


AGAIN_SECONDS = 0.01


def _interrupt_main() -> None:
    """SIGINT to the main thread, as Ctrl-C sends it: its handler raises KeyboardInterrupt there, and a wait it is
    blocked in ends."""
    import signal
    import threading

    if hasattr(signal, "pthread_kill"):
        signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)
    else:
        import _thread

        _thread.interrupt_main()
