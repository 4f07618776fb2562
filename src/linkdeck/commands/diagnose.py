"""``linkdeck diagnose SRC DST``: the whole method of finding a slow path's cause in one
command and one page — both ends alone (state, findings, interfaces, TCP health, each host's
ceiling over loopback), the path (its MTU both ways, the bidirectional test, live on a
terminal, each direction alone when it falls short without a cause, every address of DST in
SRC's subnets), then the causes ranked by evidence and what was ruled out.

Exit status as ``linkdeck test``: 0 when the test completed (whatever the verdict), 1 when
it could not, 2 on usage or config errors.
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import sys
from typing import TextIO

from ..core.levels import Status
from ..present.fit import hanging
from ..settings.config import ConfigError
from .shared import add_config_arguments, print_json
from .test import LivePrinter, load_for_test


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "src",
        metavar="SRC",
        help="the sending host (iperf3 client): local, user@host, an ssh alias or a configured name",
    )
    parser.add_argument("dst", metavar="DST", help="the receiving host (iperf3 server), another host than SRC")
    parser.add_argument(
        "--time", type=float, metavar="S", help="seconds of the path's test (default: [test] duration, 5)"
    )
    parser.add_argument(
        "-P",
        "--parallel",
        type=int,
        metavar="N",
        help="parallel TCP streams each way (iperf3 -P; default: [test] streams, 1)",
    )
    parser.add_argument(
        "--from",
        dest="from_",
        metavar="IF|ADDR",
        help="the path's test sends from this interface (or the interface holding this address) of SRC",
    )
    parser.add_argument(
        "--json", action="store_true", help='print {"src", "dst", "verdict", "causes", "ruled_out", "steps"} as JSON'
    )
    add_config_arguments(parser)


def run(args: argparse.Namespace) -> int:
    try:
        settings, (src_spec, dst_spec), duration = load_for_test(args, [args.src, args.dst])
        if src_spec.name == dst_spec.name:
            raise ConfigError(
                None,
                "SRC and DST are the same host: "
                "a diagnosis needs two (`linkdeck test H H` measures one host's ceiling)",
            )
    except ConfigError as exc:
        print(f"linkdeck: {exc}", file=sys.stderr)
        return 2
    from ..present.diagnose_page import diagnosis_json, diagnosis_text, rank
    from ..probe.diagnose_steps import run_diagnosis
    from ..probe.session import watching

    src, dst = src_spec.name, dst_spec.name
    live = (
        LivePrinter(sys.stdout, shutil.get_terminal_size().columns) if not args.json and sys.stdout.isatty() else None
    )

    def step(name: str, _d) -> None:
        if live is not None:
            sys.stdout.write(f"… {name} done\n")
            sys.stdout.flush()

    async def go():
        async with watching({src: src_spec, dst: dst_spec}, settings, [src, dst]) as (watch, session):
            on_live = (lambda kind, data: live(src, dst, kind, data)) if live else None
            return await run_diagnosis(
                watch, session, src, dst, duration, settings.test_streams, step, on_live, src_iface=args.from_
            )

    d = asyncio.run(go())
    judged = rank(d)
    if args.json:
        print_json(diagnosis_json(d, judged))
    else:
        sys.stdout.write(page_for(diagnosis_text(d, judged), sys.stdout))
    return 1 if d.test is None or d.test.verdict.status is Status.ERROR else 0


def page_for(page: str, out: TextIO) -> str:
    """``page`` as printed to ``out``: on a terminal, a line too long for it wraps under its own
    start (present.fit.hanging); to a pipe or a file, each line whole, for grep and diff."""
    if not out.isatty():
        return page
    return "\n".join(hanging(page.rstrip("\n").split("\n"), shutil.get_terminal_size().columns)) + "\n"
