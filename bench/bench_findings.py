"""Findings benchmark: what ``Diagnoser.observe`` and ``Diagnoser.findings`` cost per call.

    python3 bench/bench_findings.py [--hosts 10] [--interfaces 50] [--calls 50] [--smoke]

``--smoke`` (the test suite's): 2 hosts × 4 interfaces, 3 calls, to prove it still runs.

A fleet of hosts × interfaces, interface N of every host in subnet 10.N.0.0/24 (so the
subnet rules compare peers) with fresh rates every tick, fed through a full 30 s window. Two cases: a healthy
fleet (no findings) and one where every interface has errors rising (one finding each, plus
the subnet rules' work). Figures (the median call) are printed, not asserted.
"""

from __future__ import annotations

import argparse
import time
from statistics import median

from linkdeck.core.model import Counters, HostState, HostUpdate, Interface, InterfaceView, Rates
from linkdeck.findings.engine import Diagnoser
from linkdeck.settings.config import Settings


def fleet_update(host: int, n_ifaces: int, tick: int, errors: bool) -> HostUpdate:
    views = []
    for i in range(n_ifaces):
        iface = Interface(
            name=f"eth{i}",
            kind="physical",
            oper="up",
            mtu=1500,
            speed_mbps=10000,
            duplex="full",
            addresses=(f"10.{i}.0.{1 + host}/24",),
            carrier_changes=0,
            nic_counters={"rx_missed_errors": 0, "rx_packets": tick * 1000},
        )
        rates = Rates(
            rx_bps=1e8 * (1 + (i + tick) % 5),
            tx_bps=5e7,
            rx_pps=1e4,
            tx_pps=5e3,
            rx_errors_ps=5.0 if errors else 0.0,
            tx_errors_ps=0.0,
            rx_drops_ps=0.0,
            tx_drops_ps=0.0,
        )
        views.append(InterfaceView(iface=iface, rates=rates, totals=Counters(0, 0, 0, 0, 0, 0, 0, 0)))
    return HostUpdate(host=f"h{host}", os="linux", state=HostState.LIVE, time=float(tick), interfaces=tuple(views))


def run(hosts: int, n_ifaces: int, calls: int, errors: bool) -> tuple[float, float, int]:
    settings = Settings()
    diagnoser = Diagnoser(settings)
    window = int(settings.thresholds.window_s)
    # updates built beforehand: the collector builds them, not the diagnoser
    ticks = [[fleet_update(h, n_ifaces, t, errors) for h in range(hosts)] for t in range(window + calls)]
    for tick in ticks[:window]:
        for update in tick:
            diagnoser.observe(update)
    observe_s, findings_s = [], []
    count = 0
    for tick in ticks[window:]:
        start = time.process_time()
        for update in tick:
            diagnoser.observe(update)
        observe_s.append(time.process_time() - start)
        start = time.process_time()
        count = len(diagnoser.findings())
        findings_s.append(time.process_time() - start)
    # CPU time, and the median call: this machine is shared, and a preempted call says nothing
    return median(observe_s) * 1e3, median(findings_s) * 1e3, count


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hosts", type=int, default=10)
    parser.add_argument("--interfaces", type=int, default=50)
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--smoke", action="store_true", help="a second at tiny sizes: does it still run")
    args = parser.parse_args()
    if args.smoke:
        args.hosts, args.interfaces, args.calls = 2, 4, 3
    print(f"{args.hosts} hosts x {args.interfaces} interfaces, {args.calls} ticks after a full window")
    print(f"{'case':<16} {'findings':>8} {'observe, all hosts, 1 tick':>28} {'findings() per call':>20}")
    for label, errors in (("healthy", False), ("errors rising", True)):
        observe_ms, findings_ms, count = run(args.hosts, args.interfaces, args.calls, errors)
        print(f"{label:<16} {count:>8} {observe_ms:>25.2f} ms {findings_ms:>17.2f} ms")


if __name__ == "__main__":
    main()
