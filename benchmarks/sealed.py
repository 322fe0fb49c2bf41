"""What the sealed verdict costs: loading a learner's file in a fenced child, beside loading it in-process.

    python benchmarks/sealed.py [--repeat N] [--puzzles 1,8,21]

Prints, per puzzle, the median seconds (wall) of
  in-process  the shipped reference loaded here (what every check did before the seal; the floor),
  warm        a learner's copy of it loaded through the warm process (a fork per file: check, watch,
              list, pytest),
  cold        the same with the warm process started for it (what one `circuits check` pays),
and the import floor I (`python -c "import numpy, sympy, rich.console"`) measured in the same run, so the
figures compare across machines. Goal (issue 34/39): warm overhead well under 0.3 I per check.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from circuits.checking import curriculum, loader  # noqa: E402
from circuits.sealed import sandbox  # noqa: E402


def import_floor(repeat: int) -> float:
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import numpy, sympy, rich.console"], check=True)
        runs.append(time.perf_counter() - start)
    return statistics.median(runs)


def timed(fn, repeat: int) -> float:
    runs = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        runs.append(time.perf_counter() - start)
    return statistics.median(runs)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--repeat", type=int, default=5)
    p.add_argument("--puzzles", default="0,1,8,21,26")
    args = p.parse_args()
    wanted = {int(n) for n in args.puzzles.split(",")}
    stems = [s for s in curriculum.ids() if int(s[:2]) in wanted]
    floor = import_floor(args.repeat)
    work = Path(tempfile.mkdtemp(prefix="circuits-bench-sealed-"))
    try:
        (work / "puzzles").mkdir()
        start = time.perf_counter()
        sandbox.warm().spawn  # noqa: B018 - started: its first job waits for it to be ready
        first = None
        print(f"import floor I = {floor:.3f} s (median of {args.repeat})")
        print(f"{'puzzle':24} {'in-process':>11} {'warm':>8} {'cold':>8} {'warm - in':>10} {'(in I)':>7}")
        for stem in stems:
            ref = curriculum.reference_file(stem)
            mine = work / "puzzles" / f"{stem}.py"
            shutil.copy(ref, mine)
            if first is None:
                loader.load(mine)
                first = time.perf_counter() - start
            here = timed(lambda: loader._execute(ref, str(ref), "bench"), args.repeat)
            warm = timed(lambda: loader.load(mine), args.repeat)
            sandbox.stop_warm()
            cold = timed(lambda: (sandbox.stop_warm(), loader.load(mine)), max(1, args.repeat // 2))
            sandbox.warm()
            print(f"{stem:24} {here:11.3f} {warm:8.3f} {cold:8.3f} {warm - here:10.3f} {(warm - here) / floor:7.2f}")
        print(
            f"the warm process's start, to its first file loaded: {first:.3f} s "
            "(paid once per command, while the command imports)"
        )
    finally:
        sandbox.stop_warm()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
