"""CI: the clone's own puzzles/ holds exactly the shipped stubs (the tests never read that folder, a learner's)."""

import sys
from pathlib import Path

from circuits.workspace.init import files

root = Path(__file__).resolve().parent.parent
wrong = [
    rel
    for rel, text in files()
    if rel.startswith("puzzles/") and (not (root / rel).is_file() or (root / rel).read_text(encoding="utf-8") != text)
]
extra = sorted({p.name for p in (root / "puzzles").glob("[0-9][0-9]_*.py")} - {Path(r).name for r, _ in files()})
if wrong or extra:
    print(
        f"puzzles/ differs from the shipped stubs: {', '.join(wrong + extra)}"
        " (regenerate them with circuits.workspace.reset.stub_text)"
    )
    sys.exit(1)
print(f"puzzles/: the {len([r for r, _ in files() if r.startswith('puzzles/')])} shipped stubs")
