"""circuits: build transformer circuits by hand and check them.

One public surface: a puzzle file imports everything it needs from here — the vocabulary and named
bases, the model parts, position helpers, `functional`, and the puzzle, its targets and inputs
(re-exported from `circuits.checking`).

Layers (imports run down this list only; tests/test_layers.py holds it):
errors -> model -> io -> checking -> analysis -> display -> grading -> cli / pytest_plugin -> __main__.
"""

from circuits.errors import quiet_interrupt_on_start

quiet_interrupt_on_start()  # only in the `circuits` command: Ctrl-C during these imports is one line, not a traceback

import importlib  # noqa: E402
import importlib.abc  # noqa: E402
import importlib.util  # noqa: E402
import sys  # noqa: E402

from circuits.errors import CircuitError, CircuitWarning  # noqa: E402

# The public names and the module each comes from, imported on first use (PEP 562): `import circuits.cli` stays
# cheap (the `circuits` command imports what its verb needs), and `from circuits import Puzzle` works as before.
_CHECKING = "FILL_ME_IN Copies HeadOutput HeadZ Inputs Puzzle Repeated Residual Runs Target Uniform reference"
_KINDS = "circuits.targets."  # the kinds of target, each from its own module: a new kind adds its line
_FROM = {
    **dict.fromkeys(_CHECKING.split(), "circuits.checking"),
    "Attention": _KINDS + "attention",
    "Code": _KINDS + "code",
    "Depends": _KINDS + "depends",
    **dict.fromkeys(("MLPOut", "MLPOutput"), _KINDS + "mlp"),
    "NextToken": _KINDS + "next_token",
    "Output": _KINDS + "output",
    "OVCircuit": _KINDS + "ov",
    "PatchedMLP": _KINDS + "patched",
    "Structure": _KINDS + "structure",
    **dict.fromkeys(("MLPWidth", "ValueWidth"), _KINDS + "width"),
    **dict.fromkeys(("Basis", "NamedMatrix", "blank", "labelled", "names"), "circuits.model.basis"),
    **dict.fromkeys(("one_hot_positions", "rotation", "sinusoidal", "sinusoidal_names"), "circuits.model.positions"),
    **dict.fromkeys(("LayerTrace", "Trace"), "circuits.model.trace"),
    **dict.fromkeys(("MLP", "Head", "HeadWeights", "Layer", "LayerNorm", "Model"), "circuits.model.transformer"),
    "Vocab": "circuits.model.vocab",
    "functional": "circuits.model",
}


def __getattr__(name: str):
    """A public name (or a subpackage, `circuits.checking`), imported the first time it is asked for."""
    if name in _FROM:
        value = getattr(importlib.import_module(_FROM[name]), name)
    elif not name.startswith("_") and importlib.util.find_spec(f"{__name__}.{name}") is not None:
        value = importlib.import_module(f"{__name__}.{name}")
    else:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


__all__ = [
    "Basis",
    "NamedMatrix",
    "blank",
    "labelled",
    "names",
    "CircuitError",
    "CircuitWarning",
    "MLP",
    "Head",
    "HeadWeights",
    "Layer",
    "LayerNorm",
    "Model",
    "one_hot_positions",
    "rotation",
    "sinusoidal",
    "sinusoidal_names",
    "LayerTrace",
    "Trace",
    "Vocab",
    "functional",
    # the puzzle API (circuits.checking)
    "FILL_ME_IN",
    "Puzzle",
    "Inputs",
    "Copies",
    "Repeated",
    "Runs",
    "Uniform",
    "reference",
    "Attention",
    "Code",
    "Depends",
    "HeadOutput",
    "HeadZ",
    "MLPOut",
    "MLPOutput",
    "MLPWidth",
    "ValueWidth",
    "NextToken",
    "Output",
    "OVCircuit",
    "PatchedMLP",
    "Residual",
    "Structure",
    "Target",
]
__version__ = "0.1.0"


# --- notebooks: an answer given as values, and results that render as HTML ---------------------------------
# Reports live in circuits.display (rich, HTML), which sits above every class shown here: imported on first use.
def check(puzzle, **values):
    """Check an answer given as values against the shipped puzzle, as a notebook (or Colab) has no puzzle file:
    `circuits.check("consonants", W_Q=..., W_K=..., W_V=..., params=...)`. The result renders as the report."""
    from circuits.display import notebook

    return notebook.check(puzzle, **values)


def hint(puzzle, level: int = 1):
    """The first `level` hints of a shipped puzzle: `circuits.hint("consonants", level=2)`."""
    from circuits.display import notebook

    return notebook.hint(puzzle, level)


def show(puzzle, text: str, **values):
    """The trace of an answer given as values on one input; a notebook shows every head's pattern."""
    from circuits.display import notebook

    return notebook.show(puzzle, text, **values)


def analyze(puzzle, **values):
    """The analysis (circuits, composition, paths) of an answer given as values, rendered as a notebook value."""
    from circuits.display import notebook

    return notebook.analyze(puzzle, **values)


def patterns(trace, heads=None, max_tokens: int = 64, max_inputs: int = 8):
    """Which heads and positions a trace's rendering shows: `circuits.patterns(trace, heads=[(9, 6)])`."""
    from circuits.display import notebook

    return notebook.patterns(trace, heads, max_tokens, max_inputs)


def _repr_html(self):
    """Jupyter asks for HTML: the reprs are attached on first use (display imports rich)."""
    from circuits.display import notebook

    notebook.attach()
    return self._repr_html_()


def _repr_pretty(self, p, cycle):
    from circuits.display import notebook

    notebook.attach()
    self._repr_pretty_(p, cycle)


def _repr(self):
    """`print(result)` and `repr(result)` in a terminal: the compact report, not the dataclass's fields."""
    from circuits.display import notebook

    notebook.attach()
    return self.__repr__()


def _attach_reprs(module) -> None:
    """The reprs above, on the classes of `module` (one of _REPRS), as it is imported."""
    for cls in (getattr(module, name) for name in _REPRS[module.__name__]):
        cls._repr_html_, cls._repr_pretty_ = _repr_html, _repr_pretty
        if cls.__name__ != "AuthorAudit":
            cls.__repr__ = _repr


_REPRS = {  # the modules whose classes print as reports, and those classes
    "circuits.checking.results": ("PuzzleResult",),
    "circuits.model.trace": ("Trace",),
    "circuits.audit.author": ("AuthorAudit",),
}


class _Reprs(importlib.abc.MetaPathFinder):
    """Attaches the reprs to a class the moment its module is imported: whichever import comes first (a puzzle
    file's `from circuits import Trace`, a test's `from circuits.checking.checker import PuzzleResult`), the class
    is never seen without them, and `import circuits` imports none of those modules itself."""

    def find_spec(self, name, path, target=None):
        if name not in _REPRS:
            return None
        for finder in sys.meta_path:
            spec = None if finder is self else getattr(finder, "find_spec", lambda *a: None)(name, path, target)
            if spec is not None and spec.loader is not None:
                spec.loader = _ThenAttach(spec.loader)
                return spec
        return None


class _ThenAttach(importlib.abc.Loader):
    """A module's own loader, which attaches the reprs once the module has run."""

    def __init__(self, loader):
        self.loader = loader

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        self.loader.exec_module(module)
        _attach_reprs(module)

    def __getattr__(self, name):  # get_source, get_code, …: the module's own loader answers
        return getattr(self.loader, name)


for _name in _REPRS:  # already imported (circuits imported again, or by a tool that loaded them first)
    if _name in sys.modules:
        _attach_reprs(sys.modules[_name])
if not any(isinstance(f, _Reprs) for f in sys.meta_path):
    sys.meta_path.insert(0, _Reprs())


# --- tracr's compiled transformers (the [tracr] extra; tracr, jax and haiku are imported on first use) -------------
def from_tracr(assembled, name: str = "tracr", heads=None):
    """A Model with a tracr-compiled transformer's weights, named by tracr's residual labels (circuits.io.tracr)."""
    from circuits.io import tracr

    return tracr.from_tracr(assembled, name, heads)


def tracr_output(model, trace):
    """The compiled program's value at each token of each input of `trace` (circuits.io.tracr)."""
    from circuits.io import tracr

    return tracr.tracr_output(model, trace)


__all__ += ["check", "hint", "show", "analyze", "patterns", "from_tracr", "tracr_output"]
