"""checking/ and targets/ read one way down: no module imports another's private helper, and per-kind behaviour
lives on the target classes (no `isinstance(t, Attention)` outside targets/); the kinds moved to facts build no sentence
on their explanation's path (display, or explain/ for what a check finds, words them); old import paths keep
working."""

import ast
import re
from pathlib import Path

import circuits
from circuits import targets

PACKAGE = Path(circuits.__file__).parent
CHECKING = PACKAGE / "checking"


def _kinds(cls: type) -> list[type]:
    return [k for sub in cls.__subclasses__() if sub.__module__.startswith("circuits.") for k in (sub, *_kinds(sub))]


# every kind of target, base included: the package's subclasses of Target (a new kind is seen without a list to keep)
KINDS = {k.__name__: k for k in (targets.Target, *_kinds(targets.Target))}
TARGET_CLASSES = set(KINDS)


def _module(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _absolute(node: ast.ImportFrom, module: str, is_package: bool) -> str:
    if not node.level:
        return node.module or ""
    anchor = module.split(".") if is_package else module.split(".")[:-1]
    anchor = anchor[: len(anchor) - node.level + 1]
    return ".".join(anchor + ([node.module] if node.module else []))


DECIDING = ("circuits.checking", "circuits.targets")  # the packages that decide pass or fail


def private_imports(source: str, module: str, is_package: bool = False) -> list[str]:
    """`from circuits.checking.X import _name` (or `X._name` on an imported checking module; targets' alike) in another
    module."""
    tree = ast.parse(source)
    found, aliases = [], {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            base = _absolute(node, module, is_package)
            if not base.startswith(DECIDING):
                continue
            for alias in node.names:
                if base != module and alias.name.startswith("_") and not alias.name.startswith("__"):
                    found.append(f"{module}: from {base} import {alias.name}")
                aliases[alias.asname or alias.name] = f"{base}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith(DECIDING) and alias.asname:
                    aliases[alias.asname] = alias.name
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id in aliases
            and node.attr.startswith("_")
            and not node.attr.startswith("__")
            and aliases[node.value.id] != module
        ):
            found.append(f"{module}: {node.value.id}.{node.attr}")
    return sorted(found)


def _names(node: ast.expr) -> list[str]:
    """The class names an isinstance's second argument names: `A`, `m.A`, `(A, B)`, `A | B`."""
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Attribute):
        return [node.attr]
    if isinstance(node, ast.Tuple):
        return [n for elt in node.elts for n in _names(elt)]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _names(node.left) + _names(node.right)
    return []


def kind_ladders(source: str, module: str) -> list[str]:
    """`isinstance(…, <a target class>)` in `module`: per-kind behaviour that belongs on the target classes."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "isinstance"
            and len(node.args) == 2
        ):
            hit = [n for n in _names(node.args[1]) if n in TARGET_CLASSES]
            if hit:
                found.append(f"{module}:{node.lineno}: isinstance(…, {' | '.join(hit)})")
    return sorted(found)


def _names_a_kind(node: ast.expr) -> bool:
    """`kind`, `x.kind` or `x["kind"]`: a kind (numpy's `dtype.kind`, a letter code of numpy's, aside)."""
    if isinstance(node, ast.Name):
        return node.id == "kind"
    if isinstance(node, ast.Attribute):
        return node.attr == "kind" and not (isinstance(node.value, ast.Attribute) and node.value.attr == "dtype")
    return isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and node.slice.value == "kind"


def _a_string(node: ast.expr) -> bool:
    """A str literal, or a tuple, list or set of them."""
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return bool(node.elts) and all(_a_string(e) for e in node.elts)
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def kind_strings(source: str, module: str) -> list[str]:
    """A kind compared with a string (`t.kind == "behaviour"`, `target["kind"] != "attention"`, `kind in "QK"`):
    kinds are typed (targets.Kind, targets.Shows, analysis.Composed), so a misspelt one fails where it is written."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Compare):
            sides = [node.left, *node.comparators]
            if any(_names_a_kind(s) for s in sides) and any(_a_string(s) for s in sides):
                found.append(f"{module}:{node.lineno}: {ast.unparse(node)}")
    return sorted(found)


# the explain stage's modules whose explanation logic makes facts (worded by `words`, registered beside them): module
# of circuits/explain → the functions an explanation starts from (a kind's registered `why`, and what the module's
# neighbours call into it)
EXPLAIN = PACKAGE / "explain"
EXPLAINED_BY = {
    "attention": ("why",),
    "keys": ("wrong_key", "writer_first"),
    "output": ("why",),
    "values": ("head_cause", "why_scores"),
    "mlp": ("why", "mlp_cause"),
    "next_token": ("why",),
    "notes": ("earliest_first",),
    "sharpening": ("size_sharpening", "one_factor"),
}  # (failures.py orders the others: it makes only a LeakNote, and says only what it is doing, for a time limit)
SENTENCE = re.compile(r"[A-Za-z][ ,;:]+[A-Za-z]")  # two words: a sentence's piece, not a label, key or code


def _docstring(node) -> ast.AST | None:
    body = getattr(node, "body", None)
    if isinstance(body, list) and body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        return body[0].value
    return None


def explain_path(tree: ast.Module, cls: str, starts=("explain",)) -> dict[str, ast.AST]:
    """The functions of the module that the methods `starts` of class `cls` (cls None: the module's functions
    `starts`) reach by direct calls (`f(…)`, `self.f(…)`), `starts` included: the code that makes an explanation.
    Calls into other modules (and to a base class's methods) are not followed."""
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    if cls is None:  # the module's own functions are where it starts
        methods = functions
    else:
        klass = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == cls)
        methods = {n.name: n for n in klass.body if isinstance(n, ast.FunctionDef)}
    seen, todo = {}, [methods[name] for name in starts]
    while todo:
        fn = todo.pop()
        if fn.name in seen:
            continue
        seen[fn.name] = fn
        for node in ast.walk(fn):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in functions:
                todo.append(functions[node.func.id])
            elif (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "self"
                and node.func.attr in methods
            ):
                todo.append(methods[node.func.attr])
    return seen


def sentences(source: str, cls: str, module: str, starts=("explain",)) -> list[str]:
    """Text with two words in it (str literals and f-strings' literal parts, docstrings aside) on the explain path
    of `cls` in `module`'s source: English that belongs in the words (circuits.explain's `words`). An error raised
    there (a CircuitError's one line, an error's words) is out of this rule's scope."""
    found = []
    for name, fn in explain_path(ast.parse(source), cls, starts).items():
        docs = {id(_docstring(n)) for n in ast.walk(fn) if _docstring(n) is not None}
        raised = {id(n) for r in ast.walk(fn) if isinstance(r, ast.Raise) for n in ast.walk(r)}
        for node in ast.walk(fn):
            if id(node) in raised:
                continue
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and id(node) not in docs
                and SENTENCE.search(node.value)
            ):
                found.append(f"{module}.{name}:{node.lineno}: {node.value!r}")
    return sorted(found)


def _files(root: Path):
    return [p for p in sorted(root.rglob("*.py")) if "curriculum" not in p.relative_to(PACKAGE).parts[:1]]


def _deciding():
    """The modules that decide pass or fail: the checker's and the targets' (the layer below it)."""
    return _files(CHECKING) + _files(PACKAGE / "targets")


def test_no_private_import_across_checking_modules():
    found = [v for p in _deciding() for v in private_imports(p.read_text(), _module(p), p.name == "__init__.py")]
    assert found == []


def test_no_isinstance_over_target_kinds_outside_the_targets_package():
    inside = PACKAGE / "targets"
    found = [v for p in _files(PACKAGE) if inside not in p.parents for v in kind_ladders(p.read_text(), _module(p))]
    assert found == []


def test_no_target_is_handed_the_checker():
    """A target never receives the checker (module or function) to reach back up: the checker calls down."""
    found = [
        f"{p.name}:{node.lineno}: {node.name}"
        for p in _files(PACKAGE / "targets")
        for node in ast.walk(ast.parse(p.read_text()))
        if isinstance(node, ast.FunctionDef) and any(a.arg == "checker" for a in node.args.args)
    ]
    assert found == []


def test_no_kind_is_compared_with_a_string():
    assert [v for p in _files(PACKAGE) for v in kind_strings(p.read_text(), _module(p))] == []


def test_the_kind_string_rule_catches_a_planted_comparison():
    planted = (
        "def f(t, target, kind, x):\n"
        '    if t.kind == "behaviour" or target["kind"] != "attention":\n        return 1\n'
        '    if kind in "QK" or "code" == x.kind or t.kind in ("code", "structure"):\n        return 2\n'
        '    return t.kind is Kind.CODE, x.dtype.kind in "iu", t.label == "kind", x["kind"] == VIRTUAL\n'
    )
    assert kind_strings(planted, "circuits.cli") == [
        "circuits.cli:2: t.kind == 'behaviour'",
        "circuits.cli:2: target['kind'] != 'attention'",
        "circuits.cli:4: 'code' == x.kind",
        "circuits.cli:4: kind in 'QK'",
        "circuits.cli:4: t.kind in ('code', 'structure')",
    ]  # typed kinds, numpy's dtype letters, a label that happens to read "kind" and a named constant pass


def test_a_kind_prints_as_its_string():
    """Typed kinds print as the words they replaced: JSON, the cache and `circuits show` are unchanged."""
    import json

    from circuits.analysis import Composed

    assert json.dumps([targets.Kind.BEHAVIOUR, targets.Shows.NEXT_TOKEN, Composed.VIRTUAL]) == (
        '["behaviour", "next-token", "virtual"]'
    )
    assert f"{Composed.Q}-composition" == "Q-composition" and targets.Kind("code") is targets.Kind.CODE
    assert targets.Code("c", strategy=lambda: None, compare=lambda a, e: None).kind is targets.Kind.CODE
    assert targets.Attention(0, 0, "previous-token").kind is targets.Kind.BEHAVIOUR


def test_the_explain_logic_builds_no_sentence():
    """In each module of circuits/explain the functions that find the facts build no English: only `words` does."""
    for module, starts in EXPLAINED_BY.items():
        path = EXPLAIN / f"{module}.py"
        assert sentences(path.read_text(), None, module, starts) == []


def explaining(source: str, module: str) -> list[str]:
    """Where `module` explains a failure: an assignment to an explanation, its `hint`, `summary` or `terms`
    (`f.explanation = …`, `e.hint += …`), a note added (`….notes.append(…)`), or a call of `explain`/`.explain(`."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Assign, ast.AugAssign)):
            for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                if (
                    isinstance(target, ast.Attribute)
                    and target.attr in ("explanation", "hint", "summary", "terms")
                    and not (isinstance(target.value, ast.Name) and target.value.id == "self")
                ):
                    found.append(f"{module}:{node.lineno}")
        elif isinstance(node, ast.Call) and isinstance(node.func, (ast.Attribute, ast.Name)):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else node.func.id
            of = node.func.value if isinstance(node.func, ast.Attribute) else None
            notes = name == "append" and isinstance(of, ast.Attribute) and of.attr == "notes"
            if name == "explain" or notes:
                found.append(f"{module}:{node.lineno}")
    return sorted(set(found), key=lambda v: int(v.rsplit(":", 1)[1]))


def facts_made(
    source: str, cls: str | None, module, starts=("explain",), within: str | tuple[str, ...] = "circuits.explain"
) -> set[type]:
    """The frozen dataclasses (facts) of `within` that `cls.explain` of `module` (cls None: the path from the
    module's functions `starts`) constructs."""
    import dataclasses

    found = set()
    for fn in explain_path(ast.parse(source), cls, starts).values():
        for node in ast.walk(fn):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                value = getattr(module, node.func.id, None)
                if (
                    isinstance(value, type)
                    and dataclasses.is_dataclass(value)
                    and value.__dataclass_params__.frozen
                    and value.__module__.startswith(within)
                ):
                    found.add(value)
    return found


# where a finding starts, outside the kinds: the checker's, the code targets' and the library compare's functions
# (module → (None, its functions)); each kind that finds facts when checked (a `run` or `finding` of its own) is
# found by `found_by_kinds`
FOUND_OUTSIDE_KINDS = {
    "checking.checker": (None, ("check_structure", "check_mechanism")),
    "checking.code_targets": (None, ("code_verdict", "check_code_on", "check_code")),
    "checking.validate": (None, ("code_mistake",)),
    "checking.reference": (None, ("compare_attention", "compare_mask")),
}


def found_by_kinds() -> dict[str, tuple[str, tuple[str, ...]]]:
    """The kinds that find facts when they are checked, read off the targets package (no list to keep): module of
    checking → (class, its own methods among `run` and `finding`). A new kind is seen without a line added here."""
    found = {}
    for name, cls in sorted(KINDS.items()):
        starts = tuple(m for m in ("run", "finding") if m in vars(cls))
        if starts and cls.__module__.startswith("circuits.targets."):
            found[f"{cls.__module__.removeprefix('circuits.')}:{name}"] = (name, starts)
    return found


def found_by_explain() -> dict[str, tuple]:
    return {**found_by_kinds(), **FOUND_OUTSIDE_KINDS}


def _path(key: str) -> Path:
    return PACKAGE / f"{key.split(':')[0].replace('.', '/')}.py"


def test_the_kinds_that_find_are_read_off_the_targets_package():
    assert {"targets.ov:OVCircuit", "targets.width:ValueWidth", "targets.depends:Depends"} <= set(found_by_kinds())


def test_the_kinds_whose_findings_explain_words_build_no_sentence():
    for key, (cls, starts) in found_by_explain().items():
        assert sentences(_path(key).read_text(), cls, key, starts) == [], key


def unworded(made) -> list[str]:
    """The facts in `made` with no words registered in circuits/explain/ (`explain.words` would raise)."""
    from circuits import explain

    return sorted(c.__name__ for c in made if explain.words.dispatch(c) is explain.words.dispatch(object))


def test_every_fact_a_finding_makes_has_its_words_in_explain():
    import importlib

    made = set()
    for key, (cls, starts) in found_by_explain().items():
        module = importlib.import_module(f"circuits.{key.split(':')[0]}")
        made |= facts_made(_path(key).read_text(), cls, module, starts, ("circuits.checking", "circuits.targets"))
    assert {
        "MatrixDiffers",
        "CopyingScore",
        "ScoreBound",
        "RaisedMost",
        "YourCodeRaised",
        "Raised",
        "NanAt",
        "ValuesDiffer",
        "MaskEntry",
        "AttentionCase",
        "PatchedMiss",
        "Width",
        "ValueRows",
        "AtMost",
        "Unfollowed",
        "Unbroken",
        "Interventions",
    } <= {c.__name__ for c in made}
    assert unworded(made) == []


def test_the_words_rule_catches_a_planted_fact_without_words():
    """A fact a check makes with no words registered is named; one with words (and a puzzle's own str) is not."""
    import dataclasses

    from circuits.targets.width import Width

    @dataclasses.dataclass(frozen=True)
    class Planted:
        layer: int

    assert unworded({Planted, Width, str}) == ["Planted"]


def test_the_finding_rule_catches_a_planted_sentence():
    """A checker function that words its finding is caught; one that hands display the facts is not."""
    planted = (
        "def check_structure(target, rows):\n"
        '    """A docstring is not a sentence the report prints."""\n'
        "    bad = [r for r in rows if not r[3]]\n"
        "    return Failure(EXACT, finding=_said(bad[0][0]))\n"
        'def _said(what):\n    return f"{what} differs from the expected matrix"\n'
        "def check_facts(rows):\n    return Failure(EXACT, finding=MatrixDiffers(rows[0][0]))\n"
    )
    assert sentences(planted, None, "checker", ("check_structure",)) == [
        "checker._said:6: ' differs from the expected matrix'"
    ]
    assert sentences(planted, None, "checker", ("check_facts",)) == []


def test_every_fact_an_explanation_makes_has_its_words():
    import importlib

    from circuits.explain import words
    from circuits.explain.notes import noted

    made = set()
    for name, starts in EXPLAINED_BY.items():
        module = importlib.import_module(f"circuits.explain.{name}")
        made |= facts_made((EXPLAIN / f"{name}.py").read_text(), None, module, starts)
    assert len(made) >= 20  # the rule sees the kinds' facts (AttentionMiss, WrongKey, ReadoutMiss, TokenMiss, …)
    worded = set(words.registry) | set(noted.registry)
    assert sorted(c.__name__ for c in made if c not in worded) == []


def test_the_fact_rule_catches_a_fact_without_words():
    import dataclasses
    import types

    from circuits.explain import words

    Unworded = dataclasses.make_dataclass("Unworded", ["x"], frozen=True)
    Unworded.__module__ = "circuits.explain.planted"
    planted = types.SimpleNamespace(Unworded=Unworded)
    made = facts_made("def why(target, trace, tokens):\n    return Unworded(1)\n", None, planted, ("why",))
    assert made == {Unworded} and Unworded not in words.registry


def test_the_checker_leaves_explaining_to_explain():
    """checking/ finds that a target fails, where and on what shortest input; it never explains: no assignment to
    an explanation (or its hint, summary, terms), no note added, no call of explain, in any module of it."""
    assert [v for p in _deciding() for v in explaining(p.read_text(), _module(p))] == []
    planted = (
        "def f(e, r, t, self):\n    e.hint = e.hint + '.'\n    r.failure.explanation.summary += 'x'\n"
        "    self.hint = 1\n    hint = 2\n    r.failure.explanation = t.explain(1, 2)\n"
        "    e.notes.append(3)\n    e.terms = 4\n    notes = [].append(5)\n"
    )
    assert explaining(planted, "circuits.checking.checker") == [
        "circuits.checking.checker:2",
        "circuits.checking.checker:3",
        "circuits.checking.checker:6",
        "circuits.checking.checker:7",
        "circuits.checking.checker:8",
    ]


def test_the_sentence_rule_catches_a_planted_sentence():
    planted = (
        "def _why(x):\n"
        '    """A docstring is not a sentence the report prints."""\n'
        '    return f"key {x} scores higher", ("keys", "cos/sin:*", "tok:*, pos:*")\n'
        'def _unused():\n    return "not on the path"\n'
        "class Attention:\n"
        "    def explain(self, trace, tokens):\n"
        '        """Also a docstring."""\n'
        '        return self._hint(_why(1), "key_sets")\n'
        '    def _hint(self, a, b):\n        if a:\n            raise ValueError(f"{a} is not a key")\n'
        '        return "look at W_Q"\n'
    )
    assert sentences(planted, "Attention", "attention") == [
        "attention._hint:13: 'look at W_Q'",
        "attention._why:3: ' scores higher'",
    ]  # labels and keys ("cos/sin:*", "key_sets", a list of families) are not sentences


def test_the_private_import_rule_catches_a_planted_violation():
    planted = (
        "from circuits.targets.formats import _fmt_vec, fmt_num\n"
        "from circuits.checking import checker\n"
        "from . import plan as p\n"
        "def f():\n    return checker._check(1), p._helper, checker.check\n"
    )
    assert private_imports(planted, "circuits.checking.planted") == [
        "circuits.checking.planted: checker._check",
        "circuits.checking.planted: from circuits.targets.formats import _fmt_vec",
        "circuits.checking.planted: p._helper",
    ]
    # relative, from inside the targets package; a module's own private names are its own business
    assert private_imports("from .base import _hidden\n", "circuits.targets.mlp") == [
        "circuits.targets.mlp: from circuits.targets.base import _hidden"
    ]
    assert private_imports("from circuits.checking.checker import _x\n", "circuits.checking.checker") == []
    assert (
        private_imports("from numpy import _core\nfrom circuits.targets import Attention\n", "circuits.checking.cache")
        == []
    )


def test_the_kind_rule_catches_a_planted_ladder():
    planted = (
        "def shown(t):\n"
        "    if isinstance(t, Attention):\n        return 1\n"
        "    elif isinstance(t, Output | NextToken):\n        return 2\n"
        "    elif isinstance(t, (targets.Structure, int)):\n        return 3\n"
        "    return isinstance(t, dict)\n"
    )
    assert kind_ladders(planted, "circuits.cli") == [
        "circuits.cli:2: isinstance(…, Attention)",
        "circuits.cli:4: isinstance(…, Output | NextToken)",
        "circuits.cli:6: isinstance(…, Structure)",
    ]
    assert {
        "Target",
        "Output",
        "Attention",
        "NextToken",
        "MLPOutput",
        "Structure",
        "OVCircuit",
        "Code",
        "Depends",
    } <= TARGET_CLASSES


def test_every_old_import_path_still_works():
    """Shipped puzzles, learners' files and instructors' puzzles import targets from these paths."""
    from circuits.checking import targets_mlp, targets_ov
    from circuits.checking.behaviours import induction
    from circuits.checking.targets import (  # noqa: F401  (every public name the single module had)
        NEAR_TIE,
        Attention,
        Code,
        Evaluation,
        Explanation,
        HeadOutput,
        HeadZ,
        NextToken,
        Output,
        Readout,
        Residual,
        Structure,
        Target,
        Tokens,
        factor_needed,
    )

    assert targets_mlp.MLPOutput is targets.MLPOutput and targets_mlp.MLPOut is targets.MLPOut
    assert targets_ov.OVCircuit is targets.OVCircuit is circuits.OVCircuit
    assert (targets_ov.full_ov, targets_ov.copying_score, targets_ov.raised) == (
        targets.full_ov,
        targets.copying_score,
        targets.raised,
    )
    assert circuits.Attention is Attention is targets.Attention and circuits.MLPOutput is targets.MLPOutput
    assert induction is targets.behaviours.induction


def test_a_metrics_direction_is_the_kind_that_measures_it():
    """The report orders and prints a metric by the direction its target kind declares."""
    assert targets.higher_is_worse(targets.Output.metric)
    assert not targets.higher_is_worse(targets.Attention.metric)
    assert not targets.higher_is_worse(targets.NextToken.metric)


def test_each_behaviour_kind_says_how_far_from_failing_and_its_bound():
    """`circuits audit`'s closest call asks the target: its slack (≥ 0: passes) and the bound it states."""
    import numpy as np

    from circuits.targets import MLPOut, MLPOutput

    worst = np.array([0.95, 0.8])
    attention = targets.Attention(0, 0, "previous-token", min_mass=0.9)
    assert np.allclose(attention.slack(worst), [0.05, -0.1]) and attention.bound() == "needs ≥ 0.9"
    output = targets.Output(targets.Residual(("x",)), lambda toks: [0] * len(toks), tol=0.9)
    assert np.allclose(output.slack(worst), [-0.05, 0.1]) and output.bound() == "tolerance 0.9"
    assert output.tolerance == 0.9 and attention.tolerance is None
    mlp = MLPOutput(MLPOut(0), lambda toks: [0] * len(toks), tol=0.5)
    assert mlp.bound() == "tolerance 0.5" and mlp.tolerance == 0.5
    every = targets.NextToken(lambda toks: [None] * len(toks), lo=-0.5)
    assert np.allclose(every.slack(np.array([-0.1, -0.7])), [0.4, -0.2]) and every.bound() == "needs ≥ -0.5"
    band = targets.NextToken(lambda toks: [None] * len(toks), lo=-1.0, hi=-0.5, mean=True)
    assert np.allclose(band.slack(np.array([-0.7, -0.2, -1.5])), [0.2, -0.3, -0.5])
    assert band.bound() == "needs [-1, -0.5]"
    code = targets.Code("c", strategy=lambda: None, compare=lambda a, e: None)
    assert code.tolerance is None and code.shown(None, ["a"]) is None


def test_a_target_that_expects_nothing_is_found_by_its_own_kind():
    probe = [list("ab"), list("abc")]
    nothing = lambda toks: [None] * len(toks)  # noqa: E731
    assert targets.Output(targets.Residual(("x",)), nothing).checks_nothing(probe)
    assert not targets.Output(targets.Residual(("x",)), lambda toks: [None, *[1] * (len(toks) - 1)]).checks_nothing(
        probe
    )
    assert targets.NextToken(nothing).checks_nothing(probe)
    assert not targets.NextToken(nothing, after_bos=lambda toks: "a").checks_nothing(probe)  # it reads BOS's prediction
    assert targets.Attention(0, 0, nothing, per_input=True).checks_nothing(probe)
    assert not targets.Attention(0, 0, "previous-token").checks_nothing(probe)  # a behaviour: cannot tell


def test_each_kind_validates_its_own_functions_with_one_line_naming_them():
    from circuits.errors import CircuitError

    fail = lambda what: CircuitError(f"91_x.py: targets[0]: {what}")  # noqa: E731
    examples, alphabet = [list("abc")], list("abc")
    cases = [
        (
            targets.Output(targets.Residual(("x", "y")), lambda toks: [[1, 2, 3]] * len(toks)),
            "spec('abc') gives 3 numbers per position; the readout has 2 directions",
        ),
        (targets.NextToken(lambda toks: [1] * len(toks)), "spec('abc')[0] is 1, needs the expected next token"),
        (
            targets.NextToken(lambda toks: [None] * len(toks), after_bos=lambda toks: "z"),
            "after_bos('abc') returned 'z', which is not a token of the puzzle's alphabet",
        ),
        (
            targets.Attention(0, 0, "previous-token", min_mass=1.5),
            "min_mass is 1.5, needs a share of attention in (0, 1]",
        ),
        (
            targets.Attention(0, 0, lambda toks: [None, 2, None], per_input=True),
            "where('abc')[1] is 2, needs a key position 0..1",
        ),
        (targets.Attention(0, 0, lambda toks: 1 / 0, per_input=True), "where('abc') raised ZeroDivisionError"),
    ]
    for target, said in cases:
        try:
            target.validate(examples, alphabet, fail)
        except CircuitError as e:
            assert said in str(e) and str(e).startswith("91_x.py: targets[0]: "), (target, str(e))
        else:
            raise AssertionError(f"{target.label}: no error, expected {said!r}")
    targets.Output(targets.Residual(("x",)), lambda toks: [1] * len(toks)).validate(
        examples, alphabet, fail
    )  # right: silent


def test_the_table_of_an_explanation_is_made_in_explain_from_the_kinds_facts():
    """A target's explanation holds numbers per position; the words registered beside them make every cell."""
    import numpy as np

    from circuits.explain import table
    from circuits.explain.attention import AttentionPositions
    from circuits.explain.next_token import NextTokenPositions
    from circuits.explain.output import ReadoutPositions

    def of(facts):
        return table(targets.Explanation(0, "", facts, ""))

    nan = np.nan
    readout = ReadoutPositions(
        ["a", "b"], np.array([[1.0, 0.0], [nan, nan]]), np.array([[0.5, 0.0], [2.0, 1e-4]]), np.array([0.5, 0.0]), 0.1
    )
    assert of(readout) == (
        ["pos", "token", "expected", "yours", "error", ""],
        [["0", "'a'", "[1, 0]", "[0.5, 0]", "0.5", "✗"], ["1", "'b'", "—", "[2, 0]", "0", "✓"]],
    )
    readout.names = ["x", "y"]  # an MLP's: by name
    assert of(readout)[1][0][2:4] == ["x 1", "x 0.5"]
    pattern = np.array([[1.0, 0.0, 0.0], [0.7, 0.3, 0.0], [0.2, 0.4, 0.4]])
    keys = np.array([[False] * 3, [True, False, False], [False, True, True]])
    attention = AttentionPositions(["a", "b", "c"], pattern, keys, np.array([-1, 0, 2]), np.array([nan, 0.7, 0.8]), 0.9)
    assert of(attention) == (
        ["query", "token", "target key", "argmax key (weight)", "on target", ""],
        [
            ["0", "'a'", "—", "0 (1.000)", "—", ""],
            ["1", "'b'", "0 'a'", "0 (0.700)", "0.700", "✗"],
            ["2", "'c'", "1, 2", "1 (0.400)", "0.800", "✗"],
        ],
    )
    next_token = NextTokenPositions(["a", "b"], [None, "c"], ["b", "c"], np.array([nan, -0.25]))
    assert of(next_token)[1] == [["0", "'a'", "—", "'b'", "—"], ["1", "'b'", "'c'", "'c'", "-0.250"]]


def test_every_kind_of_per_position_facts_has_its_words():
    """A table is keyed by the facts' type: every *Positions class of circuits/explain has its columns and rows."""
    import importlib
    import pkgutil

    import circuits.explain as explain

    kinds = {
        value
        for info in pkgutil.iter_modules(explain.__path__)
        for value in vars(importlib.import_module(f"{explain.__name__}.{info.name}")).values()
        if isinstance(value, type) and value.__name__.endswith("Positions")
    }
    assert len(kinds) >= 3 and kinds <= set(explain.columns.registry) and kinds <= set(explain.rows.registry)
