"""Benchmark of the path MTU probe every test runs first (issue 10.2), in the namespace lab
(needs root).

    cd /work/main && python3 bench/bench_pmtu.py [--runs 5] [--time 3] [--smoke]

``--smoke`` (the test suite's): one 1 s test per case, to prove it still runs.

Prints, over real SSH with the connections already open (as the dashboard keeps them):
  - the probe alone (both directions at once) on a clean 1500 pair, a clean 9000 pair, and a
    9000 pair whose bridge ports carry 1500 (offload off): seconds and what it found;
  - the probe's share of whole tests (``timings["path_mtu"] - timings["start"]``);
  - the dashboard key press (Enter in the peer picker) → the verdict on screen for a test of
    ``--time`` seconds, the probe included (bench_probe.py's measurement).
Goals (issue 10): the probe adds ≤ 0.3 s per test; key press to verdict for a 3 s test ≤ 3.5 s.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_probe import keypress  # noqa: E402

from linkdeck.probe.session import EndPool, Watch  # noqa: E402
from linkdeck.probe.watched import iface_holding, plan_pair, probe_pair, run_watched  # noqa: E402
from tests.lab import Lab  # noqa: E402

JUMBO = {"mtu": 9000, "offload": False}
PAIRS = (("clean 1500", "h1", "h2"), ("clean 9000", "j1", "j2"), ("9000 over a 1500 bridge", "b1", "b2"))


async def probes(lab: Lab, runs: int, seconds: float) -> None:
    names = [n for _, a, b in PAIRS for n in (a, b)]
    settings = lab.settings(interval=1.0)
    watch = Watch([lab.spec(n) for n in names], settings)
    pool = EndPool(settings)
    await watch.start()
    try:
        print(f"== the probe alone, both ways at once, warm connections ({runs} runs each) ==")
        for label, a, b in PAIRS:
            src, dst = await pool.get(lab.spec(a)), await pool.get(lab.spec(b))
            address, src_if = plan_pair(a, b, watch.latest)
            got = []
            for _ in range(runs):
                got.append(
                    await probe_pair(src, dst, address, watch.latest, src_if, iface_holding(watch.latest(b), address))
                )
                await asyncio.sleep(0.2)
            secs = [p.seconds for p in got]
            p = got[-1]
            print(
                f"{label:<26} median {statistics.median(secs):.3f} s  max {max(secs):.3f} s   "
                f"forward {p.forward} reverse {p.reverse} (MTU {p.forward_mtu}/{p.reverse_mtu})"
                + (f"  note: {p.note}" if p.note else "")
            )
        print(f"\n== the probe inside whole {seconds:g} s tests (run_watched) ==")
        for label, a, b in PAIRS:
            src, dst = await pool.get(lab.spec(a)), await pool.get(lab.spec(b))
            address, src_if = plan_pair(a, b, watch.latest)
            shares = []
            for _ in range(max(1, runs // 2)):
                o = await run_watched(src, dst, address, seconds, watch.latest, src_iface=src_if)
                shares.append(
                    (o.timings["path_mtu"] - o.timings["start"], o.timings["verdict"] - o.timings["start"], o.verdict)
                )
                await asyncio.sleep(0.3)
            v = shares[-1][2]
            print(
                f"{label:<26} probe {statistics.median(s[0] for s in shares):.3f} s of "
                f"{statistics.median(s[1] for s in shares):.3f} s start → verdict   verdict {v.status}: "
                f"{v.summary[:90]}"
            )
    finally:
        await pool.close()
        await watch.stop()


async def main(runs: int, seconds: float) -> None:
    hosts = {
        "h1": {},
        "h2": {},
        "j1": JUMBO,
        "j2": JUMBO,
        "b1": {**JUMBO, "port_mtu": 1500},
        "b2": {**JUMBO, "port_mtu": 1500},
    }
    with Lab(hosts) as lab:
        await probes(lab, runs, seconds)
    with Lab(2) as lab:
        for h in ("h1", "h2"):
            lab.hosts[h].shape("eth0", 1000)
        await keypress(lab, max(2, runs // 2), seconds)


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--time", type=float, default=3.0)
    parser.add_argument("--smoke", action="store_true", help="one short test per case: does it still run")
    args = parser.parse_args()
    if args.smoke:
        args.runs, args.time = 1, 1.0
    asyncio.run(main(args.runs, args.time))
