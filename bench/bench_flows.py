"""Benchmark of the flows view (issue 19 §4), in the namespace lab (needs root).

    cd /work/main && python3 bench/bench_flows.py [--rounds 10] [--sockets 10,10000] [--smoke]

``--smoke`` (the test suite's): 10 and 200 sockets, 3 rounds, 2 s of dashboard.

Prints:
  - the flows command's cost on a host with N established TCP sockets (N/2 loopback connection
    pairs held open in its namespace), read over real SSH at 1 s for ``--rounds`` rounds: its
    CPU per round on the host (awk and every ss and sleep it ran, from /proc) and the bytes per
    round on the wire, beside the reference measured in the same run: one plain
    ``ss -tinH state established`` (its CPU, and its output: what sending every flow would cost);
  - the dashboard's own CPU (% of one core) for a few seconds with the flows screen closed and
    then open on this machine, while a loopback transfer runs.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import psutil  # noqa: E402

from linkdeck.fleet.collector import open_adapter  # noqa: E402
from linkdeck.flows.sampler import read_rounds  # noqa: E402
from tests.lab import Lab, wait_for  # noqa: E402

# Holds N/2 loopback connections (N established sockets) open until killed.
HOLD = """
import resource, socket, sys
pairs = int(sys.argv[1])
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, max(soft, 2 * pairs + 64)), hard))
srv = socket.socket()
srv.bind(("127.0.0.1", 0))
srv.listen(4096)
held = []
for _ in range(pairs):
    c = socket.create_connection(srv.getsockname())
    held += [c, srv.accept()[0]]
print("ready", len(held), flush=True)
sys.stdin.read()
"""


def _cpu(proc: psutil.Process) -> float:
    t = proc.cpu_times()
    return t.user + t.system + t.children_user + t.children_system


async def remote_cost(lab: Lab, sockets: int, rounds: int) -> None:
    host = lab.hosts["s"]
    holder = host.popen(
        sys.executable, "-c", HOLD, str(sockets // 2), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline().startswith("ready")
        # the reference: one plain ss with every flow, as a naive reader would fetch it
        t0 = time.perf_counter()
        ref = host.exec("ss", "-tinH", "state", "established")
        ss_wall = time.perf_counter() - t0
        ref_bytes = len(ref.stdout.encode())
        ref_cpu = _ss_cpu(host)
        settings = lab.settings(interval=1.0)
        adapter = await open_adapter(lab.spec("s"), settings)
        try:
            wire = []
            cpu = None
            async for got in _counted(read_rounds(adapter.runner, 1.0, 10), wire):
                if len(wire) == 1:
                    proc = next(
                        p for p in map(psutil.Process, host.pgrep("pause=sleep")) if p.cmdline()[0].endswith("awk")
                    )
                    start = _cpu(proc)
                if len(wire) >= rounds + 1:
                    cpu = (_cpu(proc) - start) / rounds
                    flows, total = len(got.flows), got.total
                    break
        finally:
            await adapter.close()
        # the loop ends by itself once its reader is gone (at its next write)
        await wait_for(lambda: not host.pgrep("pause=sleep"), 10, message="the flows command to end")
        per_round = sum(wire[1:]) / (len(wire) - 1)
        print(
            f"{sockets:>6} sockets  flows command: {cpu * 1000:7.1f} ms cpu/round  {per_round:8.0f} B/round "
            f"({flows} of {total} flows)   one full ss: {ref_cpu * 1000:7.1f} ms cpu ({ss_wall * 1000:.0f} ms wall) "
            f"{ref_bytes:9d} B   ratio cpu x{cpu / ref_cpu:.2f}, bytes x{per_round / ref_bytes:.4f}"
        )
    finally:
        holder.kill()
        holder.wait()


def _ss_cpu(host, runs: int = 20) -> float:
    """The CPU of one plain ss run (user + system), averaged over ``runs`` from the shell's
    ``times`` (its children are the ss runs)."""
    loop = f"i=0; while [ $i -lt {runs} ]; do ss -tinH state established >/dev/null; i=$((i+1)); done; times"
    out = host.exec("sh", "-c", loop).stdout.split()
    return max(sum(_secs(x) for x in out[2:4]) / runs, 1e-5)


def _secs(text: str) -> float:
    minutes, _, seconds = text.rstrip("s").partition("m")
    return int(minutes) * 60 + float(seconds)


async def _counted(rounds, wire: list[int]):
    """Each round, with the bytes its lines took (their text and newlines) appended to ``wire``."""
    from linkdeck.flows import sampler as module

    feed = module.RoundReader.feed
    seen = [0]

    def counting(self, line):
        seen[0] += len(line.encode()) + 1
        return feed(self, line)

    module.RoundReader.feed = counting
    try:
        async for got in rounds:
            wire.append(seen[0])
            seen[0] = 0
            yield got
    finally:
        module.RoundReader.feed = feed


async def dashboard_cpu(seconds: float) -> None:
    from linkdeck.settings.config import LOCAL, Settings
    from linkdeck.ui.app import LinkdeckApp
    from tests.lab.traffic import local_popen, tcp_transfer

    me = psutil.Process(os.getpid())
    with tcp_transfer(local_popen, local_popen, "127.0.0.1", seconds * 3 + 20):
        app = LinkdeckApp(Settings(interval=1.0), [LOCAL])
        async with app.run_test(size=(200, 50)) as pilot:
            await wait_for(lambda: app.updates["local"].interfaces, 15, message="local interfaces")
            closed = await _busy(me, seconds)
            await pilot.press("w")
            screen = app.screen
            await wait_for(lambda: getattr(screen, "rounds", 0) >= 1, 15, message="the flows screen")
            opened = await _busy(me, seconds)
            rounds = screen.rounds
            await pilot.press("escape")
        print(
            f"dashboard CPU (1 host, 1 s interval, {seconds:g} s each): flows screen closed {closed:.1f}%, "
            f"open {opened:.1f}% of one core (x{opened / max(closed, 0.1):.2f}; {rounds} rounds shown)"
        )


async def _busy(me: psutil.Process, seconds: float) -> float:
    t = me.cpu_times()
    start, wall = t.user + t.system, time.perf_counter()
    await asyncio.sleep(seconds)
    t = me.cpu_times()
    return 100 * (t.user + t.system - start) / (time.perf_counter() - wall)


async def main(args) -> None:
    sockets = [int(s) for s in args.sockets.split(",")]
    print(f"== the flows command on the host ({args.rounds} rounds at 1 s, top 10) ==")
    with Lab({"s": {}}) as lab:
        for n in sockets:
            await remote_cost(lab, n, args.rounds)
    print("\n== the dashboard ==")
    await dashboard_cpu(args.seconds)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--sockets", default="10,10000")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--smoke", action="store_true", help="a few seconds: proves it still runs")
    args = parser.parse_args()
    if args.smoke:
        args.rounds, args.sockets, args.seconds = 3, "10,200", 2.0
    asyncio.run(main(args))
