"""What `circuits show` prints for one input, and `circuits.show(...)` as text: every head's pattern as a labelled
heatmap, what each MLP writes into each residual direction, and each target's per-position yours vs expected."""

from __future__ import annotations

import numpy as np
from rich.text import Text

from circuits.display.render import number_text, pattern_heatmap, short_label
from circuits.display.tables import readout_table, title
from circuits.targets.base import Shows


def mlp_writes(trace, layer: int, n: int = 0):
    """What the MLP of `layer` writes at each position of input `n`, one column per residual direction it writes
    (labelled by name): the numbers to compare with what the next parts read. None when the layer has no MLP."""
    from circuits.display.render import Fit

    out = trace.layers[layer].mlp_out
    if out is None:
        return None
    out = out[n]  # [T, d_model]
    labels = trace.model.residual.labels
    W_out = np.asarray(trace.model.blocks[layer].mlp.W_out, dtype=float)  # [d_model, d_mlp]
    cols = [i for i in range(len(labels)) if np.abs(W_out[i]).any() or np.abs(out[:, i]).max() > 1e-12]
    tokens = trace.tokens(n)
    rows = list(range(len(tokens)))
    heading = f"the MLP of layer {layer} writes, per position (rows) into each direction (columns)"
    if not cols:
        return Text(f"the MLP of layer {layer} writes nothing at any position (W_out is zero)")
    return Fit(
        [("pos token", [f"{q} {short_label(tokens[q])}" for q in rows])],
        [
            (
                labels[i],
                [
                    Text(number_text(round(float(out[q, i]), 4)), style="dim" if abs(out[q, i]) < 1e-12 else "")
                    for q in rows
                ],
            )
            for i in cols
        ],
        title=heading,
        padding=1,
    )


def show_parts(trace, targets: list[dict] | None = None, n: int = 0) -> list:
    """The renderables of one input's view: heads (the attention targets' keys marked), MLPs, then the targets."""
    model = trace.model
    labels = trace.tokens(n)
    targets = targets or []
    marked = {tuple(t["head"]): t for t in targets if t["kind"] is Shows.ATTENTION}
    parts: list = []
    for l in range(model.n_layers):
        for h in range(model.n_heads(l)):
            target = marked.get((l, h))
            heading = f"head {l}.{h}" + (f" — {target['label']} (* = expected key)" if target else "")
            parts += [
                title(heading),
                pattern_heatmap(trace.pattern(l, h)[n], labels, targets=target["expected"] if target else None),
                Text(""),
            ]
        if (writes := mlp_writes(trace, l, n)) is not None:
            parts += [writes, Text("")]
    for target in targets:
        if target["kind"] is not Shows.ATTENTION:
            parts += [
                title(f"{target['label']} — {target['readout']}, yours vs expected"),
                readout_table(target, labels),
                Text(""),
            ]
    return parts


def trace_text(trace, width: int = 80) -> str:
    """A trace as text, as a terminal or a notebook prints it: its first input's view, as `circuits show` gives it."""
    from circuits.display.terminal import to_text

    head = f"{getattr(trace.model, 'name', '') or 'model'} on {' '.join(map(repr, trace.tokens(0)))}"
    more = f" (the first of {trace.batch} inputs)" if trace.batch > 1 else ""
    return (head + more + "\n\n" + "".join(to_text(p, width=width) for p in show_parts(trace))).rstrip()
