"""Benchmark of ``linkdeck diagnose`` (issue 21 §3) on a clean lab pair, in the namespace lab
(needs root).

    cd /work/main && python3 bench/bench_diagnose.py [--runs 3] [--time 3] [--smoke]

``--smoke`` (the test suite's): one run with a 1 s test, to prove it still runs.

Prints the wall time of the whole command (connecting, both ends' samples, both loopback
ceilings, the path MTU probe, the test, the verdict) against ``linkdeck test`` of the same
pair and length measured in the same run, and against the goal: diagnose ≤ t × 2 + 2 s.
The pair is a 1 Gb/s path for real (both legs shaped to 1000 Mbit/s, told they are 1G).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.cli import linkdeck  # noqa: E402
from tests.lab import Lab  # noqa: E402


def timed(*argv: str) -> tuple[float, dict]:
    start = time.perf_counter()
    proc = linkdeck(*argv)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"linkdeck {' '.join(argv[:3])} failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return wall, json.loads(proc.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--time", type=float, default=3.0)
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args()
    runs, seconds = (1, 1.0) if args.smoke else (args.runs, args.time)
    with Lab(2) as lab, tempfile.TemporaryDirectory() as tmp:
        for name in ("h1", "h2"):
            lab.hosts[name].shape("eth0", 1000)
        config = Path(tmp) / "linkdeck.toml"
        config.write_text(f'known_hosts = "{lab.known_hosts}"\n[speed]\n"h1/eth0" = 1000\n"h2/eth0" = 1000\n')
        common = (
            "h1",
            "h2",
            "--time",
            f"{seconds:g}",
            "--json",
            "--config",
            str(config),
            "--ssh-config",
            str(lab.ssh_config),
        )
        walls: dict[str, list[float]] = {"test": [], "diagnose": []}
        verdict = ""
        for _ in range(runs):
            walls["test"].append(timed("test", *common)[0])
            wall, doc = timed("diagnose", *common)
            walls["diagnose"].append(wall)
            verdict = f"{doc['verdict']}: {doc['summary'][:60]}; ruled out {len(doc['ruled_out'])}"
    goal = seconds * 2 + 2
    test_s, diag_s = statistics.median(walls["test"]), statistics.median(walls["diagnose"])
    print(f"== linkdeck diagnose h1 h2 on a clean 1 Gb/s lab pair, --time {seconds:g} ({runs} runs) ==")
    print(f"linkdeck test      wall median {test_s:.2f} s  max {max(walls['test']):.2f} s")
    print(f"linkdeck diagnose  wall median {diag_s:.2f} s  max {max(walls['diagnose']):.2f} s  ({verdict})")
    print(
        f"ratio diagnose / test {diag_s / test_s:.2f}x; "
        f"goal t x 2 + 2 = {goal:.1f} s: {'met' if diag_s <= goal else 'missed'}"
    )


if __name__ == "__main__":
    main()
