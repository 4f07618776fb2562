"""``linkdeck test SRC DST``: one bidirectional iperf3 test while both ends are watched, and
its verdict. The same host twice measures that host's own ceiling over loopback.

Exit status: 0 when the test completed (whatever the verdict), 1 when it could not
(verdict "error"), 2 on usage or config errors.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from dataclasses import replace

from ..config import ConfigError, HostSpec, Settings, host_from_arg, load
from ..units import printable, rate
from ..verdict import counters_vs_iperf3


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("src", metavar="SRC", help="the sending host (iperf3 client): local, user@host, an ssh alias or a configured name")
    parser.add_argument("dst", metavar="DST", help="the receiving host (iperf3 server); the same as SRC for its loopback ceiling")
    add_test_options(parser)
    parser.add_argument("--json", action="store_true", help="print the result as JSON (fields as in the README)")
    parser.add_argument("--address", metavar="A", help="DST's address to test (default: its address in a subnet SRC shares)")


def add_test_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--time", type=float, metavar="S", help="seconds per test (default: [test] duration, 5)")
    parser.add_argument("--config", metavar="FILE", help="config file (default: $LINKDECK_CONFIG, then the user config dir)")
    parser.add_argument("--ssh-config", metavar="FILE", help="ssh client config (default: ~/.ssh/config)")


def load_for_test(args: argparse.Namespace, names: list[str]) -> tuple[Settings, dict[str, HostSpec], float]:
    """Settings, the named hosts by name and the duration; ConfigError on bad input."""
    settings = load(args.config)
    if args.ssh_config:
        settings = replace(settings, ssh_config=args.ssh_config)
    duration = settings.test_duration if args.time is None else args.time
    if not 1 <= duration <= 600:
        raise ConfigError(None, "--time must be between 1 and 600 seconds")
    specs = {}
    for name in names:
        spec = host_from_arg(name, settings.hosts)
        specs[spec.name] = spec
    return settings, specs, duration


def run(args: argparse.Namespace) -> int:
    from ..probe.templates import check_address
    from ..probe.errors import ProbeError

    try:
        settings, specs, duration = load_for_test(args, [args.src, args.dst])
        if args.address:
            check_address(args.address)
    except (ConfigError, ProbeError) as exc:
        print(f"linkdeck: {exc}", file=sys.stderr)
        return 2
    src, dst = host_from_arg(args.src, settings.hosts).name, host_from_arg(args.dst, settings.hosts).name
    from ..probe.hosts import run_pairs
    from ..probe.matrix import outcome_json

    outcomes, _ = asyncio.run(run_pairs(specs, settings, [(src, dst)], duration, address=args.address))
    outcome = outcomes[0]
    if args.json:
        json.dump(outcome_json(outcome), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(outcome_text(outcome))
    return 1 if outcome.verdict.status == "error" else 0


def outcome_text(o) -> str:
    """The plain-text report of one test."""
    r, v = o.result, o.verdict
    name = lambda s: printable(str(s))  # noqa: E731 - host and interface names come from users and hosts
    title = f"{name(r.src)} → {name(r.dst)}" if r.src != r.dst else f"{name(r.src)} ceiling (loopback)"
    lines = [f"{title}  {name(r.address)}  {r.duration_s:.1f} s" + (f"  iperf3 {r.iperf3_version}" if r.iperf3_version else "")]
    if r.error:
        lines.append(f"  error: {name(r.error)}")
        return "\n".join(lines) + "\n"
    lines.append(f"  {name(r.src)}→{name(r.dst)}  {rate(r.forward_bps):>12}   retransmits {_n(r.forward_retransmits)}")
    if r.src != r.dst:  # a ceiling runs one way
        lines.append(f"  {name(r.dst)}→{name(r.src)}  {rate(r.reverse_bps):>12}   retransmits {_n(r.reverse_retransmits)}")
    rtt = f"{r.rtt_ms:.2f} ms" if r.rtt_ms is not None else "—"
    lines.append(f"  RTT {rtt}   CPU {name(r.src)} {_pct(r.cpu_src_pct)}  {name(r.dst)} {_pct(r.cpu_dst_pct)}")
    lines.append(f"  expected {rate(v.expected_bps)}   reached {_pct(v.pct_of_expected)}")
    lines.append(f"  verdict: {v.status.upper()} — {name(v.summary)}")
    for c in v.causes:
        lines.append(f"    {c.code}: {name(c.message)}")
        lines.append(f"      {name(c.evidence)}")
    mtu = o.src.iface.mtu if o.src.iface else None
    for direction, row in counters_vs_iperf3(r, mtu).items():
        if row["iperf3_bps"] is None:
            continue
        lines.append(
            f"  counters {direction}: sender tx {rate(row['sender_tx_bps'])}, receiver rx {rate(row['receiver_rx_bps'])}"
            f" vs iperf3 {rate(row['iperf3_bps'])} ({rate(row['frames_bps'])} in frames)"
            + (f", {row['diff_pct']:+.1f} %" if row["diff_pct"] is not None else "")
        )
    return "\n".join(lines) + "\n"


def _n(value: int | None) -> str:
    return "—" if value is None else str(value)


def _pct(value: float | None) -> str:
    return "—" if value is None else f"{value:.0f} %"
