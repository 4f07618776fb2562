"""Soak: does the dashboard's memory stay flat over an hour of watching real hosts?

    sudo nice -n 19 python3 bench/bench_soak.py [--hosts 20] [--minutes 70] [--warmup 10]
                      [--trace 10] [--sample 30] [--interval 1] [--smoke]

Builds its own namespace lab (needs root): N hosts, each a namespace with a real sshd. The
dashboard (``LinkdeckApp``, headless through Textual's ``run_test``, 200x50, every tick drawn)
runs in a child process watching them over SSH; this process samples the child's RSS every
``--sample`` seconds and prints each sample as it goes (so a log shows the soak while it runs).

The run has three spans: the warm-up (``--warmup`` minutes: connections, windows and caches
filling), the measured span, and the traced span (the last ``--trace`` minutes). At the end
it prints the RSS at the first sample, at the end of the warm-up, at the end of the measured
span and its peak, and the slope in MB per hour over the measured span (a least-squares line
through its samples), with the slopes of its first and second halves beside it (a leak keeps
its slope; a structure still filling flattens), and how much of the slope is in glibc's
per-thread malloc arenas (native memory, from /proc/PID/smaps) and how much in the rest. Each
sample line also shows the arenas, and the child says how many messages wait in the app's
queue (a dashboard that falls behind its hosts grows by its backlog).

In the traced span the child runs tracemalloc (which costs memory of its own, so its samples
stay out of the slope) and at the end prints the allocation sites that grew most over that
span's second half (by the innermost linkdeck frame, and where the block was allocated) and
the object types whose counts grew, both after a full garbage collection. (The first half lets
the objects allocated before tracing turn over: a value replaced by a traced one would read as
growth otherwise.) Each "messages waiting" line of the child also gives glibc's heaps: the bytes
in use and the bytes they hold (a creep with the use flat is freed memory glibc keeps, not a leak).

Run it niced (``nice -n 19``): the child, the sshds and their sampler loops inherit it.

``--smoke`` (the test suite's): 2 hosts, 16 s, warm-up 4 s, traced 6 s, a sample every second.
"""

from __future__ import annotations

import argparse
import asyncio
import ctypes
import gc
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import psutil  # noqa: E402

SMOKE = {"hosts": 2, "minutes": 16 / 60, "warmup": 4 / 60, "trace": 6 / 60, "sample": 1.0}
TOP = 12


# -- the child: the dashboard ---------------------------------------------------------------


def child(args) -> None:
    """The dashboard on the lab's hosts until SIGTERM; from ``trace_from_s`` on tracemalloc
    runs, and at the end the allocation sites and object types that grew since are printed."""
    import tracemalloc

    from linkdeck.settings.config import HostSpec, Settings
    from linkdeck.ui.app import LinkdeckApp

    hosts = tuple(HostSpec(name=n, address=n) for n in args.names.split(","))
    settings = Settings(
        local=False, ssh_config=args.ssh_config, known_hosts=args.known_hosts, hosts=hosts, interval=args.interval
    )
    app = LinkdeckApp(settings, list(hosts))
    stop = asyncio.Event()

    async def _tick(seconds: float) -> None:
        """Wait a sample's time (or until told to stop), then say how many messages wait in the
        app's queue: a dashboard that falls behind its hosts grows by its backlog."""
        try:
            await asyncio.wait_for(stop.wait(), seconds)
        except asyncio.TimeoutError:
            print(f"child: {app._message_queue.qsize()} messages waiting{_heap()}", flush=True)

    async def watch(pilot) -> None:
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGTERM, stop.set)
        started = time.monotonic()
        while time.monotonic() - started < args.trace_from_s and not stop.is_set():
            await _tick(args.sample)
        live = sum(1 for u in app.updates.values() if u.interfaces)
        print(
            f"child: tracing from here, {live}/{len(hosts)} hosts with interfaces, {len(app.table.rows)} rows",
            flush=True,
        )
        # Objects allocated before tracing starts are invisible to it, so the bounded
        # structures' steady churn (each old value replaced by a traced new one) would read as
        # growth: the first half of the traced span lets that churn turn over, and growth is
        # counted between its middle and its end only.
        tracemalloc.start(args.frames)
        settle = time.monotonic() + args.settle_s
        while time.monotonic() < settle and not stop.is_set():
            await _tick(args.sample)
        gc.collect()  # garbage awaiting the collector is not growth
        first = _snapshot()
        types = _types()  # after the snapshot: its own objects are in both counts
        minutes = time.monotonic()
        while not stop.is_set():
            await _tick(args.sample)
        gc.collect()
        grown = Counter(_types())
        last = _snapshot()
        minutes = (time.monotonic() - minutes) / 60
        print(f"child: growth over the last {minutes:.1f} min, with tracemalloc on:")
        _print_growers(last.compare_to(first, "traceback"))
        grown.subtract(types)
        print(
            "object counts that grew: "
            + (", ".join(f"{t} {n:+d}" for t, n in grown.most_common(TOP) if n > 0) or "none")
        )
        print(f"child: messages waiting in the app's queue at the end: {app._message_queue.qsize()}")
        live = sum(1 for u in app.updates.values() if u.interfaces)
        print(
            f"child: {live}/{len(hosts)} hosts with interfaces at the end, "
            f"{len(app.findings)} findings, update errors {app.update_errors}",
            flush=True,
        )

    async def main() -> None:
        async with app.run_test(size=(200, 50)) as pilot:
            await watch(pilot)

    asyncio.run(main())


class _MallInfo2(ctypes.Structure):
    _fields_ = [
        (n, ctypes.c_size_t)
        for n in (
            "arena",
            "ordblks",
            "smblks",
            "hblks",
            "hblkhd",
            "usmblks",
            "fsmblks",
            "uordblks",
            "fordblks",
            "keepcost",
        )
    ]


def _heap() -> str:
    """glibc's heaps (sbrk and thread arenas): the bytes in use and what they hold; held
    growing over flat use is memory freed but kept (see fleetstate.pin_malloc_thresholds)."""
    try:
        mallinfo2 = ctypes.CDLL(None).mallinfo2
    except AttributeError:  # not glibc 2.33+
        return ""
    mallinfo2.restype = _MallInfo2
    info = mallinfo2()
    return (
        f"; malloc heaps: {info.uordblks / 1e6:.2f} MB in use of {info.arena / 1e6:.2f} MB held, "
        f"{info.hblkhd / 1e6:.2f} MB mmap()ed"
    )


def _snapshot():
    import tracemalloc

    return tracemalloc.take_snapshot().filter_traces(
        (tracemalloc.Filter(False, tracemalloc.__file__), tracemalloc.Filter(False, __file__, all_frames=True))
    )


def _types() -> Counter:
    return Counter(type(o).__qualname__ for o in gc.get_objects())


def _where(trace) -> str:
    """The innermost frame in linkdeck's own code (else the innermost frame), as path:line."""
    frames = list(trace)  # oldest first
    mine = [f for f in frames if "/linkdeck/" in f.filename]
    return _at((mine or frames)[-1])


def _at(frame) -> str:
    return f"{frame.filename.split('/site-packages/')[-1].split('/src/')[-1]}:{frame.lineno}"


def _print_growers(stats) -> None:
    grown = sorted((s for s in stats if s.size_diff > 0), key=lambda s: s.size_diff, reverse=True)
    print(f"tracemalloc top growers (of {len(grown)} sites that grew):")
    for s in grown[:TOP]:
        print(
            f"  {s.size_diff / 1024:+9.1f} KiB {s.count_diff:+7d} blocks  {_where(s.traceback):<40} "
            f"(allocated at {_at(s.traceback[-1])})"
        )
    total = sum(s.size_diff for s in stats)
    print(f"tracemalloc net growth: {total / 1024:+.1f} KiB", flush=True)


# -- the parent: the lab and the samples -----------------------------------------------------


def rss_split(pid: int) -> tuple[float, float]:
    """(MB in glibc's per-thread malloc arenas, MB in everything else) of ``pid``'s RSS, from
    /proc/PID/smaps: a thread arena is an anonymous mapping at a 64 MiB boundary. Growth
    there is native memory (C libraries, or Python's larger blocks freed across threads),
    which tracemalloc does not see."""
    arenas = other = 0
    arena = False
    with open(f"/proc/{pid}/smaps") as fh:
        for line in fh:
            head = line.split(maxsplit=6)
            if "-" in head[0] and len(head) >= 5 and ":" in head[3]:
                arena = int(head[0].split("-")[0], 16) % (64 << 20) == 0 and len(head) == 5
            elif head[0] == "Rss:":
                if arena:
                    arenas += int(head[1])
                else:
                    other += int(head[1])
    return arenas / 1024, other / 1024


def slope_mb_per_hour(points: list[tuple[float, float]]) -> float:
    """Least-squares slope of (seconds, MB) in MB per hour."""
    n = len(points)
    if n < 2:
        return 0.0
    mt = sum(t for t, _ in points) / n
    mm = sum(m for _, m in points) / n
    var = sum((t - mt) ** 2 for t, _ in points)
    if var == 0:
        return 0.0
    return 3600 * sum((t - mt) * (m - mm) for t, m in points) / var


def run(args) -> None:
    from tests.lab import Lab

    warmup_s, total_s = args.warmup * 60, args.minutes * 60
    trace_from_s = total_s - args.trace * 60
    if trace_from_s - warmup_s < 2 * args.sample:
        raise SystemExit("--minutes must leave room for the warm-up, two samples and the trace")
    print(
        f"soak: {args.hosts} hosts, {args.minutes:g} min, warm-up {args.warmup:g} min, "
        f"RSS every {args.sample:g} s, interval {args.interval:g} s, nice {os.nice(0)}",
        flush=True,
    )
    with Lab(args.hosts) as lab:
        argv = [
            sys.executable, __file__, "--child", "--names", ",".join(lab.hosts), "--ssh-config", str(lab.ssh_config),
            "--known-hosts", str(lab.known_hosts), "--interval", str(args.interval),
            "--trace-from-s", str(trace_from_s), "--settle-s", str(args.trace * 30),
            "--sample", str(args.sample), "--frames", str(args.frames),
        ]  # fmt: skip
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL)
        ps = psutil.Process(proc.pid)
        samples: list[tuple[float, float, float]] = []  # (seconds since start, RSS MB, of which thread arenas)
        started = time.monotonic()
        try:
            while (elapsed := time.monotonic() - started) < total_s:
                if proc.poll() is not None:
                    raise SystemExit(f"the dashboard exited early with {proc.returncode}")
                rss = ps.memory_info().rss / 1e6
                arenas, _ = rss_split(proc.pid)
                samples.append((elapsed, rss, arenas))
                phase = (
                    "warm-up"
                    if elapsed < warmup_s
                    else "measured"
                    if elapsed < trace_from_s
                    else "tracemalloc on (not measured)"
                )
                print(
                    f"t={elapsed / 60:7.2f} min  RSS {rss:7.2f} MB  {phase}  (thread arenas {arenas:.2f} MB)",
                    flush=True,
                )
                time.sleep(max(0.0, args.sample - (time.monotonic() - started - elapsed)))
        finally:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(900)  # two snapshots and their comparison, niced on a busy machine
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
    report(samples, warmup_s, trace_from_s)


def report(samples: list[tuple[float, float, float]], warmup_s: float, trace_from_s: float) -> None:
    measured = [s for s in samples if warmup_s <= s[0] < trace_from_s]
    after = [(t, m) for t, m, _ in measured]
    if len(after) < 2:
        raise SystemExit("too few samples after the warm-up to fit a line")
    half = after[len(after) // 2][0]
    first, second = [p for p in after if p[0] <= half], [p for p in after if p[0] >= half]
    start_rss = samples[0][1]
    print(
        f"RSS at the first sample {start_rss:.2f} MB; "
        f"at the end of warm-up ({warmup_s / 60:.1f} min) {after[0][1]:.2f} MB"
    )
    print(
        f"RSS at the end of the measured span ({after[-1][0] / 60:.1f} min) {after[-1][1]:.2f} MB; "
        f"peak {max(m for t, m, _ in samples if t < trace_from_s):.2f} MB"
    )
    print(
        f"slope after warm-up {slope_mb_per_hour(after):+.3f} MB/hour over "
        f"{(after[-1][0] - after[0][0]) / 60:.1f} min ({len(after)} samples; "
        f"first half {slope_mb_per_hour(first):+.3f}, second half {slope_mb_per_hour(second):+.3f} MB/hour)"
    )
    arenas = slope_mb_per_hour([(t, a) for t, _, a in measured])
    print(
        f"growth after warm-up {after[-1][1] - after[0][1]:+.2f} MB; "
        f"during warm-up {after[0][1] - start_rss:+.2f} MB; slope of glibc's thread arenas {arenas:+.3f} MB/hour, "
        f"of the rest {slope_mb_per_hour(after) - arenas:+.3f} MB/hour"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--hosts", type=int, default=20)
    parser.add_argument(
        "--minutes", type=float, default=70.0, help="the whole soak: warm-up, measured and traced spans"
    )
    parser.add_argument("--warmup", type=float, default=10.0, help="minutes before the slope is measured")
    parser.add_argument("--sample", type=float, default=30.0, help="seconds between RSS samples")
    parser.add_argument("--interval", type=float, default=1.0, help="the dashboard's sampling interval")
    parser.add_argument("--trace", type=float, default=10.0, help="the last minutes: tracemalloc on, outside the slope")
    parser.add_argument("--frames", type=int, default=12, help="tracemalloc frames kept per allocation")
    parser.add_argument("--smoke", action="store_true", help="a few seconds: proves it still runs")
    # the child's
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    for flag in ("--names", "--ssh-config", "--known-hosts"):
        parser.add_argument(flag, help=argparse.SUPPRESS)
    parser.add_argument("--trace-from-s", type=float, help=argparse.SUPPRESS)
    parser.add_argument("--settle-s", type=float, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args)
    else:
        if args.smoke:
            vars(args).update(SMOKE)
        run(args)
