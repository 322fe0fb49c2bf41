"""PatchedMLP's words: the worst of the residual vectors fed to an MLP, what it wrote there and what was wanted.

The facts are measured where the check runs (targets/patched.py); here they are said.
"""

from __future__ import annotations

from circuits.explain.tables import words
from circuits.targets.patched import PatchedMiss


def _values(names, values) -> str:
    return ", ".join(f"{n} {round(v, 3) + 0.0:g}".replace("-", "−") for n, v in zip(names, values))


@words.register
def _(f: PatchedMiss) -> str:
    return (
        f"of {f.n:,} residual vectors fed to the MLP of layer {f.layer}, the worst is {f.case}: it writes "
        f"{_values(f.names, f.yours)}, expected {_values(f.names, f.expected)}: off by {f.error:.3g} "
        f"(tolerance {f.tol:g})"
    )
