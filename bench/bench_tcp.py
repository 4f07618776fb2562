"""What reading each Linux host's TCP counters costs (issue 19 §4): the remote sampler's script
run here with `sh -c`, as over SSH, with its TCP reading and without it (the reference,
measured in the same run: `build_script(..., tcp=False)`, the same loop built from the same
script files without its TCP setup, linux_tcp.sh, and with linux_no_tcp.awk for linux_tcp.awk,
so no tick reads /proc/net/snmp or /proc/net/netstat; the loop's TCP line is dropped by awk and
the slow facts' tcp_names section, in no tick compared, is empty). Prints the bytes each tick
adds on the wire, the sampler's CPU per tick (its children's CPU here), the processes it
starts per tick (strace, when installed) and the script's size, sent once per connection.

    .venv/bin/python bench/bench_tcp.py [--ticks N] [--interval S] [--smoke]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from linkdeck.platforms.adapter import frame_bytes, split_frames  # noqa: E402
from linkdeck.platforms.linux import LinuxAdapter, build_script  # noqa: E402
from tests.ticks import ticking  # noqa: E402


def run(script: str, ticks: int, interval: float, trace: Path | None) -> tuple[list[dict[str, str]], float]:
    """The frames of ``ticks`` ticks and the CPU seconds the sampler (and its commands) used."""
    argv = ["sh", "-c", script]
    if trace is not None:
        argv = ["strace", "-f", "-qq", "-e", "trace=execve", "-o", str(trace), *argv]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    lines: list[str] = []
    with ticking(argv, interval, text=True) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            lines.append(line.rstrip("\n"))
            if lines.count("@@LD END") >= ticks:
                break
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return split_frames(lines), cpu


def other_bytes(tick_frames: list[dict[str, str]]) -> float:
    """A tick's bytes but the TCP reading's (its tcp line, any TCP file's lines), per tick: the
    same script sends the same here with TCP and without, unless the links' traffic or their
    set changed between the runs."""
    tcp = ("tcp:", "/proc/net/snmp:", "/proc/net/netstat:")
    return sum(len(ln) + 1 for f in tick_frames for ln in f["tick"].splitlines() if not ln.startswith(tcp)) / len(
        tick_frames
    )


def execs(trace: Path) -> int:
    return sum(1 for line in trace.read_text().splitlines() if "execve(" in line and "= 0" in line)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ticks", type=int, default=200)
    ap.add_argument("--interval", type=float, default=0.05)
    ap.add_argument("--smoke", action="store_true", help="a few ticks, to check the benchmark runs")
    args = ap.parse_args()
    ticks = 8 if args.smoke else args.ticks
    # slow facts only on the first frame: the ticks compared are ordinary ones
    with_tcp = build_script(100_000)
    reference = build_script(100_000, tcp=False)
    for tcp_file in ("/proc/net/snmp", "/proc/net/netstat"):
        assert tcp_file in with_tcp and tcp_file not in reference, (
            f"the reference reads {tcp_file} or the sampler does not"
        )
    strace = shutil.which("strace")
    results = {}
    others: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for label, script in (("with TCP", with_tcp), ("without", reference)):
            frames, cpu = run(script, ticks, args.interval, None)
            # each frame's tick alone (the slow facts also come whenever the set of interfaces
            # changes, which other work on this machine may cause at any time)
            tick_frames = [{"tick": f["tick"]} for f in frames[1:]]
            spawned = None
            if strace:
                trace = Path(tmp) / f"{label}.trace"
                traced, _ = run(script, ticks, args.interval, trace)
                spawned = (execs(trace) - 1) / max(len(traced), 1)  # the first execve is sh itself
            results[label] = (
                sum(map(frame_bytes, tick_frames)) / len(tick_frames),
                cpu / len(frames),
                spawned,
                len(script),
            )
            others[label] = other_bytes(tick_frames)
            if label == "with TCP":
                adapter = LinuxAdapter(runner=None)
                samples = [adapter.parse_frame(f) for f in frames]
                assert all(s.tcp is not None for s in samples), "a tick without TCP counters"
                line = next(ln for ln in tick_frames[-1]["tick"].splitlines() if ln.startswith("tcp:"))
            else:
                assert not any(ln.startswith("tcp:") for f in tick_frames for ln in f["tick"].splitlines()), (
                    "the reference sent a tcp line"
                )
    (b1, c1, p1, s1), (b0, c0, p0, s0) = results["with TCP"], results["without"]
    o1, o0 = others["with TCP"], others["without"]
    if abs(o1 - o0) > 0.02 * o0:
        print(
            f"condition not met: the tick's lines but TCP's were {o1:.0f} B with TCP and {o0:.0f} B without "
            "(the same lines from the same script: their links' traffic or set changed between the runs), "
            "so the tick frames differ by more than the TCP reading"
        )
    print(f"ticks measured: {ticks} at {args.interval:g} s, sh = {os.path.realpath(shutil.which('sh') or 'sh')}")
    print(
        f"tick frame: {b1:.0f} B with TCP, {b0:.0f} B without: "
        f"{b1 - b0:+.0f} B per sample (the tcp line: {len(line) + 1} B)"
    )
    print(
        f"sampler CPU per tick: {c1 * 1000:.2f} ms with TCP, "
        f"{c0 * 1000:.2f} ms without (x{c1 / c0 if c0 else float('nan'):.2f})"
    )
    if p1 is not None and p0 is not None:
        print(f"processes started per tick: {p1:.1f} with TCP, {p0:.1f} without")
    print(f"script: {s1} B with TCP, {s0} B without (sent once per connection)")


if __name__ == "__main__":
    main()
