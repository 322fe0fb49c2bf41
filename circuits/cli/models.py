"""The verbs that look inside a model: show (one input's patterns), analyze (its circuits), scan (a real model)."""

from __future__ import annotations

import json
import sys

from circuits.cli.puzzles import _console, _load
from circuits.errors import CircuitError

MAX_TOKENS = 1024  # the longest input `show` and `scan` run on a model without n_ctx: patterns grow as tokens²


def _built(args, verb: str):
    """The attempt and the model its answer builds, or one line saying why there is none."""
    if getattr(args, "html", None):
        from circuits.display.html import html_target

        html_target(args.html, args.force)  # a page that cannot be written is refused before any work
    attempt = _load(args.puzzle, args.solution)
    if not attempt.attempted:
        raise CircuitError(f"{attempt.puzzle.id} is not attempted yet: fill in {', '.join(attempt.missing)} first")
    if attempt.puzzle.build is None:
        raise CircuitError(f"{attempt.puzzle.id} is a code puzzle: it has no model to {verb}")
    return attempt, attempt.model()


def shown_targets(attempt, trace, tokens) -> list[dict]:
    """Every behaviour target the puzzle checks, on one input: what it expects and what the model does, per position."""
    return [shown for t in attempt.puzzle.targets if (shown := t.shown(trace, tokens)) is not None]


def cmd_show(args) -> int:
    from circuits.display.shown import show_parts
    from circuits.targets import Shows

    attempt, model = _built(args, "show")
    tokens = model.vocab.split(args.input)
    check_length(model, len(tokens), "the input")
    model.vocab.encode(args.input)  # an unknown token is reported against the text as typed
    trace = model.run([tokens])
    labels = trace.tokens(0)
    targets = shown_targets(attempt, trace, tokens)
    patterns = [[trace.pattern(l, h)[0].tolist() for h in range(model.n_heads(l))] for l in range(model.n_layers)]
    if args.html:
        from circuits.display.html import write_html

        write_html(args.html, trace, force=args.force)
    if args.json:
        first = targets[0] if targets else {"readout": "", "output": [], "expected": [], "kind": None}
        expected = (
            [max(k) if k else None for k in first["expected"]]
            if first["kind"] is Shows.ATTENTION
            else first["expected"]
        )
        print(
            json.dumps(
                {
                    "puzzle": attempt.puzzle.id,
                    "tokens": labels,
                    "patterns": patterns,
                    "targets": targets,
                    # the first target alone, as before `targets` (attention: the latest expected key)
                    "readout": first["readout"],
                    "output": first["output"],
                    "expected": expected,
                }
            )
        )
        return 0
    c = _console()
    for part in show_parts(trace, targets):
        c.print(part)
    if args.html:
        c.print(f"wrote {args.html}", markup=False, highlight=False)
    return 0


def cmd_analyze(args) -> int:
    attempt, model = _built(args, "analyze")
    example = list(attempt.puzzle.examples[:1]) or None  # the worked example shows the patterns the puzzle is about
    return analyze_command(model, args.html, args.json, sys.stdout, inputs=example, force=args.force)


def analyze_command(
    model, html: str | None = None, as_json: bool = False, out=None, inputs=None, force: bool = False
) -> int:
    """`circuits analyze`: print the report (or JSON) to `out`, or write HTML to the path `html` and say so; returns 0.

    `force` lets the page replace an existing file that circuits did not write (never a Python file).
    """
    from circuits.analysis.summary import analyze, example_inputs

    out = out if out is not None else sys.stdout
    trace = model.run(inputs if inputs is not None else example_inputs(model))
    summary = analyze(model, trace)
    if as_json:
        json.dump(summary, out, indent=1, allow_nan=False)
        out.write("\n")
    elif not html:  # with --html the page is the report: one line says where it is
        from circuits.display.render import analysis_report
        from circuits.display.terminal import console

        console(file=out).print(analysis_report(summary))
    if html:
        from circuits.display.html import write_html

        path = write_html(html, trace=trace, model=model, summary=summary, force=force)
        if not as_json:
            out.write(f"wrote {path}\n")
    return 0


def check_length(model, n_tokens: int, what: str) -> None:
    """Refuse, before any work, an input too long for a model without n_ctx (the model itself checks its n_ctx)."""
    if model.n_ctx is None and n_tokens > MAX_TOKENS:
        raise CircuitError(
            f"{what} has {n_tokens} tokens; a model without n_ctx takes at most {MAX_TOKENS} "
            "(MAX_TOKENS in circuits/cli.py)"
        )


def _scanned_model(args):
    """The model named on the command line, and the BOS id to put in front of the scanned tokens."""
    if args.npz:
        from circuits.io.export import load

        return load(args.npz), None
    from circuits.io.hf import from_hf, load_hf, load_tokenizer

    hf_model = load_hf(args.hf)
    model = from_hf(hf_model, tokenizer=load_tokenizer(args.hf, required=False, n_vocab=hf_model.config.vocab_size))
    bos = hf_model.config.bos_token_id
    return model, (int(bos) if bos is not None and 0 <= bos < len(model.vocab) else None)


def _check_scan_numbers(args) -> None:
    """Numbers on the command line that are out of range, in one line, before a model is loaded."""
    from circuits.analysis.scan import MAX_BATCH

    if args.seed < 0:
        raise CircuitError(f"--seed {args.seed}: a seed is a whole number ≥ 0")
    if args.top < 1:
        raise CircuitError(f"--top {args.top}: show at least 1 head per behaviour")
    if not 1 <= args.batch <= MAX_BATCH:
        raise CircuitError(
            f"--batch {args.batch}: choose from 1 to {MAX_BATCH} sequences (MAX_BATCH in circuits/analysis/scan.py)"
        )
    if args.seq_len < 1:
        raise CircuitError(f"--seq-len {args.seq_len}: choose at least 1 token before the repeat")


def _check_scan_size(model, args, bos_id: int | None) -> None:
    """Refuse a scan longer than MAX_TOKENS (without n_ctx) or whose patterns would not fit MAX_PATTERN_BYTES."""
    from circuits.analysis.scan import MAX_PATTERN_BYTES

    bos = bos_id is not None
    T = 2 * args.seq_len + bos
    if model.n_ctx is not None and T > model.n_ctx:
        return  # repeated_inputs says the model's own limit
    if model.n_ctx is None and T > MAX_TOKENS:
        raise CircuitError(
            f"--seq-len {args.seq_len} makes {T} tokens; a model without n_ctx takes at most "
            f"{MAX_TOKENS} (MAX_TOKENS in circuits/cli.py): use --seq-len ≤ {(MAX_TOKENS - bos) // 2}"
        )
    heads = sum(model.n_heads(l) for l in range(model.n_layers))
    need = 8 * args.batch * heads * T * T
    if need > MAX_PATTERN_BYTES:
        raise CircuitError(
            f"--batch {args.batch} × {T} tokens on {heads} heads needs {need / 2**20:,.0f} MiB of "
            f"attention patterns; the limit is {MAX_PATTERN_BYTES / 2**20:,.0f} MiB "
            "(MAX_PATTERN_BYTES in circuits/analysis/scan.py): use a smaller --batch or --seq-len"
        )


def cmd_scan(args) -> int:
    """`circuits scan …`: print the ranked heads of a real model."""
    from circuits.analysis.scan import DEFAULT_BEHAVIOURS, scan

    _check_scan_numbers(args)
    behaviours = list(dict.fromkeys(b for names in (args.behaviour or [list(DEFAULT_BEHAVIOURS)]) for b in names))
    model, bos_id = _scanned_model(args)
    _check_scan_size(model, args, bos_id)
    result = scan(
        model,
        behaviours=behaviours,
        threshold=args.threshold,
        seq_len=args.seq_len,
        batch=args.batch,
        seed=args.seed,
        bos_id=bos_id,
    )
    if args.json:
        print(json.dumps(result.to_dict(), indent=1))
    else:
        from circuits.display.tables import scan_table

        _console().print(scan_table(result, top=args.top))
    return 0
