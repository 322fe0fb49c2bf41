"""How fast circuits checks and audits the puzzles, how much it checks, and how long the test suite takes,
beside the targets of issues 15, 26 and 39.

Issue 39 states its goals in *I*, the import floor: the wall time of `python -c "import numpy, sympy,
rich.console"` (the best of a few fresh processes), measured first in the same run, since absolute times differ
a lot between machines of the same kind. Each such goal is printed as a multiple of I (`≤ 1.5 I`), with the
measured figure in seconds and in I below it; wall and CPU time are separate rows.

    python benchmarks/bench.py                   # every section, several minutes on two cores
    python benchmarks/bench.py --skip-suite      # all but the test suite's run
    python benchmarks/bench.py --quick           # a smoke run: small samples, no subprocess timings or audits
    python benchmarks/bench.py --json out.json   # also write every figure and verdict as JSON (- : stdout)
    python benchmarks/bench.py --puzzle 8 --skip-pytest --skip-torch
    python benchmarks/bench.py --skip-suite --skip-grade --skip-audit --skip-pytest   # I, watch and each check

Sections: the import floor I; save → verdict as `circuits watch` gives it (a warm process: the learner's
puzzle file loaded anew and checked, margins off, for the reference and for a failing mutant of it); the wall
time of `pytest puzzles/ --solutions`, serially and on two pytest-xdist workers (`-n 2`, where xdist is
installed; the runs interleaved, the median of each), and of `circuits check N --solution --no-cache` for each
puzzle, interpreter start and margins included (fresh processes, the best of --repeats; answered by the warm
server, as a puzzle's first check and again once the server's template has primed it, and in a process of its
own, CIRCUITS_SERVER=0, whose CPU time and largest peak memory are judged);
checking a batch at once against one call per string (checker.evaluate
both ways, on one BLAS thread as a check runs); circuits' forward against a plain torch forward on the same
weights at the checker's shapes (its batches by length, both on two threads; skipped without torch); and
coverage: random inputs, exhaustive or certified lengths and property examples per puzzle; each puzzle's
`circuits audit N` (in this process, once); `circuits grade` on a generated class (benchmarks/grade.py, one
worker); and the README's `pytest` (a fresh process, once), wall and CPU time. Wall times drift on a shared
machine, so each is the best of a few runs, contenders interleaved; CPU times drift less, and are judged
against I's own CPU time. Everything goes through circuits' public API: the
checker's batching and certification are its own.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

import numpy as np

from circuits.checking import checker
from circuits.checking.loader import load, puzzle_files
from circuits.model.threads import one_blas_thread
from circuits.model.transformer import fixed_pattern

ROOT = Path(__file__).resolve().parent.parent
WIDTH = 80
# Coverage before issue 15 (main at 2b4c9fa): the longest exhaustive or certified input length per puzzle.
SMALL_LEN_BEFORE = {"01": 13, "02": 13, "03": 13, "04": 6, "05": 4, "06": 5, "07": 6, "08": 0}  # later: none
OPS: dict[str, Callable[[float, float], bool]] = {"<=": lambda a, b: a <= b, ">=": lambda a, b: a >= b}


@dataclass
class Figure:
    """One measured figure and its goal: `met` is None where there is no goal or nothing was measured."""

    section: str
    target: str
    measured: float | None
    unit: str = ""
    op: str | None = None  # "<=" or ">="
    goal: float | None = None
    note: str = ""
    met: bool | None = field(default=None)
    in_floor: float | None = None  # the goal as a multiple of the import floor I (issue 39), goal = in_floor × I

    def __post_init__(self):
        if self.met is None and self.op is not None and self.measured is not None:
            self.met = bool(OPS[self.op](self.measured, self.goal))

    @classmethod
    def within(
        cls,
        section: str,
        target: str,
        measured: float | None,
        k: float,
        floor: float,
        note: str = "",
        unit: str = " s",
        cpu: bool = False,
    ) -> Figure:
        """A time whose goal is at most `k` times the import floor I (`floor` seconds; a CPU time against I's CPU)."""
        I = "I's CPU" if cpu else "I"
        said = "" if measured is None else f"{measured / floor:.2f} × {I} (goal {k * floor:.2f} s)"
        return cls(section, target, measured, unit, "<=", k * floor, "; ".join(filter(None, [said, note])), in_floor=k)

    @property
    def goal_text(self) -> str:
        if self.op is None:
            return ""
        sign = "≤" if self.op == "<=" else "≥"
        return f"{sign} {self.in_floor:g} I" if self.in_floor is not None else f"{sign} {_num(self.goal)}{self.unit}"


@dataclass
class Settings:
    quick: bool = False
    repeats: int = 3  # fresh processes per subprocess timing, and runs per in-process timing; the best is kept
    n_batch: int = 10_000  # inputs checked at once (the checker's sample size)
    n_string: int = 300  # inputs checked one call each
    puzzles: Sequence[str] = ()
    pytest: bool = True
    cli: bool = True
    torch: bool = True
    audit: bool = True  # `circuits audit N` per puzzle
    suite: bool = True  # the test suite, in a fresh process
    verdict: bool = True  # save → verdict in a warm process, as `circuits watch` gives it
    grade: bool = True  # `circuits grade` on a generated class
    grade_n: int = 10  # submissions in that class
    floor: float | None = None  # the import floor I in seconds, once measured (import_floor)
    floor_cpu: float | None = None  # its CPU time (user + system): what a CPU time is judged against

    @classmethod
    def make(cls, quick: bool = False, **kw) -> Settings:
        if quick:
            kw = {
                "repeats": 1,
                "n_batch": 200,
                "n_string": 20,
                "pytest": False,
                "cli": False,
                "audit": False,
                "suite": False,
                "verdict": False,
                "grade": False,
            } | kw
        return cls(quick=quick, **kw)

    @property
    def timed(self) -> bool:
        """Whether any section judges a time against the import floor (so I is measured first)."""
        return self.pytest or self.cli or self.audit or self.suite or self.verdict


# --- timing --------------------------------------------------------------------------------------------
def best_of(contenders: dict[str, Callable[[], object]], repeats: int) -> dict[str, float]:
    """The best wall time of each contender, run once untimed first and then interleaved `repeats` times."""
    for run in contenders.values():
        run()
    best = dict.fromkeys(contenders, np.inf)
    for _ in range(max(1, repeats)):
        for name, run in contenders.items():
            start = time.perf_counter()
            run()
            best[name] = min(best[name], time.perf_counter() - start)
    return best


def wall(cmd: list[str], repeats: int, cwd: Path = ROOT, first: Sequence[Path] = ()) -> tuple[float, int, str]:
    """The best wall time of a command in a fresh process (`first` put before ROOT on its PYTHONPATH), its last exit
    code, and what a failing run said that names a failure (pytest's FAILED/ERROR lines, or its last lines), so a
    failure met while timing is not lost."""
    best, code, said = np.inf, 0, ""
    path = [*map(str, first), str(ROOT), os.environ.get("PYTHONPATH")]
    env = os.environ | {"PYTHONPATH": os.pathsep.join(filter(None, path))}
    for _ in range(max(1, repeats)):
        start = time.perf_counter()
        done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, errors="replace", check=False)
        best, code = min(best, time.perf_counter() - start), done.returncode
        if code != 0:
            said = failures(done.stdout + done.stderr)
    return best, code, said


def failures(output: str, most: int = 20) -> str:
    """pytest's lines naming what failed (from its short summary), else the last lines of `output`."""
    lines = output.splitlines()
    named = [line for line in lines if line.startswith(("FAILED ", "ERROR "))]
    return "\n".join((named or lines[-5:])[:most])


@dataclass
class Run:
    """A command's best wall time in fresh processes, with the CPU time (user + system) of that run, the largest
    peak memory of any run, and the last exit code."""

    wall: float
    cpu: float
    peak_mb: float
    code: int


def runs(cmd: list[str], repeats: int, cwd: Path = ROOT, env: dict | None = None, peak: bool = True) -> Run:
    """`cmd` in `repeats` fresh processes (circuits on PYTHONPATH, `env` added), each one's own rusage (os.wait4); the
    peak memory as the process itself reports it (PEAK_HOOK), since a child's ru_maxrss counts the parent it was
    forked from (with `peak`: it sets a variable of its own, which a warm server's stamp would see)."""
    import tempfile

    env = bench_env() | (env or {})
    best = Run(np.inf, np.inf, 0.0, 0)
    with tempfile.TemporaryDirectory(prefix="circuits-bench-") as tmp:
        if peak:
            env[PEAK_FILE] = str(Path(tmp) / "peak")
        for _ in range(max(1, repeats)):
            start = time.perf_counter()
            proc = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            _, status, usage = os.wait4(proc.pid, 0)
            seconds = time.perf_counter() - start
            proc.returncode = os.waitstatus_to_exitcode(status)
            said = Path(env.get(PEAK_FILE, tmp))
            peak_mb = max(best.peak_mb, float(said.read_text()) / 1024 if said.is_file() else 0.0)  # kB
            if seconds < best.wall:
                best = Run(seconds, usage.ru_utime + usage.ru_stime, peak_mb, proc.returncode)
            best.peak_mb, best.code = peak_mb, proc.returncode
    return best


def bench_env() -> dict:
    return os.environ | {"PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))}


PEAK_FILE = "CIRCUITS_BENCH_PEAK"  # where a timed process writes its peak memory (kB) as it exits
PEAK_HOOK = (
    "import atexit, os\n"
    "def _peak():\n"
    "    try:\n"
    "        hwm = [l for l in open('/proc/self/status') if l.startswith('VmHWM:')][0].split()[1]\n"
    "    except (OSError, IndexError):\n"
    "        import resource\n"
    "        hwm = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
    "    open(os.environ['" + PEAK_FILE + "'], 'w').write(str(hwm))\n"
    "atexit.register(_peak)\n"
)  # VmHWM: this process's own peak, not its parent's before the exec


FLOOR_CODE = "import numpy, sympy, rich.console"


def import_floor(cfg: Settings) -> list[Figure]:
    """I: the best wall time of `python -c "import numpy, sympy, rich.console"` (at least 3 fresh processes)."""
    run = runs([sys.executable, "-c", FLOOR_CODE], max(3, cfg.repeats))
    cfg.floor, cfg.floor_cpu = run.wall, run.cpu
    return [
        Figure(
            "import floor",
            f'I: python -c "{FLOOR_CODE}"',
            run.wall,
            " s",
            note=f"wall; the best of {max(3, cfg.repeats)}; issue 39's goals are in I",
        ),
        Figure(
            "import floor",
            "I's CPU (user + system, the same run)",
            run.cpu,
            " s",
            note="what each CPU time is judged against",
        ),
    ]


def references(names: Sequence[str] = ()) -> list:
    """The reference solutions' attempts, all or those named (by number, name or id)."""
    out = []
    for path in puzzle_files(solutions=True, root=ROOT):
        attempt = load(path)
        p = attempt.puzzle
        if not names or any(n in (p.id, p.name) or (n.isdigit() and int(n) == p.number) for n in names):
            out.append(attempt)
    return out


def _behaviour(attempt) -> list:
    return [t for t in attempt.puzzle.targets if t.kind == "behaviour"]


# --- 1 and 2: fresh processes ----------------------------------------------------------------------------
def pytest_run(cfg: Settings) -> list[Figure]:
    """Serial, and with pytest-xdist on two workers where it is installed: runs interleaved, the median of each."""
    import importlib.util

    # --no-cache: every verdict computed, not read back from the learner's verdict cache
    cmd = [sys.executable, "-m", "pytest", "puzzles/", "--solutions", "--no-cache", "-q", "-p", "no:cacheprovider"]
    commands = {"serial": cmd}
    if importlib.util.find_spec("xdist") is not None:
        commands["-n 2"] = [*cmd, "-n", "2"]
    times: dict[str, list[float]] = {name: [] for name in commands}
    codes: dict[str, int] = {}
    said: dict[str, str] = {}
    for _ in range(max(1, min(cfg.repeats, 3))):
        for name, c in commands.items():
            seconds, codes[name], said[name] = wall(c, 1)
            times[name].append(seconds)

    def note(name):
        return f"median of {len(times[name])}" if codes[name] == 0 else f"exit code {codes[name]}: {said[name]}"

    out = [
        Figure.within(
            "full run", "pytest puzzles/ --solutions", float(np.median(times["serial"])), 5.0, cfg.floor, note("serial")
        )
    ]
    if "-n 2" in commands:
        xdist = float(np.median(times["-n 2"]))
        out.append(Figure.within("full run", "pytest puzzles/ --solutions -n 2", xdist, 5.0, cfg.floor, note("-n 2")))
        out.append(Figure("full run", "-n 2: speed-up over serial", out[0].measured / xdist, "×", note="two workers"))
    else:
        out.append(Figure("full run", "pytest puzzles/ --solutions -n 2", None, note="pytest-xdist not installed"))
    return out


PEAK_GOAL = 300.0  # MB: a check's peak memory (issue 39)


CHECK_CODE = "import sys; from circuits.cli import main; sys.exit(main(sys.argv[1:]))"
NO_SERVER = {"CIRCUITS_SERVER": "0"}  # the command checks in its own process, as before the warm server


def cli_runs(attempts, cfg: Settings) -> list[Figure]:
    """`circuits check N --solution --no-cache` in fresh processes (margins included): as a learner runs it, a thin
    client of the warm server (cli/server.py, started by a first untimed run), and in a process of its own
    (CIRCUITS_SERVER=0), each wall time against 1.5 I; the CPU time and peak memory of the run on its own (where the
    server answers, its fork does the work, which the client's own rusage does not see) against 1.5 I's CPU and
    300 MB. Served twice: once as a puzzle's first check, then, once the server's template has primed this puzzle
    (cli/prime.py), as a learner's next check of it. The puzzles go last to first: a template primes the puzzle
    after its own too (a learner's next), so in order every first check but one would find its puzzle primed."""
    out, peak, heaviest = [], 0.0, ""
    served = bool(attempts) and server_up([sys.executable, "-c", CHECK_CODE, "list", "--help"])  # primes nothing
    groups: dict[int, list[Figure]] = {}
    for i, a in reversed(list(enumerate(attempts))):
        n, cmd = a.puzzle.number, _check(a.puzzle.number)
        out = groups[i] = []
        own = runs(cmd, cfg.repeats, env=NO_SERVER)
        if served:
            before = primed_templates(server_pid())
            first = runs(cmd, 1, peak=False)  # the server's template primed another puzzle: as a first check
            note = "" if first.code == 0 else f"exit code {first.code}"
            out.append(
                Figure.within("one puzzle", f"circuits check {n} --solution: wall", first.wall, 1.5, cfg.floor, note)
            )
            name = f"circuits check {n} --solution again: wall"
            if primed_after(before):  # its template has checked this puzzle (cli/prime.py): as a learner's next
                again = runs(cmd, cfg.repeats, peak=False)
                note = "" if again.code == 0 else f"exit code {again.code}"
                out.append(Figure.within("one puzzle", name, again.wall, 1.5, cfg.floor, note))
            else:
                out.append(Figure("one puzzle", name, None, " s", note="no primed template"))
        else:
            out.append(Figure("one puzzle", f"circuits check {n} --solution: wall", None, " s", note="no warm server"))
        note = "" if own.code == 0 else f"exit code {own.code}"
        out += [
            Figure.within("one puzzle", f"circuits check {n}: wall, no server", own.wall, 1.5, cfg.floor, note),
            Figure.within(
                "one puzzle", f"circuits check {n}: CPU, no server", own.cpu, 1.5, cfg.floor_cpu, note, cpu=True
            ),
        ]
        if own.peak_mb > peak:
            peak, heaviest = own.peak_mb, a.puzzle.id
    out = [f for i in sorted(groups) for f in groups[i]]  # in the puzzles' order
    if attempts:
        out.append(Figure("one puzzle", "a check's peak memory (the largest)", peak, " MB", "<=", PEAK_GOAL, heaviest))
    return out


def _check(n: int) -> list[str]:
    return [sys.executable, "-c", PEAK_HOOK + CHECK_CODE, "check", str(n), "--solution", "--no-cache"]


def server_up(cmd: list[str], seconds: float = 120.0) -> bool:
    """Run `cmd` once (untimed: it starts the warm server) and wait for the server to answer; whether it does."""
    runs(cmd, 1, peak=False)
    ask = "from circuits.cli.server import address, stamp; print(address(stamp()))"
    path = subprocess.run(
        [sys.executable, "-c", ask], env=bench_env(), capture_output=True, text=True, check=False
    ).stdout.strip()
    end = time.monotonic() + seconds
    while path not in ("", "None") and time.monotonic() < end:
        if os.path.exists(path):
            return True
        time.sleep(0.2)
    return False


def server_pid() -> int | None:
    """The warm server's pid, from its lock file (cli/server.py), as the bench's commands find it."""
    ask = "from circuits.cli.server import address, stamp; print(address(stamp()))"
    path = subprocess.run(
        [sys.executable, "-c", ask], env=bench_env(), capture_output=True, text=True, check=False
    ).stdout.strip()
    try:
        return int(Path(path + ".lock").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def primed_templates(server: int | None) -> set[int]:
    """The pids of `server`'s templates that have said they are ready (cli/prime.py names them so)."""
    from circuits.cli.prime import READY

    if server is None:
        return set()
    found = set()
    for entry in Path("/proc").iterdir():
        try:
            stat = (entry / "stat").read_text().rpartition(")")[2].split()
            if int(stat[1]) == server and (entry / "comm").read_bytes().strip() == READY:
                found.add(int(entry.name))
        except (OSError, ValueError, IndexError):
            continue
    return found


def primed_after(before: set[int], seconds: float = 120.0) -> bool:
    """Wait for a template ready that was not among `before` (the one for the puzzle just checked); whether one
    came (none does where the server cannot prime: no pidfds, or the puzzle's reference did not check)."""
    end, server = time.monotonic() + seconds, server_pid()
    while time.monotonic() < end:
        if primed_templates(server) - before:
            return True
        time.sleep(0.2)
    return False


# --- save → verdict, as `circuits watch` gives it -----------------------------------------------------------
def a_failing_answer(attempt):
    """The attempt with its first mutant that fails (circuits.audit.mutants), or None."""
    import copy

    from circuits.audit.mutants import mutants

    for m in mutants(attempt)[:8]:
        wrong = copy.copy(attempt)
        wrong.answer = m.answer
        if checker.check(wrong, margins=False).status == "failing":
            return wrong
    return None


def cpu_with_copies() -> float:
    """This process's CPU seconds and its ended children's: a check's forked copies (checking/cores.py) count."""
    import resource

    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


LEARNERS = ROOT / "puzzles"  # the learner's files, which watch runs anew at each save (the reference where none)


def verdicts(attempts, cfg: Settings) -> list[Figure]:
    """What `circuits watch` does after a save, in a warm process: the puzzle file loaded and checked, margins off
    (they may follow the verdict), for the reference (solved) and a failing mutant of it; the best of the repeats,
    wall and CPU, against 0.3 I."""
    import copy

    out = []
    for a in attempts:
        wrong = a_failing_answer(a)
        learners = LEARNERS / a.path.name
        learners = learners if learners.is_file() else a.path
        for status, answer in (("solved", a.answer), ("failing", None if wrong is None else wrong.answer)):
            if answer is None:
                out.append(Figure("save → verdict", f"{a.puzzle.id}: {status}", None, " s", note="no failing mutant"))
                continue

            def verdict(answer=answer):
                attempt = copy.copy(load(learners))  # the learner's file, run anew as at each save
                attempt.answer, attempt.missing = answer, []
                return checker.check(attempt, margins=False).status

            got, wall, cpu = verdict(), np.inf, np.inf  # once untimed: imports and caches warm, as in watch
            for _ in range(max(1, cfg.repeats)):
                start, cpu0 = time.perf_counter(), cpu_with_copies()
                verdict()
                wall, cpu = min(wall, time.perf_counter() - start), min(cpu, cpu_with_copies() - cpu0)
            out += [
                Figure.within("save → verdict", f"{a.puzzle.id}: {status}: wall", wall, 0.3, cfg.floor, got),
                Figure.within(
                    "save → verdict", f"{a.puzzle.id}: {status}: CPU", cpu, 0.3, cfg.floor_cpu, got, cpu=True
                ),
            ]
    return out


# --- 3: a batch at once against one call per string --------------------------------------------------------
def batching(attempts, cfg: Settings) -> list[Figure]:
    out = []
    for a in attempts:
        targets = _behaviour(a)
        if not targets:
            continue
        model, inputs = a.model(), a.puzzle.inputs
        sample = inputs.sample(cfg.n_batch, seed=1)
        few = sample[: cfg.n_string]
        with one_blas_thread():  # as the checker runs
            s = best_of(
                {
                    "batch": lambda m=model, t=targets, b=sample: checker.evaluate(m, t, b),
                    "strings": lambda m=model, t=targets, b=few: [checker.evaluate(m, t, [x]) for x in b],
                },
                cfg.repeats,
            )
        speedup = (s["strings"] / len(few)) / (s["batch"] / len(sample))
        out.append(
            Figure(
                "batching",
                f"{a.puzzle.id}: batched vs one call per string",
                speedup,
                "×",
                ">=",
                20.0,
                f"{len(sample) / s['batch']:,.0f} inputs/s batched",
            )
        )
    return out


# --- 4: circuits' forward against a plain torch forward ----------------------------------------------------
class TorchForward:
    """A puzzle model's weights as float64 torch tensors in a plain attention-only forward pass.

    Built from the public per-head weights; it computes the final residual stream and the logits,
    with fixed patterns and local windows as circuits has them. None for a model with an MLP,
    a LayerNorm or an output bias, which puzzle models do not have."""

    def __init__(self, model):
        import torch

        self.torch, self.model = torch, model

        def t(a):
            return torch.from_numpy(np.array(a, dtype=np.float64))

        self.W_E = t(model.W_E.T)  # [n_vocab, d]
        self.W_pos = None if model.W_pos is None else t(model.W_pos.T)  # [n_ctx, d]
        self.W_U = None if model.W_U is None else t(model.W_U)  # [n_vocab, d]
        self.b_U = None if model.b_U is None else t(model.b_U)
        self.layers = [
            [
                (
                    t(h.W_Q),
                    t(h.W_K),
                    t(h.W_V),
                    t(h.W_O),
                    t(h.b_Q),
                    t(h.b_K),
                    t(h.b_V),
                    h.scale,
                    h.window,
                    h.pattern,
                    h.name,
                )
                for h in (model.head(i, j) for j in range(model.n_heads(i)))
            ]
            for i in range(model.n_layers)
        ]
        self._masks: dict = {}

    @staticmethod
    def supports(model) -> bool:
        return model.ln_final is None and all(
            l.mlp is None and l.ln_attn is None and l.ln_mlp is None and l.b_O is None for l in model.layers
        )

    def _pattern(self, head, T: int):  # a fixed pattern [T, T], or the causal mask [T, T] of a computed one
        key = (head[-1], T)
        if key not in self._masks:
            torch, window, pattern = self.torch, head[8], head[9]
            idx = torch.arange(T)
            visible = idx[None, :] <= idx[:, None]
            if window:
                visible &= (idx[:, None] - idx[None, :]) < window
            if pattern is not None:
                f = torch.from_numpy(fixed_pattern(pattern, T, head[-1])).double()
                f = torch.where(visible, f, 0.0)
                total = f.sum(-1, keepdim=True)
                visible = f / torch.where(total > 0, total, 1.0)
            self._masks[key] = visible
        return self._masks[key]

    def __call__(self, ids: np.ndarray) -> np.ndarray:  # [b, T] -> [b, T, d + n_vocab]
        torch = self.torch
        with torch.inference_mode():
            T = ids.shape[1]
            x = self.W_E[torch.from_numpy(ids)]  # [b, T, d]
            if self.W_pos is not None:
                x = x + self.W_pos[:T]
            for heads in self.layers:
                out = torch.zeros_like(x)
                for head in heads:
                    W_Q, W_K, W_V, W_O, b_Q, b_K, b_V, scale = head[:8]
                    v = x @ W_V.T + b_V  # [b, T, d_head]
                    mask = self._pattern(head, T)
                    if mask.dtype == torch.bool:
                        scores = ((x @ W_Q.T + b_Q) @ (x @ W_K.T + b_K).transpose(-1, -2)) * scale  # [b, T, T]
                        pattern = torch.softmax(scores.masked_fill(~mask, -torch.inf), dim=-1)
                    else:
                        pattern = mask
                    out = out + (pattern @ v) @ W_O.T  # [b, T, d]
                x = x + out
            parts = [x]
            if self.W_U is not None:
                logits = x @ self.W_U.T
                parts.append(logits if self.b_U is None else logits + self.b_U)
            return torch.cat(parts, dim=-1).numpy()


def forwards(attempts, cfg: Settings) -> list[Figure]:
    try:
        import torch
    except ImportError:
        return [Figure("forward", "circuits vs torch forward", None, "×", ">=", 1.0, "skipped: torch not installed")]
    torch.set_num_threads(2)
    out = []
    for a in attempts:
        if a.puzzle.build is None:
            continue
        model = a.model()
        if not TorchForward.supports(model):
            out.append(
                Figure(
                    "forward",
                    f"{a.puzzle.id}: torch / circuits time",
                    None,
                    "×",
                    ">=",
                    1.0,
                    "skipped: the torch baseline has no MLP or LayerNorm",
                )
            )
            continue
        sample = a.puzzle.inputs.sample(cfg.n_batch, seed=1)
        ids = [model.encode([sample[i] for i in part])[0] for part in checker.by_length(sample)]
        tf = TorchForward(model)
        got, want = tf(ids[0]), model.run_ids(ids[0])
        expected = np.concatenate([want.resid()] + ([want.logits] if want.logits is not None else []), axis=-1)
        diff = float(np.abs(got - expected).max())
        s = best_of(
            {
                "circuits": lambda m=model, b=ids: [m.run_ids(i) for i in b],
                "torch": lambda f=tf, b=ids: [f(i) for i in b],
            },
            cfg.repeats,
        )
        out.append(
            Figure(
                "forward",
                f"{a.puzzle.id}: torch / circuits time",
                s["torch"] / s["circuits"],
                "×",
                ">=",
                1.0,
                f"{len(ids)} batches, max |Δ| {diff:.0e}",
            )
        )
    return out


# --- 5: coverage ---------------------------------------------------------------------------------------
def coverage(attempts, cfg: Settings) -> list[Figure]:
    out = []
    for a in attempts:
        p = a.puzzle
        r = checker.check(a, n_random=cfg.n_batch if cfg.quick else None, margins=False)  # the puzzle's own sample
        c = r.coverage
        if not _behaviour(a):
            fewest = min((t.checked for t in r.targets), default=0)
            out.append(
                Figure("coverage", f"{p.id}: property examples per code target", fewest, "", ">=", 100.0, r.status)
            )
            continue
        goal_random = 10_000.0 if not cfg.quick else float(cfg.n_batch)
        out += [
            Figure("coverage", f"{p.id}: random inputs", c.random, "", ">=", goal_random, r.status),
            Figure(
                "coverage",
                f"{p.id}: longest {'certified' if c.certified else 'exhaustive'} length",
                c.small_max_len,
                "",
                *((">=", float(before)) if (before := SMALL_LEN_BEFORE.get(p.id[:2])) is not None else (None, None)),
                f"{c.small:,} inputs",
            ),
            Figure("coverage", f"{p.id}: property examples", c.property_examples, "", ">=", 100.0),
        ]
    return out


# --- 6 and 7: an author's audits and the test suite (issue 26) -------------------------------------------
AUDIT_GOAL = 15.0  # s: `circuits audit N` of any shipped puzzle on two cores
SUITE_GOAL = 120.0  # s: the README's `pytest` (the [hf] tests skipped, as on a fresh machine) on two quiet cores
SUITE_CPU_GOAL = 200.0  # s of CPU: the same run (issue 39)
AUDIT_IN_FLOOR = 10.0  # issue 39: `circuits audit N` ≤ 10 I (AUDIT_GOAL where I is not measured)


def audits(attempts, cfg: Settings) -> list[Figure]:
    """What `circuits audit N` does (the reference checked, every mutant judged, each survivor's closest call, on
    every core), in this process: its wall time against the goal, its CPU time (its forked copies' too) and
    verdicts in the note."""
    from circuits.audit.author import run as audit
    from circuits.checking import cores

    out = []
    for a in attempts:
        start, cpu = time.perf_counter(), cpu_with_copies()
        result = audit(a, workers=cores.count()).result
        seconds, cpu = time.perf_counter() - start, cpu_with_copies() - cpu
        note = (
            f"{cpu:.1f} s CPU; {result.total} mutants: {len(result.killed)} killed, "
            f"{len(result.allowed)} allowed, {len(result.survived)} survived"
            + (f", {len(result.spared)} spared by a rule" if result.spared else "")
        )
        if cfg.floor is not None:  # issue 39: ≤ 10 I
            out.append(
                Figure.within("audit", f"circuits audit {a.puzzle.number}", seconds, AUDIT_IN_FLOOR, cfg.floor, note)
            )
        else:
            out.append(Figure("audit", f"circuits audit {a.puzzle.number}", seconds, " s", "<=", AUDIT_GOAL, note))
    return out


GRADE_GOAL = 10.0  # submissions of all the shipped puzzles per minute per core, by wall time (issue 39)


def grading(cfg: Settings) -> list[Figure]:
    """`circuits grade` on a class generated as benchmarks/grade.py makes one (solved, wrong, stubs and hostile
    submissions of every shipped puzzle), on one worker: submissions per minute per core by wall time against the
    goal; by CPU time in the note, with how many puzzle answers the worker's memo served (the class repeats
    answers: a real one repeats fewer)."""
    import importlib.util
    import shutil
    import tempfile

    spec = importlib.util.spec_from_file_location("circuits_bench_grade", ROOT / "benchmarks" / "grade.py")
    grade = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(grade)
    root = Path(tempfile.mkdtemp(prefix="circuits-bench-grade-"))
    try:
        r = grade.timed(grade.generate(root, cfg.grade_n), 1, grade.Limits(seconds=10.0))
    finally:
        shutil.rmtree(root, ignore_errors=True)
        Path(grade.ESCAPE).unlink(missing_ok=True)
    return [
        Figure(
            "grading",
            "circuits grade: submissions per minute per core",
            r["per_min_per_core_wall"],
            "",
            ">=",
            GRADE_GOAL,
            f"{r['per_min_per_core_cpu']:.1f} by CPU; {r['submissions']} submissions, {r['wall_s']:.0f} s wall; "
            f"memo served {r['memoised']} of {r['answers']} answers",  # the class repeats answers
        )
    ]


FRESH_MACHINE = ROOT / "benchmarks" / "fresh_machine"  # on PYTHONPATH: the optional extras look not installed


def suite(cfg: Settings) -> list[Figure]:
    """The README's test command in a fresh process, as on a fresh machine (the [hf], [notebook] and [cluster]
    extras hidden, so their tests skip): its wall time against the goal; its CPU time (user + system, every
    process it started) and how many workers ran it in the note."""
    import importlib.util
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    cmd = [sys.executable, "-m", "pytest", "-q", "-rfE", "-p", "no:cacheprovider"]
    seconds, code, said = wall(cmd, 1, first=[FRESH_MACHINE])
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    workers = "xdist workers: one per core" if importlib.util.find_spec("xdist") else "serial (no pytest-xdist)"
    note = f"{cpu:.0f} s CPU; {workers}; extras hidden" + ("" if code == 0 else f"; exit code {code}:\n{said}")
    return [
        Figure("test suite", "pytest (the README's command)", seconds, " s", "<=", SUITE_GOAL, note),
        Figure(
            "test suite",
            "pytest (the README's command): CPU",
            cpu,
            " s",
            "<=",
            SUITE_CPU_GOAL,
            "user + system, every process it started",
        ),
    ]


# --- the run and its report ----------------------------------------------------------------------------
def machine() -> dict:
    try:
        import torch

        torch_version = f"{torch.__version__} ({torch.get_num_threads()} threads)"
    except ImportError:
        torch_version = None
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    return {
        "python": platform.python_version(),
        "numpy": np.__version__,
        "torch": torch_version,
        "cores": os.cpu_count(),
        "load_average": load,
        "platform": platform.platform(),
        "processor": platform.processor() or platform.machine(),
        # set, every process compiles circuits' source again (no .pyc kept): ~0.15 s of CPU a command
        "bytecode_kept": not os.environ.get("PYTHONDONTWRITEBYTECODE"),
    }


def run(cfg: Settings, echo: Callable[[str], None] = print) -> list[Figure]:
    """Every section, each printed as it is measured."""
    attempts = references(cfg.puzzles)
    figures: list[Figure] = []
    sections = [
        ("import floor", import_floor, cfg.timed),
        ("save → verdict", verdicts, cfg.verdict),
        ("full run", pytest_run, cfg.pytest and not cfg.puzzles),
        ("one puzzle", cli_runs, cfg.cli),
        ("batching", batching, True),
        ("forward", forwards, cfg.torch),
        ("coverage", coverage, True),
        ("audit", audits, cfg.audit),
        ("grading", grading, cfg.grade and not cfg.puzzles),
        ("test suite", suite, cfg.suite and not cfg.puzzles),
    ]
    for name, section, wanted in sections:
        if not wanted:
            continue
        got = section(cfg) if section in (import_floor, pytest_run, grading, suite) else section(attempts, cfg)
        echo(table(name, got))
        figures += got
    return figures


def _num(x: float | None) -> str:
    if x is None or not np.isfinite(x):
        return "—"
    if abs(x) >= 1e4 or float(x).is_integer():
        return f"{x:,.0f}"
    return f"{x:.3g}" if abs(x) < 100 else f"{x:,.0f}"


def verdict(f: Figure) -> str:
    return "" if f.met is None else "met" if f.met else "MISSED"


def table(title: str, figures: Sequence[Figure]) -> str:
    """A section as plain text no wider than WIDTH: target, measured, goal, verdict; notes below the row."""
    lines = [f"── {title} " + "─" * (WIDTH - 4 - len(title))]
    for f in figures:
        measured = "skipped" if f.measured is None else f"{_num(f.measured)}{f.unit}"
        right = f"{measured:>10} {f.goal_text:>10} {verdict(f):>6}"
        name = f.target if len(f.target) <= WIDTH - len(right) - 2 else f.target[: WIDTH - len(right) - 3] + "…"
        lines.append(f"{name:<{WIDTH - len(right) - 1}} {right}")
        lines += [f"    {line}"[:WIDTH] for line in f.note.splitlines()]  # a failure's lines each on its own
    return "\n".join(lines)


def summary(figures: Sequence[Figure]) -> str:
    judged = [f for f in figures if f.met is not None]
    missed = [f"  missed: {f.target}"[:WIDTH] for f in judged if not f.met]
    return "\n".join([f"{sum(f.met for f in judged)} of {len(judged)} targets met", *missed])


def as_json(figures: Sequence[Figure], cfg: Settings) -> dict:
    return {
        "machine": machine(),
        "settings": {k: v if not isinstance(v, tuple) else list(v) for k, v in asdict(cfg).items()},
        "figures": [asdict(f) | {"goal_text": f.goal_text} for f in figures],
        "met": sum(bool(f.met) for f in figures),
        "judged": sum(f.met is not None for f in figures),
    }


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python benchmarks/bench.py", description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small samples, no subprocess timings (a smoke run)")
    ap.add_argument(
        "--json", nargs="?", const="-", metavar="FILE", help="write every figure as JSON (- or none: stdout)"
    )
    ap.add_argument("--repeats", type=int, help="runs per timing, the best kept (default 3, 1 with --quick)")
    ap.add_argument("--puzzle", action="append", default=[], help="only this puzzle (number, name or id); repeatable")
    ap.add_argument("--skip-pytest", action="store_true", help="skip the `pytest puzzles/ --solutions` wall time")
    ap.add_argument("--skip-cli", action="store_true", help="skip the `circuits check N --solution` wall times")
    ap.add_argument("--skip-torch", action="store_true", help="skip the torch forward comparison")
    ap.add_argument("--skip-audit", action="store_true", help="skip the `circuits audit N` times")
    ap.add_argument("--skip-suite", action="store_true", help="skip the test suite's time (`pytest`, a few minutes)")
    ap.add_argument("--skip-verdict", action="store_true", help="skip save → verdict (a warm process, as watch)")
    ap.add_argument("--skip-grade", action="store_true", help="skip `circuits grade` on a generated class")
    ap.add_argument("--grade-n", type=int, help="submissions in that class (default 10)")
    args = ap.parse_args(argv)
    kw = {"puzzles": tuple(args.puzzle)} | ({"repeats": args.repeats} if args.repeats else {})
    kw |= {
        k: False
        for k, skip in (
            ("pytest", args.skip_pytest),
            ("cli", args.skip_cli),
            ("torch", args.skip_torch),
            ("audit", args.skip_audit),
            ("suite", args.skip_suite),
            ("verdict", args.skip_verdict),
            ("grade", args.skip_grade),
        )
        if skip
    }
    kw |= {"grade_n": args.grade_n} if args.grade_n else {}
    cfg = Settings.make(args.quick, **kw)
    to_stdout = args.json == "-"
    echo = (lambda s: print(s, file=sys.stderr)) if to_stdout else print
    m = machine()
    echo(
        f"circuits benchmark · python {m['python']} · numpy {m['numpy']} · torch {m['torch'] or 'not installed'}"[
            :WIDTH
        ]
    )
    echo(f"{m['cores']} cores · load average {m['load_average']} · {m['processor']}"[:WIDTH])
    if not m["bytecode_kept"]:
        echo("PYTHONDONTWRITEBYTECODE is set: each process compiles circuits again (~0.15 s CPU)"[:WIDTH])
    figures = run(cfg, echo)
    echo(summary(figures))
    if args.json:
        text = json.dumps(as_json(figures, cfg), indent=1, ensure_ascii=False)
        if to_stdout:
            print(text)
        else:
            Path(args.json).write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
