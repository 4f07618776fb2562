"""``linkdeck matrix HOST ...``: a bidirectional test for every ordered pair of hosts, one
after another, as a sender × receiver grid (the table troubleshooters draw by hand) or JSON / CSV.

Exit status: 0 when every test completed, 1 when any could not, 2 on usage or config errors.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys

from ..core.levels import Status
from ..core.units import printable
from ..present.outcome import matrix_cell
from ..settings.config import ConfigError
from .shared import print_json
from .test import add_test_options, load_for_test


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_test_options(parser)
    fmt = parser.add_mutually_exclusive_group()
    fmt.add_argument("--json", action="store_true", help="print every cell as JSON")
    fmt.add_argument("--csv", action="store_true", help="print one CSV row per pair tested")
    parser.add_argument(
        "--ordered",
        action="store_true",
        help="test each pair both ways round (each test already measures both directions)",
    )
    parser.add_argument("hosts", nargs="+", metavar="HOST", help="local, user@host, an ssh alias or a configured name")


def run(args: argparse.Namespace) -> int:
    try:
        settings, named, duration = load_for_test(args, args.hosts)
    except ConfigError as exc:
        print(f"linkdeck: {exc}", file=sys.stderr)
        return 2
    specs = {spec.name: spec for spec in named}
    names = list(specs)
    if len(names) < 2:
        print("linkdeck: a matrix needs at least two different hosts", file=sys.stderr)
        return 2
    from ..probe.pairs import Matrix, common_to_bad, matrix_csv, matrix_json, matrix_pairs
    from ..probe.session import run_pairs

    def progress(src: str, dst: str, outcome) -> None:
        if not (args.json or args.csv):
            print(f"  {printable(src)} → {printable(dst)}: {outcome.verdict.status}", file=sys.stderr)

    pairs = matrix_pairs(names, args.ordered)
    if args.record and os.path.exists(args.record):
        print(f"linkdeck: {args.record} exists: name a new file (a recording is never overwritten)", file=sys.stderr)
        return 2
    outcomes, _ = asyncio.run(
        run_pairs(
            specs, settings, pairs, duration, on_done=progress, record_to=args.record, matrix=True, src_iface=args.from_
        )
    )
    matrix = Matrix(names, dict(zip(pairs, outcomes)))
    if args.json:
        print_json(matrix_json(matrix))
    elif args.csv:
        sys.stdout.write(matrix_csv(matrix))
    else:
        sys.stdout.write(grid_text(matrix))
    common = common_to_bad(matrix.cells)
    if common is not None:
        print(
            f"every bad pair involves {printable(common)}: look at it first",
            file=sys.stderr if (args.json or args.csv) else sys.stdout,
        )
    return 1 if any(o.verdict.status is Status.ERROR for o in outcomes) else 0


def grid_text(matrix) -> str:
    """Sender rows × receiver columns, each cell both directions' rates, each beside its own
    percentage of expected, and the retransmits each way; a legend line under it."""
    names = [printable(h) for h in matrix.hosts]
    texts = {
        (s, d): "—" if (o := matrix.cell(s, d)) is None else matrix_cell(o)[0]
        for s in matrix.hosts
        for d in matrix.hosts
    }
    width = max(18, *(len(n) + 2 for n in names), *(len(t) + 2 for t in texts.values()))
    lines = ["sender \\ receiver".ljust(width) + "".join(n.rjust(width) for n in names)]
    lines += [
        label.ljust(width) + "".join(texts[(src, dst)].rjust(width) for dst in matrix.hosts)
        for src, label in zip(matrix.hosts, names)
    ]
    legend = "each cell: sender → receiver rate and % of expected / receiver → sender; r: retransmits each way"
    if any(matrix.cell(d, s) is None for s, d in matrix.cells):
        legend += "; each pair tested once, both directions in its cell (--ordered tests both ways round)"
    return "\n".join([*lines, legend]) + "\n"
