"""Prometheus source cost: refresh wall time, CPU and memory for N hosts × 8 interfaces.

A tiny HTTP server in its own process answers linkdeck's two queries the way Prometheus's
query API does (the JSON shape, label names and values of a real node_exporter 1.5 answer,
grouped as linkdeck's queries group them), for N instances, with counters and scrape times
advancing between refreshes. Each N runs in a fresh child process, which measures:

- refresh wall time (median and max over the measured refreshes),
- linkdeck's CPU per refresh and as % of one core at one refresh every 5 s,
- peak RSS of the child (the whole linkdeck process: interpreter, httpx, the data),
- the longest the event loop was blocked during a refresh (what a dashboard beside it waits),
- the dashboard's findings on top: Diagnoser.observe of every update of a refresh (CPU),
  the first Diagnoser.findings() call over the whole fleet and the one after the next refresh
  (CPU; the first also reads every address), and what source and findings cost together per
  refresh, as % of a core at ``interval = 15`` (issue 20's goal), with the peak RSS by then,
- the objects the cyclic collector tracks by then, and one full collection's time: what a
  full collection landing in a refresh blocks the event loop for,
- the reference: the stdlib's json.loads of the same answers in the same process, what any
  Python client pays just to read them; the ratio says what linkdeck costs against it.

    python3 bench/bench_prometheus.py [--hosts 100 1000 5000] [--refreshes 6] [--smoke]

``--smoke`` (the test suite's): 20 hosts, 3 refreshes, to prove it still runs.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import multiprocessing
import resource
import statistics
import subprocess
import sys
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))

IFACES = 8
COUNTERS = (
    "node_network_receive_bytes_total", "node_network_transmit_bytes_total",
    "node_network_receive_packets_total", "node_network_transmit_packets_total",
    "node_network_receive_errs_total", "node_network_transmit_errs_total",
    "node_network_receive_drop_total", "node_network_transmit_drop_total",
)  # fmt: skip
T0 = 1_795_357_000.0
SCRAPE_S = 5.0
# Enough refreshes observed for the findings' windows to be full (a tick has aged out of
# FINDINGS_WINDOW_S), so the first pass judges every rule the way a running dashboard does.
FINDINGS_REFRESHES = 3
FINDINGS_WINDOW_S = 2 * SCRAPE_S  # two ticks, as the default 30 s window holds at interval = 15


def _series(labels: dict, ts: float, value) -> str:
    # labels sorted by name, as Prometheus writes them
    return json.dumps({"metric": dict(sorted(labels.items())), "value": [ts, str(value)]}, separators=(",", ":"))


def _inst(h: int) -> str:
    return f"10.{h // 65536}.{h // 256 % 256}.{h % 256}:9100"


def _answer(out: list[str]) -> bytes:
    return ('{"status":"success","data":{"resultType":"vector","result":[' + ",".join(out) + "]}}").encode()


def counter_answer(n: int, k: int, c: int) -> bytes:
    """One counter family grouped by (instance, device), with each target's scrape time."""
    ts = T0 + k * SCRAPE_S
    name = COUNTERS[c]
    # 100 Mb/s on bytes, 10,000 packets/s; errors and drops only on host 0's eth0 (a healthy
    # fleet with one finding, as the dashboard mostly sees it)
    per_scrape = 62_500_000 if "bytes" in name else 50_000 if "packets" in name else 0
    out = []
    for h in range(n):
        inst = _inst(h)
        out.append(_series({"instance": inst, "linkdeck": "scrape_time"}, ts, ts))
        for i in range(IFACES):
            step = per_scrape or (100 if h == i == 0 else 0)
            out.append(_series({"device": f"eth{i}", "instance": inst}, ts, 10**9 + h + i + k * step))
    return _answer(out)


FACTS = {  # family → (metric, value, extra labels), as linkdeck's fact queries group them
    "mtu": ("node_network_mtu_bytes", 1500, {}),
    "speed": ("node_network_speed_bytes", 125_000_000, {}),
    "carrier": ("node_network_carrier_changes_total", 2, {}),
    "info": ("node_network_info", 1, {"duplex": "full", "operstate": "up"}),
}


def fact_answer(n: int, k: int, family: str) -> bytes:
    ts = T0 + k * SCRAPE_S
    _, value, extra = FACTS[family]
    out = [
        _series({"device": f"eth{i}", "instance": _inst(h), **extra}, ts, value)
        for h in range(n)
        for i in range(IFACES)
    ]
    return _answer(out)


def up_answer(n: int, k: int) -> bytes:
    ts = T0 + k * SCRAPE_S
    out = []
    for h in range(n):
        out.append(_series({"instance": _inst(h)}, ts, 1))
        out.append(_series({"instance": _inst(h), "linkdeck": "scrape_time"}, ts, ts))
    return _answer(out)


def tcp_answer(n: int, k: int) -> bytes:
    """The hosts' TCP counters as linkdeck's one netstat query groups them (node_exporter's
    default field list: six of them), with each target's scrape time."""
    ts = T0 + k * SCRAPE_S
    out = []
    for h in range(n):
        inst = _inst(h)
        out.append(_series({"instance": inst, "linkdeck": "scrape_time"}, ts, ts))
        for name, step in (
            ("Tcp_OutSegs", 8000),
            ("Tcp_RetransSegs", 8),
            ("Tcp_InSegs", 4000),
            ("Tcp_InErrs", 0),
            ("TcpExt_TCPTimeouts", 0),
            ("TcpExt_ListenDrops", 0),
        ):
            out.append(_series({"instance": inst, "linkdeck_tcp": name}, ts, 10**9 + h + k * step))
    return _answer(out)


def all_answers(n: int, k: int) -> dict[str, bytes]:
    """Each query's answer for scrape k, by the metric its query reads."""
    out = {name: counter_answer(n, k, c) for c, name in enumerate(COUNTERS)}
    out.update({metric: fact_answer(n, k, family) for family, (metric, _, _) in FACTS.items()})
    out["up"] = up_answer(n, k)
    out["node_netstat_"] = tcp_answer(n, k)
    return out


def slow_answers(n: int) -> dict[str, bytes]:
    """The slow facts' answers by metric, grouped as linkdeck's slow queries group them."""
    out: dict[str, list[str]] = {
        m: []
        for m in (
            "node_uname_info",
            "node_network_address_info",
            "node_network_info",
            "node_ethtool_info",
            "node_network_protocol_type",
            "node_network_supported_speed_bytes",
        )
    }
    for h in range(n):
        inst = _inst(h)
        out["node_uname_info"].append(
            _series(
                {"instance": inst, "nodename": f"node{h:05d}", "release": "6.1.0-18-amd64", "sysname": "Linux"}, T0, 1
            )
        )
        for i in range(IFACES):
            base = {"device": f"eth{i}", "instance": inst}
            out["node_network_address_info"].append(
                _series({"address": f"10.{100 + i}.{h // 256 % 256}.{h % 256}", **base, "netmask": "16"}, T0, 1)
            )
            out["node_network_info"].append(
                _series({"address": f"02:00:00:{h // 65536:02x}:{h // 256 % 256:02x}:{i:02x}", **base}, T0, 1)
            )
            out["node_ethtool_info"].append(_series({"bus_info": f"0000:0{i}:00.0", **base, "driver": "ixgbe"}, T0, 1))
            for mbps in (100, 1000):
                out["node_network_supported_speed_bytes"].append(
                    _series({**base, "duplex": "full", "mode": f"{mbps}baseT"}, T0, mbps * 125_000)
                )
    return {m: _answer(rows) for m, rows in out.items()}


def serve(n: int, variants: int, port_out) -> None:
    """Answers by the query's family; each family's k-th request gets scrape k."""
    scrapes = [all_answers(n, k) for k in range(variants)]
    slow = slow_answers(n)
    calls = dict.fromkeys(scrapes[0], 0)

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            query = parse_qs(urlsplit(self.path).query).get("query", [""])[0]
            # (node_network_info is read twice: operstate each refresh, the MAC with the slow facts)
            slow_metric = next((name for name in slow if f"({name}{{" in query and "operstate" not in query), None)
            if slow_metric is not None:
                body = slow[slow_metric]
            else:
                metric = (
                    "node_netstat_"
                    if "node_netstat_" in query
                    else next(name for name in calls if f"({name}{{" in query)
                )
                body = scrapes[min(calls[metric], variants - 1)][metric]
                calls[metric] += 1
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    port_out.send((server.server_address[1], sum(map(len, scrapes[0].values())), sum(map(len, slow.values()))))
    server.serve_forever()


async def measure(n: int, refreshes: int) -> dict:
    from linkdeck.core.fleetstate import pin_malloc_thresholds
    from linkdeck.prometheus.source import PrometheusSource
    from linkdeck.settings.config import Settings
    from linkdeck.settings.prometheus_section import PrometheusConfig

    pin_malloc_thresholds()  # as the Fleet that starts a PrometheusSource does
    parent, child = multiprocessing.Pipe()
    proc = multiprocessing.Process(target=serve, args=(n, refreshes + FINDINGS_REFRESHES + 1, child), daemon=True)
    proc.start()
    port, fast_bytes, slow_bytes = parent.recv()
    updates = {"n": 0}
    cfg = PrometheusConfig(url=f"http://127.0.0.1:{port}", interval=SCRAPE_S, timeout=60)
    observers = []  # the findings phase adds the dashboard's Diagnoser here

    def on_update(update) -> None:
        updates["n"] += 1
        for observe in observers:
            observe(update)

    source = PrometheusSource(cfg, Settings(local=False, prometheus=cfg), on_update)
    walls, cpus, gaps = [], [], [(0.0, 0.0)]

    async def ticker(gaps: list[tuple[float, float]]) -> None:  # what a dashboard beside the source would wait for
        # each wait with the CPU this process's event loop thread spent in it: a wait longer
        # than its CPU is the machine running something else (the answers' server, say)
        last, last_cpu = time.perf_counter(), time.thread_time()
        while True:
            await asyncio.sleep(0.01)
            now, now_cpu = time.perf_counter(), time.thread_time()
            gaps.append((now - last - 0.01, now_cpu - last_cpu))
            last, last_cpu = now, now_cpu

    tick = None
    try:
        for k in range(refreshes):
            if k == 1:
                tick = asyncio.create_task(ticker(gaps))
            w0, c0 = time.perf_counter(), time.process_time()
            await source.refresh()
            wall, cpu = time.perf_counter() - w0, time.process_time() - c0
            if source.error:
                raise SystemExit(f"refresh failed: {source.error}")
            if k >= 1:  # the first refresh also reads the slow facts and builds every host
                walls.append(wall)
                cpus.append(cpu)
        tick.cancel()
        first_live = sum(1 for h in source.hosts.values() if h.last and h.last.interfaces[0].rates.rx_bps)
        rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # before findings and the reference
        # Findings as the dashboard makes them: every update observed, then one findings() call.
        from linkdeck.findings.engine import Diagnoser, findings_off_loop
        from linkdeck.settings.config import Thresholds

        # The dashboard's clock is the wall clock, which the fake scrape times (T0 + k × 5 s)
        # do not follow: the findings' clock is a second after the last scrape, as live, so the
        # hosts are live and their rates judged (by the wall clock every host would be stale).
        now = [0.0]

        def refreshed() -> None:
            now[0] = max(h.scrape_time or 0.0 for h in source.hosts.values()) + 1.0

        diagnoser = Diagnoser(Settings(thresholds=Thresholds(window_s=FINDINGS_WINDOW_S)), clock=lambda: now[0])
        observe_s = [0.0]

        def timed_observe(update) -> None:
            t0 = time.process_time()
            diagnoser.observe(update)
            observe_s[0] += time.process_time() - t0

        observers.append(timed_observe)
        for _ in range(FINDINGS_REFRESHES):
            await source.refresh()
        refreshed()
        c0 = time.process_time()
        found = diagnoser.findings()
        findings_s = time.process_time() - c0
        # the dashboard's pass on every later refresh: the same facts, new rates
        await source.refresh()
        refreshed()
        c0 = time.process_time()
        diagnoser.findings()
        findings_again_s = time.process_time() - c0
        # as the dashboard runs a pass past FINDINGS_INLINE_PORTS: on a worker thread, with
        # the event loop's longest wait meanwhile
        off_gaps = [(0.0, 0.0)]
        tick = asyncio.create_task(ticker(off_gaps))
        await asyncio.sleep(0.05)
        w0 = time.perf_counter()
        await findings_off_loop(diagnoser)
        off_loop = (time.perf_counter() - w0, max(off_gaps))
        tick.cancel()
        rss_all_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # the dashboard's source and findings
        # What the cyclic collector walks on each full collection (the longest block above,
        # when one lands in a refresh): every object it tracks, and one such pass timed
        gc.collect()
        tracked = len(gc.get_objects())
        w0, c0 = time.perf_counter(), time.process_time()
        gc.collect()
        full_gc = (time.perf_counter() - w0, time.process_time() - c0)
        await source._client.close()
    finally:
        proc.kill()
    bodies = list(all_answers(n, 0).values())
    c0 = time.process_time()
    for body in bodies:
        json.loads(body)
    ref_cpu = time.process_time() - c0
    return {
        "n": n,
        "wall_med": statistics.median(walls),
        "wall_max": max(walls),
        "block": max(gaps),
        "block_cpu": max(cpu for _, cpu in gaps),
        "cpu": statistics.median(cpus),
        "ref_cpu": ref_cpu,
        "rss_mb": rss_mb,
        "observe_s": observe_s[0] / FINDINGS_REFRESHES,
        "findings_s": findings_s,
        "findings_again_s": findings_again_s,
        "off_loop": off_loop,
        "rss_all_mb": rss_all_mb,
        "tracked": tracked,
        "full_gc": full_gc,
        "findings": len(found),
        "codes": sorted({f.code for f in found}),
        "answer_mb": fast_bytes / 1e6,
        "hosts_with_rates": first_live,
        "updates": updates["n"],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hosts", type=int, nargs="+", default=[100, 1000, 5000])
    ap.add_argument("--refreshes", type=int, default=6)
    ap.add_argument("--child", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--smoke", action="store_true", help="a few seconds at tiny sizes: does it still run")
    args = ap.parse_args()
    if args.smoke:
        args.hosts, args.refreshes = [20], 3
    if args.child:
        print(json.dumps(asyncio.run(measure(args.child, args.refreshes))))
        return
    print(
        f"Prometheus source, {IFACES} interfaces per host, one refresh every {SCRAPE_S:g} s; "
        f"medians over {args.refreshes - 1} refreshes"
    )
    print(
        f"{'hosts':>6} {'answer':>8} {'wall':>7} {'wall max':>8} {'CPU/refresh':>11} "
        f"{'% core':>7} {'json.loads':>10} {'ratio':>6} {'peak RSS':>9} "
        f"{'loop block':>10} {'observe':>8} {'findings()':>10} {'again':>6}"
    )
    for n in args.hosts:
        out = subprocess.run(
            [sys.executable, __file__, "--child", str(n), "--refreshes", str(args.refreshes)],
            capture_output=True,
            text=True,
        )
        if out.returncode != 0:
            print(f"{n:>6} failed: {out.stderr.strip()[-300:]}")
            continue
        r = json.loads(out.stdout.strip().splitlines()[-1])
        assert r["hosts_with_rates"] == n, r
        assert "ERRORS_RISING" in r["codes"], r  # host 0's eth0: the window rules judged the fleet
        print(
            f"{n:>6} {r['answer_mb']:>6.1f}MB {r['wall_med']:>6.3f}s {r['wall_max']:>7.3f}s "
            f"{r['cpu']:>10.3f}s {100 * r['cpu'] / SCRAPE_S:>6.1f}% {r['ref_cpu']:>9.3f}s "
            f"{r['cpu'] / r['ref_cpu']:>5.1f}x {r['rss_mb']:>7.0f}MB {r['block'][0]:>9.3f}s "
            f"{r['observe_s']:>7.3f}s {r['findings_s']:>9.3f}s {r['findings_again_s']:>5.3f}s"
        )
        dashboard = r["cpu"] + r["observe_s"] + r["findings_again_s"]
        print(
            f"{'':>6} with the findings (observe + a pass per refresh): "
            f"{dashboard:.3f}s CPU per refresh, {100 * dashboard / 15:.1f}% of a core at interval = 15; "
            f"peak RSS with the findings' windows {r['rss_all_mb']:.0f}MB"
        )
        print(
            f"{'':>6} the longest event-loop block {r['block'][0]:.3f}s, with {r['block'][1]:.3f}s of CPU; "
            f"the most CPU in one block {r['block_cpu']:.3f}s"
        )
        print(
            f"{'':>6} the dashboard's pass on a worker thread: "
            f"{r['off_loop'][0]:.3f}s, the loop's longest block meanwhile {r['off_loop'][1][0]:.3f}s"
        )
        print(
            f"{'':>6} the cyclic collector tracks {r['tracked']:,} objects; "
            f"one full collection {r['full_gc'][0]:.3f}s ({r['full_gc'][1]:.3f}s CPU)"
        )


if __name__ == "__main__":
    main()
