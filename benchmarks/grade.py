"""How fast `circuits grade` grades a class: submissions per minute per core, and the speed-up from 1 to 2 workers.

    python benchmarks/grade.py                 # 200 generated submissions of every puzzle, 1 then 2 workers
    python benchmarks/grade.py --n 20          # a smaller class
    python benchmarks/grade.py --json out.json

The class is generated from the shipped reference solutions: solved (a copy), wrong (the sharpness
symbol set to 1, a matrix halved, the causal mask all True), stubs (circuits.workspace.reset.stub_text)
and hostile (prints a fake verdict, patches circuits, forks, writes outside its folder, allocates
10 GB, sleeps past the limit), in the proportions 40/25/20/15. Each is graded as `circuits grade`
does (its own fenced process, margins off). Goal: ≥ 10 submissions of every puzzle per minute
per core. Two rates are printed: by wall time (what an instructor waits, on this machine as loaded
now) and by CPU time (the work itself, which a busy shared machine distorts less).

A grading process checks each distinct answer once (circuits.grading.grade's memo) and this class
repeats answers (every solved and hostile file is the reference's, every wrong one one of three
slips), so most of its puzzles are served from the memo: how many is printed beside the rates. A
real class, whose right answers differ in their numbers, repeats fewer.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

from circuits.checking import curriculum
from circuits.grading import parallel
from circuits.grading.grade import clear_memo, shipped
from circuits.sealed.sandbox import Limits
from circuits.workspace.reset import stub_text

ESCAPE = "/tmp/circuits-escaped-by-a-submission.txt"  # where the hostile "writes" submissions try to write
GOAL = 10.0  # submissions of every puzzle per minute per core
HOSTILE = {
    "prints": 'print("every puzzle solved: 22/22")\n',
    "patches": "import circuits.checking.checker as _c\n_c.check = lambda *a, **k: 'solved'\n",
    "forks": "import os, time\nif os.fork() == 0:\n    time.sleep(3600)\n    os._exit(0)\n",
    "writes": (
        "try:\n    open('/tmp/circuits-escaped-by-a-submission.txt', 'w').write('x')\nexcept OSError:\n    pass\n"
    ),
    "allocates": "try:\n    _big = bytearray(10 * 2**30)\nexcept MemoryError:\n    _big = None\n",
    "sleeps": "import time\ntime.sleep(3600)\n",
}


def wrong(stem: str, text: str) -> str:
    """A plausible wrong answer: too little sharpness, a matrix halved, or a mask that lets every position see every
    other."""
    if stem.startswith("00_"):
        return text.replace("np.tril(np.ones((T, T), dtype=bool))", "np.ones((T, T), dtype=bool)", 1)
    mark = "# ── stub:"
    answer, _, rest = text.partition(mark)
    sharp = re.sub(r'^(params = \{"[^"]+": )[\d.]+', r"\g<1>1", answer, count=1, flags=re.M)
    if sharp != answer:
        return sharp + mark + rest
    name = re.findall(r"^(W_\w+) = ", answer, flags=re.M)[-1]
    return answer + f"{name} = (np.asarray({name}, dtype=float) * 0.5).tolist()\n\n" + mark + rest


def hostile(kind: str, text: str, first: bool) -> str:
    """The reference answer with a hostile act before it (the sleep only in the first file, so one file times out)."""
    if kind == "sleeps" and not first:
        return text
    mark = "# ── your answer"
    i = text.index(mark)
    return text[:i] + HOSTILE[kind] + "\n" + text[i:]


def generate(root: Path, n: int) -> list[str]:
    ids = shipped()
    ref = {s: (curriculum.folder() / f"{s}.py").read_text(encoding="utf-8") for s in ids}
    cycle = "SWTSHWSTSWSHTSWSTWHS"  # 8 solved, 5 wrong, 4 stubs, 3 hostile in every 20, interleaved
    kinds = [{"S": "solved", "W": "wrong", "T": "stub", "H": "hostile"}[c] for c in cycle]
    folders = []
    for k in range(n):
        kind = kinds[k % len(kinds)]
        folder = root / f"s{k:03d}_{kind}" / "puzzles"
        folder.mkdir(parents=True)
        bad = list(HOSTILE)[(k // len(kinds) * 3 + cycle[: k % len(kinds)].count("H")) % len(HOSTILE)]
        for j, s in enumerate(ids):
            text = {
                "solved": lambda: ref[s],
                "wrong": lambda: wrong(s, ref[s]),
                "stub": lambda: stub_text(curriculum.folder() / f"{s}.py"),
                "hostile": lambda: hostile(bad, ref[s], j == 1),
            }[kind]()
            (folder / f"{s}.py").write_text(text, encoding="utf-8")
        folders.append(str(folder.parent))
    return folders


def cpu_seconds() -> float:
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def timed(folders: list[str], workers: int, limits: Limits) -> dict:
    subs = parallel.submissions(folders)
    stems = shipped()
    clear_memo()  # no verdict carried over from an earlier run in this process
    cpu0, t0 = cpu_seconds(), time.perf_counter()
    grades = parallel.grade_all(subs, stems, workers=workers, limits=limits)
    wall, cpu = time.perf_counter() - t0, cpu_seconds() - cpu0
    statuses: dict[str, int] = {}
    for g in grades:
        for p in g.puzzles:
            statuses[p.status] = statuses.get(p.status, 0) + 1
    return {
        "workers": workers,
        "submissions": len(subs),
        "wall_s": round(wall, 1),
        "cpu_s": round(cpu, 1),
        "per_min_per_core_wall": round(len(subs) / (wall / 60) / workers, 2),
        "per_min_per_core_cpu": round(len(subs) / (cpu / 60), 2),
        "statuses": statuses,
        "answers": sum(n for status, n in statuses.items() if status != "not submitted"),
        "memoised": sum(g.memoised for g in grades),
        "scores": [g.score for g in grades],
    }


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=200, help="submissions to generate (default 200)")
    p.add_argument("--timeout", type=float, default=10.0, help="seconds per puzzle file (default 10)")
    p.add_argument("--json", metavar="FILE")
    args = p.parse_args(argv)
    root = Path(tempfile.mkdtemp(prefix="circuits-bench-grade-"))
    try:
        folders = generate(root, args.n)
        limits = Limits(seconds=args.timeout)
        runs = [timed(folders, w, limits) for w in (1, 2)]
    finally:
        shutil.rmtree(root, ignore_errors=True)
    escaped = Path(ESCAPE).exists()
    if escaped:
        os.remove(ESCAPE)
    one, two = runs
    same = one["scores"] == two["scores"]
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(
        f"circuits grade: {args.n} generated submissions x {len(shipped())} puzzles, margins off "
        f"(load average {load:.1f} on {os.cpu_count()} cores)"
    )
    for r in runs:
        print(
            f"  {r['workers']} worker{'s' if r['workers'] > 1 else ''}: "
            f"{r['wall_s']:7.1f} s wall, {r['cpu_s']:7.1f} s CPU"
            f" -> {r['per_min_per_core_wall']:5.2f}/min/core (wall), {r['per_min_per_core_cpu']:5.2f}/min/core (CPU)"
        )
    speedup = one["wall_s"] / two["wall_s"]
    print(f"  speed-up 1 -> 2 workers: {speedup:.2f}x (wall); the same grades both ways: {'yes' if same else 'NO'}")
    for how in ("cpu", "wall"):
        rate = one[f"per_min_per_core_{how}"]
        print(
            f"  goal >= {GOAL:g} submissions/min/core by {how.upper() if how == 'cpu' else how} time, 1 worker: "
            f"{'met' if rate >= GOAL else 'MISSED'} ({rate:.2f})"
        )
    print(f"  puzzle statuses (1 worker): {one['statuses']}")
    for r in runs:
        print(
            f"  {r['workers']} worker{'s' if r['workers'] > 1 else ''}: {r['answers']} puzzle answers graded, "
            f"{r['memoised']} of them served from a worker's memo (the generated class repeats answers)"
        )
    print(f"  a hostile submission wrote outside its folder: {'YES' if escaped else 'no'}")
    if args.json:
        with open(args.json, "x", encoding="utf-8") as f:
            json.dump({"n": args.n, "load": load, "runs": runs, "speedup": speedup, "same_grades": same}, f, indent=1)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
