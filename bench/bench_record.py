"""Recording size: bytes per host-sample in a real recording of Linux hosts with 5 interfaces.

Builds its own namespace lab (needs root): HOSTS hosts, each with lo, eth0 and eth1-eth3 on
the lab bridge, pinged from this namespace on eth0 and eth1 so that their counters move every
tick; watches them over real SSH with linkdeck's collector at the given interval while a
Recorder writes the file, and prints:

- samples recorded, file size, bytes per host-sample (goal: <= 150);
- the same lines as JSON before compression, and the raw frames as the sampler printed them;
- what gzip (stdlib, sync flush at the same moments) would have made of the same lines;
- the projection for 20 hosts x 8 hours at 1 Hz (goal: <= 100 MB).

    sudo .venv/bin/python bench/bench_record.py [--duration 60] [--hosts 1] [--interval 1] [--keep FILE] [--smoke]

``--smoke`` (the test suite's): one host for 3 s, to prove it still runs.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import sys
import tempfile
import time
import zlib
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

from linkdeck.core.model import HostState  # noqa: E402
from linkdeck.fleet.collector import Fleet  # noqa: E402
from linkdeck.recording import fileformat  # noqa: E402
from linkdeck.recording.recorder import Recorder  # noqa: E402
from tests.lab import Lab  # noqa: E402

GOAL_BYTES = 150


def gzip_size(lines: list[bytes], flush_every: int) -> int:
    z = zlib.compressobj(9, zlib.DEFLATED, 31)
    size = 0
    for i, line in enumerate(lines, 1):
        size += len(z.compress(line))
        if i % flush_every == 0:
            size += len(z.flush(zlib.Z_SYNC_FLUSH))
    return size + len(z.flush())


async def record(lab: Lab, path: Path, duration: float, interval: float) -> Recorder:
    names = list(lab.hosts)
    fleet = Fleet([lab.spec(n) for n in names], lab.settings(interval=interval), lambda u: None)
    fleet.start()
    try:
        deadline = time.monotonic() + 30
        while any(c.last.state != HostState.LIVE for c in fleet.collectors.values()):
            if time.monotonic() > deadline:
                raise SystemExit(
                    "hosts did not come up: "
                    + ", ".join(f"{n}: {c.last.state.value} {c.last.error}" for n, c in fleet.collectors.items())
                )
            await asyncio.sleep(0.1)
        recorder = Recorder.for_fleet(path, fleet)
        fleet.record(recorder)
        await asyncio.sleep(duration)
        fleet.record(None)
    finally:
        await fleet.stop()
    recorder.close()
    return recorder


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--duration", type=float, default=60.0)
    ap.add_argument("--hosts", type=int, default=1)
    ap.add_argument("--interval", type=float, default=1.0)
    ap.add_argument("--keep", metavar="FILE", help="also keep the recording here")
    ap.add_argument("--smoke", action="store_true", help="a few seconds at tiny sizes: does it still run")
    args = ap.parse_args()
    if args.smoke:
        args.duration, args.hosts = 3.0, 1
    extra = [("eth1", None, 1500), ("eth2", None, 1500), ("eth3", None, 1500)]
    with (
        Lab({f"h{i}": {"extra_ifaces": extra} for i in range(1, args.hosts + 1)}) as lab,
        tempfile.TemporaryDirectory() as tmp,
    ):
        pings = []
        for host in lab.hosts.values():
            eth1 = host.exec("ip", "-4", "-o", "addr", "show", "eth1").stdout.split()[3].split("/")[0]
            for address in (host.address, eth1):
                pings.append(
                    __import__("subprocess").Popen(["ping", "-q", "-i", "0.05", address], stdout=-3, stderr=-3)
                )
        try:
            path = Path(tmp) / "bench.ldrec"
            recorder = asyncio.run(record(lab, path, args.duration, args.interval))
        finally:
            for p in pings:
                p.kill()
                p.wait()
        if args.keep:
            shutil.copyfile(path, args.keep)
        rec = fileformat.read(path)
        events = list(rec.events())
        lines = [json.dumps(e, separators=(",", ":")).encode() + b"\n" for e in [rec.header, *events]]
        reads = [e for e in events if e["ev"] == "read"]
        ifaces = {len(e["f"]["tick"].split("/proc/net/dev:")) - 3 for e in reads}  # two header lines
        frames = sum(sum(len(v) + len(k) + 15 for k, v in e["f"].items()) + 22 for e in reads)
        n = len(reads)
        size = path.stat().st_size
        per = size / n
        flushes = max(1, int(len(lines) / max(1, args.duration / fileformat.FLUSH_EVERY_S)))
        print(
            f"hosts {args.hosts}, interfaces per host {sorted(ifaces)}, "
            f"interval {args.interval:g} s, {args.duration:g} s"
        )
        print(f"host-samples recorded     {n}")
        print(
            f"file (zstd, level {fileformat.LEVEL})     {size} B = {per:.1f} B per host-sample "
            f"(goal <= {GOAL_BYTES}: {'met' if per <= GOAL_BYTES else 'MISSED'})"
        )
        print(f"JSON lines uncompressed   {recorder.writer.bytes_in / n:.0f} B per host-sample")
        print(f"raw frames as printed     {frames / n:.0f} B per host-sample")
        print(f"gzip -9, same flushes     {gzip_size(lines, flushes) / n:.1f} B per host-sample")
        print(f"20 hosts x 8 h at 1 Hz    {per * 20 * 8 * 3600 / 1e6:.1f} MB (goal <= 100)")


if __name__ == "__main__":
    main()
