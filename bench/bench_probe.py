"""Benchmark of the bidirectional test in the namespace lab (needs root).

    cd /work/main && python3 bench/bench_probe.py [--runs 5] [--time 3] [--smoke]

``--smoke`` (the test suite's): one 1 s test per case, to prove it still runs.

Prints, for a 3 s test between two lab hosts over real SSH with the collectors running at
1 Hz:
  - start → iperf3 result → verdict (with the counters' view from one-shot reads of both ends
    right after the result); with the iperf3 connections already open (the dashboard keeps
    them) and for the first test (SSH connection + detection included); the window between
    the two counter reads (the counters are divided by iperf3's own seconds, not by it);
  - the dashboard key press (Enter in the peer picker) → the verdict on screen;
  - the largest gap between two collector updates of either end while the test ran;
  - the interface counters' view of the transfer vs iperf3's figure, on a clean pair
    (unshaped veth, MTU 1500) and on a 1 Gbit/s tbf-shaped pair.
Goals (issue 6): key press to verdict ≤ 3.5 s; no update gap > 1.5 s; counters within 2 %.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from linkdeck.probe.session import EndPool, Watch  # noqa: E402
from linkdeck.probe.watched import plan_pair, run_watched  # noqa: E402
from tests.lab import Lab  # noqa: E402
from tests.lab.wait import wait_for  # noqa: E402


def gaps(arrivals: list[float], start: float, end: float) -> float:
    inside = [t for t in arrivals if start - 1.5 <= t <= end]
    return max((b - a for a, b in zip(inside, inside[1:])), default=float("nan"))


def pct(a: float | None, b: float | None) -> str:
    return "—" if a is None or not b else f"{100 * (a - b) / b:+.2f} %"


async def headless(lab: Lab, runs: int, seconds: float, label: str, link_mbps: int | None) -> None:
    # Only a shaped pair gets a speed: a 1 Gb/s override on a 9 Gb/s veth would make the rates
    # layer reject every tick's delta as physically impossible (a reset), as it should.
    overrides = {"h1/eth0": link_mbps, "h2/eth0": link_mbps} if link_mbps else {}
    settings = lab.settings(interval=1.0, speed_overrides=overrides)
    watch = Watch([lab.spec("h1"), lab.spec("h2")], settings)
    pool = EndPool(settings)
    await watch.start()
    rows = []
    try:
        for i in range(runs + 1):
            t0 = asyncio.get_running_loop().time()
            address, src_if = plan_pair("h1", "h2", watch.latest)
            h1, h2 = await pool.get(lab.spec("h1")), await pool.get(lab.spec("h2"))
            o = await run_watched(h1, h2, address, seconds, watch.latest, src_iface=src_if)
            t = o.timings
            gap = max(gaps(watch.arrivals[h], t["start"], t["verdict"]) for h in ("h1", "h2"))
            r = o.result
            window = t["counters_after"] - t["counters_before"]
            rows.append((i == 0, t["result"] - t0, window, t["verdict"] - t0, gap, r, o.verdict))
            await asyncio.sleep(0.3)
    finally:
        await pool.close()
        await watch.stop()
    print(f"\n== {label}: {seconds:g} s tests h1 → h2, collectors at 1 Hz ==")
    print(
        f"{'run':<6}{'→result':>9}{'window':>9}{'→verdict':>9}{'max gap':>9}   fwd / rev (iperf3)       "
        "src_tx vs fwd   dst_rx vs fwd   dst_tx vs rev   src_rx vs rev   verdict"
    )
    for n, (cold, res, window, final, gap, r, v) in enumerate(rows):
        c = r.counters_bps
        print(
            f"{'cold' if cold else n:<6}{res:>8.3f}s{window:>8.3f}s{final:>8.3f}s{gap:>8.2f}s   "
            f"{r.forward_bps / 1e6:8.1f} / {r.reverse_bps / 1e6:8.1f} Mb/s   "
            f"{pct(c['src_tx'], r.forward_bps):>13}   {pct(c['dst_rx'], r.forward_bps):>13}   "
            f"{pct(c['dst_tx'], r.reverse_bps):>13}   {pct(c['src_rx'], r.reverse_bps):>13}   "
            f"{v.status} {'' if v.pct_of_expected is None else f'{v.pct_of_expected:.0f} %'}"
        )
    warm = rows[1:]
    if warm:
        ends = (
            ("src_tx", "forward_bps"),
            ("dst_rx", "forward_bps"),
            ("dst_tx", "reverse_bps"),
            ("src_rx", "reverse_bps"),
        )
        worst = max(
            abs(100 * (r[5].counters_bps[k] - getattr(r[5], f)) / getattr(r[5], f)) for r in warm for k, f in ends
        )
        print(
            f"warm median: →result {statistics.median(r[1] for r in warm):.3f} s, →verdict "
            f"{statistics.median(r[3] for r in warm):.3f} s (max {max(r[3] for r in warm):.3f} s; cold "
            f"{rows[0][3]:.3f} s); read window {statistics.median(r[2] for r in warm):.3f} s; "
            f"max update gap {max(r[4] for r in rows):.2f} s; "
            f"counters vs iperf3 worst {worst:.2f} %"
        )


async def keypress(lab: Lab, runs: int, seconds: float) -> None:
    from linkdeck.ui.app import LinkdeckApp
    from linkdeck.ui.screens import peer_picker, probe_screens

    settings = lab.settings(interval=1.0, test_duration=seconds, speed_overrides={"h1/eth0": 1000, "h2/eth0": 1000})
    app = LinkdeckApp(settings, [lab.spec("h1"), lab.spec("h2")])
    out = []
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_for(
            lambda: all(app.updates[h].interfaces for h in ("h1", "h2")), 30, message="both hosts' first samples"
        )
        for i in range(runs + 1):
            app.table.select_key(("iface", "h1", "eth0"))
            await pilot.press("t")
            await wait_for(lambda: isinstance(app.screen, peer_picker.PeerScreen), 10, 0.01, "the peer picker")
            t0 = time.monotonic()
            await pilot.press("enter")
            # bounded: a test that never reaches an outcome fails the run instead of hanging it
            screen = await wait_for(
                lambda: (
                    isinstance(app.screen, probe_screens.TestScreen) and app.screen.outcome is not None and app.screen
                ),
                seconds + 60,
                0.01,
                "the test's outcome on screen",
            )
            shown = time.monotonic() - t0
            r = screen.outcome.result
            worst = max(
                abs(100 * (r.counters_bps[k] - getattr(r, f)) / getattr(r, f))
                for k, f in (
                    ("src_tx", "forward_bps"),
                    ("dst_rx", "forward_bps"),
                    ("dst_tx", "reverse_bps"),
                    ("src_rx", "reverse_bps"),
                )
            )
            out.append((i == 0, shown, worst, screen.outcome.verdict.status))
            await pilot.press("escape")
            await asyncio.sleep(0.5)
    print(f"\n== dashboard: Enter in the peer picker → verdict on screen ({seconds:g} s test) ==")
    for n, (cold, shown, worst, status) in enumerate(out):
        print(
            f"{'cold' if cold else n:<6} verdict (with counters) "
            f"on screen {shown:.3f} s   counters vs iperf3 worst {worst:.2f} %   {status}"
        )


async def main(runs: int, seconds: float) -> None:
    with Lab(2) as lab:
        await headless(lab, runs, seconds, "clean pair (veth, MTU 1500, unshaped, speed unknown)", None)
        for h in ("h1", "h2"):
            lab.hosts[h].shape("eth0", 1000)
        await headless(lab, runs, seconds, "1 Gbit/s pair (tbf on both legs, speed 1000)", 1000)
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
