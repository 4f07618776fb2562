"""Benchmark: a dashboard test's key press → the first figure on screen, in the namespace lab
(needs root and the iperf3 3.21 that scripts/test.sh builds).

    cd /work/main && python3 bench/bench_live.py [--runs 5] [--time 3] [--smoke]

``--smoke`` (the test suite's): one run each, 2 s tests.

Two lab pairs, collectors at 1 Hz, the SSH connections already open (the dashboard keeps them):
  - iperf3 3.21 at both ends (--json-stream): Enter in the peer picker → the first second of
    the test rendered in the panel (then Esc: the cancel is timed too, until no iperf3 runs);
  - the reference, measured in the same run: Debian's iperf3 3.12, whose first figure is the
    verdict after the whole test.
Goal (issue 21 §1): key → first figure ≤ 1.3 s.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.lab import Lab  # noqa: E402
from tests.lab.iperf3_new import new_iperf3_missing  # noqa: E402
from tests.lab.wait import wait_for  # noqa: E402


async def first_figures(
    lab: Lab, src: str, dst: str, runs: int, seconds: float, live: bool
) -> list[tuple[float, float, float]]:
    """(key → first figure on screen, Esc → no iperf3 left, key → the iperf3 client
    starting) per run; the first run warms up."""
    from linkdeck.ui.app import LinkdeckApp
    from linkdeck.ui.screens import peer_picker, probe_screens

    app = LinkdeckApp(lab.settings(interval=1.0, test_duration=seconds), [lab.spec(src), lab.spec(dst)])
    out = []
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_for(
            lambda: all(app.updates[h].interfaces for h in (src, dst)), 30, 0.02, "both hosts' first samples"
        )
        for _ in range(runs + 1):
            app.table.select_key(("iface", src, "eth0"))
            await pilot.press("t")
            await wait_for(lambda: isinstance(app.screen, peer_picker.PeerScreen), 10, 0.01, "the peer picker")
            t0 = time.monotonic()
            await pilot.press("enter")

            def first_figure():
                screen = app.screen
                if not isinstance(screen, probe_screens.TestScreen):
                    return None
                text = str(screen.query_one("#probe-progress").render())
                shown = (
                    live and screen.seconds and "b/s" in text.split("counters:", 1)[-1]
                ) or screen.outcome is not None
                return screen if shown else None

            # bounded: a test that never shows a figure fails the run instead of hanging it
            screen = await wait_for(first_figure, seconds + 60, 0.005, "the test's first figure on screen")
            shown = time.monotonic() - t0
            t1 = time.monotonic()
            await pilot.press("escape")  # cancels a running test; closes a finished one
            await wait_for(
                lambda: (
                    not (
                        screen.worker is not None
                        and screen.worker.is_running
                        or lab.hosts[src].pgrep("iperf3")
                        or lab.hosts[dst].pgrep("iperf3")
                    )
                ),
                30,
                0.01,
                "both iperf3 gone after Esc",
            )
            stopped = time.monotonic() - t1
            if app.screen is screen:
                await pilot.press("escape")
            out.append((shown, stopped, screen.started - t0))
            await asyncio.sleep(0.5)
    return out[1:]


async def main(runs: int, seconds: float) -> None:
    with Lab({"n1": {"iperf3": "new"}, "n2": {"iperf3": "new"}, "o1": {}, "o2": {}}) as lab:
        new = await first_figures(lab, "n1", "n2", runs, seconds, live=True)
        old = await first_figures(lab, "o1", "o2", runs, seconds, live=False)
    first = [s for s, _, _ in new]
    ref = [s for s, _, _ in old]
    running = statistics.median(r for _, _, r in new)
    print(f"== dashboard: Enter in the peer picker → first figure on screen ({len(first)} runs, collectors at 1 Hz) ==")
    print(
        "iperf3 3.21 (--json-stream)  first second on screen  median "
        f"{statistics.median(first):.3f} s  max {max(first):.3f} s  (goal ≤ 1.3 s)"
    )
    print(
        "  of which key → iperf3 client started (screen, worker, path MTU probe, server) "
        f"median {running:.3f} s, then iperf3's first second {statistics.median(first) - running:.3f} s"
    )
    print(f"  Esc → both iperf3 gone  median {statistics.median(s for _, s, _ in new):.3f} s")
    print(
        f"iperf3 3.12 (reference)      first figure (the verdict of a {seconds:g} s test) "
        f"median {statistics.median(ref):.3f} s"
    )
    print(f"ratio reference / live first figure {statistics.median(ref) / statistics.median(first):.1f}x")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--time", type=float, default=3.0)
    parser.add_argument("--smoke", action="store_true", help="one run each, 1 s tests: does it still run")
    args = parser.parse_args()
    if args.smoke:
        args.runs, args.time = 1, 2.0
    missing = new_iperf3_missing()
    if missing:
        sys.exit(f"bench_live: {missing}")
    asyncio.run(main(args.runs, args.time))
