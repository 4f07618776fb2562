"""What idle Kubernetes nodes cost the dashboard: the real dashboard against a plain Textual
Static showing the same visible rows, both fed by the real collector over real SSH.

    python3 bench/bench_idle.py [--seconds 30] [--rounds 3] [--profile SCENARIO] [--smoke]

The lab builds one node of 602 links (eth0, lo and 300 Calico-like veth pairs, tests/lab/node.py)
and nine small hosts (eth0, lo, a veth pair, ifb0). The scenarios watch the node under 1, 4 and
16 aliases with nothing moving; 4 aliases with one pod's veth carrying 100 frames of 1000 bytes a
second; and the ten-host lab (nine small hosts and the node). Each scenario runs the dashboard
and the Static alternately, ``--rounds`` times, each in its own process on a 200x60
pseudo-terminal (bench_ui.run_child): CPU % of one core over the measured window after a
warm-up, peak RSS, and the dashboard's CPU over the Static's in the same round. The machine may
be shared: the spread over rounds is printed beside the median.

``--profile N`` runs scenario N's dashboard once under cProfile (CPU time) and prints where its time went.
``--base DIR`` runs another checkout's dashboard (DIR/.venv/bin/python DIR/bench/bench_idle.py)
in the same rounds, alternately first and last around the Static: the code before a change and
after it, measured in the same minutes of a shared machine.
``--parts`` (no lab, no root) times what the dashboard does per sample of one constructed
602-link node whose eth0 moves (the rest the same views again, as the rate tracker hands them):
the graphs' history, the idle counts, the findings' observe and a pass every second sample, the
host row's totals, and, for four such nodes, which subnets to probe, the config keys' check and
the table's rows, grouped and across hosts.
``--settled`` starts measuring once the graphs hold a full minute: until then every shown row's
graph grows a column every few seconds, idle or not, and is drawn again.
``--smoke`` (the test suite's): a node of 20 links, two scenarios, 1 s runs, one round.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from collections import deque
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import bench_ui  # noqa: E402  (bench/ is the script's own directory)

CONFIG_ENV = "LINKDECK_BENCH_IDLE"  # the lab's ssh files and the scenario's hosts, for the children
PROFILE_ENV = "LINKDECK_BENCH_PROFILE"  # where a profiled child writes its stats
NODE = "node"
SMALL = tuple(f"s{i}" for i in range(1, 10))
GRAPHS_FULL_S = 63.0  # the graphs' minute of samples at 1 Hz, and a little more: --settled
BUSY_FRAMES = (1000, 100)  # bytes, frames a second on the busy pod's link
# label, hosts as (name shown, lab host), one pod busy
SCENARIOS = (
    ("1 idle node", tuple((f"n{i}", NODE) for i in range(1)), False),
    ("4 idle nodes", tuple((f"n{i}", NODE) for i in range(4)), False),
    ("16 idle nodes", tuple((f"n{i}", NODE) for i in range(16)), False),
    ("4 nodes, one veth busy", tuple((f"n{i}", NODE) for i in range(4)), True),
    ("10-host lab", (*((s, s) for s in SMALL), (NODE, NODE)), False),
)


def _settings_and_hosts():
    from linkdeck.settings.config import HostSpec, Settings

    config = json.loads(os.environ[CONFIG_ENV])
    settings = Settings(interval=1.0, local=False, ssh_config=config["ssh_config"], known_hosts=config["known_hosts"])
    return settings, [HostSpec(name, address=address) for name, address in config["hosts"]], config.get("busy")


def child_dashboard(_: int, seconds: float, result_path: str) -> None:
    from linkdeck.ui.app import LinkdeckApp

    settings, hosts, busy = _settings_and_hosts()
    app = LinkdeckApp(settings, hosts)

    def extra():
        rows = app.table.rows
        out = {"rows": len(rows), "lines_built": app.table.lines_rendered, "rebuilds": app.rebuilds}
        if busy:
            out["busy_rows"] = sum(1 for r in rows if r.view is not None and r.view.iface.name == busy)
        out["live"] = sum(1 for u in app.updates.values() if u.interfaces)
        return out

    def ready() -> bool:
        return sum(1 for u in app.updates.values() if u.interfaces) == len(hosts)

    profile_path = os.environ.get(PROFILE_ENV)
    if not profile_path:
        bench_ui._run_measured(app, seconds, result_path, extra, ready)
        return
    import cProfile

    profiler = cProfile.Profile(time.process_time)  # CPU, not wall: the box may be shared

    async def main():
        async def measure_then_exit():
            await bench_ui._measure(0, os.devnull, extra, ready=ready)  # live, then the warm-up
            profiler.enable()
            await bench_ui._measure(seconds, result_path, extra, warmup=0)
            profiler.disable()
            app.exit()

        task = asyncio.create_task(measure_then_exit())
        await app.run_async()
        task.cancel()

    asyncio.run(main())
    profiler.dump_stats(profile_path)


def child_static(_: int, seconds: float, result_path: str) -> None:
    """The floor: the same hosts through the same collector, the rows the dashboard shows (a
    host line, each interface that is not an idle virtual one with its sparklines, one line per
    name pattern of the idle virtual ones) as one plain Static, its text replaced each update."""
    from textual.app import App
    from textual.widgets import Static

    from linkdeck.core.cells import plain_row
    from linkdeck.fleet.collector import Fleet
    from linkdeck.ui.messages import HostUpdated
    from linkdeck.ui.state.idle import BUSY_BPS, FOLD_KINDS, name_pattern
    from linkdeck.ui.widgets.sparkline import spark

    settings, hosts, _ = _settings_and_hosts()
    shown_rows = {"rows": 0}

    class Floor(App):
        def compose(self):
            yield Static(id="s")

        def on_mount(self):
            self.texts: dict[str, list[str]] = {h.name: [h.name] for h in hosts}
            self.graphs: dict[tuple[str, str], tuple[deque, deque]] = {}
            self.fleet = Fleet(hosts, settings, lambda u: self.post_message(HostUpdated(u)))
            self.fleet.start()

        async def on_unmount(self):
            await self.fleet.stop()

        def on_host_updated(self, message: HostUpdated):
            update = message.update
            lines = [f"{update.host}  {update.state.value}"]
            folds: dict[str, int] = {}
            for view in update.interfaces:
                r = view.rates
                if view.iface.kind in FOLD_KINDS and (r.rx_bps or 0.0) < BUSY_BPS and (r.tx_bps or 0.0) < BUSY_BPS:
                    pattern = name_pattern(view.iface.name)
                    folds[pattern] = folds.get(pattern, 0) + 1
                    continue
                rx, tx = self.graphs.setdefault((update.host, view.iface.name), (deque(maxlen=60), deque(maxlen=60)))
                rx.append(r.rx_bps)
                tx.append(r.tx_bps)
                lines.append(
                    "  ".join(
                        (" " + view.iface.name, *plain_row(view, False), spark(tuple(rx), 15), spark(tuple(tx), 15))
                    )
                )
            lines += [f"  {n} {p} idle" for p, n in sorted(folds.items())]
            self.texts[update.host] = lines
            text = [line for host_lines in self.texts.values() for line in host_lines]
            shown_rows["rows"] = len(text)
            self.query_one(Static).update("\n".join(text))

    floor = Floor()

    def ready() -> bool:
        texts = getattr(floor, "texts", {})
        return bool(texts) and all(len(lines) > 1 for lines in texts.values())

    bench_ui._run_measured(floor, seconds, result_path, lambda: dict(shown_rows), ready)


CHILDREN = {"dashboard": child_dashboard, "static": child_static}


def run(
    kind: str, scenario: int, seconds: float, config: dict, env: dict | None = None, tree: Path | None = None
) -> dict:
    """One measured child; ``tree``: another checkout's, with its own interpreter."""
    label, hosts, busy = SCENARIOS[scenario]
    os.environ[CONFIG_ENV] = json.dumps({**config, "hosts": hosts, "busy": config["busy_veth"] if busy else None})
    for key, value in (env or {}).items():
        os.environ[key] = value
    executable = sys.executable
    try:
        if tree is None:
            return bench_ui.run_child(kind, scenario, seconds, script=__file__)
        sys.executable = str(tree / ".venv" / "bin" / "python")  # run_child starts sys.executable
        return bench_ui.run_child(kind, scenario, seconds, script=str(tree / "bench" / "bench_idle.py"))
    finally:
        sys.executable = executable
        for key in env or {}:
            os.environ.pop(key, None)


def parts() -> None:
    """Per sample of a constructed idle 602-link node (eth0, lo, 600 veths; eth0 moving), the
    dashboard's own steps, each best of 3."""
    from linkdeck.core.model import Counters, HostState, HostUpdate, Interface, InterfaceView, Rates
    from linkdeck.core.totals import host_totals
    from linkdeck.findings.engine import Diagnoser
    from linkdeck.probe.subnet_mtu import SubnetProber
    from linkdeck.settings.config import Settings
    from linkdeck.ui.state.idle import Activity
    from linkdeck.ui.state.rows import RateHistory

    zero = Rates(*(0.0 for _ in Rates.__dataclass_fields__))
    same = (
        InterfaceView(Interface(name="lo", kind="loopback", mtu=65536, addresses=("127.0.0.1/8",)), zero, Counters()),
        *(
            InterfaceView(Interface(name=f"veth{i}", kind="veth", carrier_changes=2), zero, Counters())
            for i in range(600)
        ),
    )
    eth0 = Interface(name="eth0", kind="veth", mtu=1500, addresses=("10.9.0.2/24",))  # a lab node's eth0 is a veth

    def node(t: int, host: str = "node") -> HostUpdate:
        moving = InterfaceView(eth0, Rates(rx_bps=1e5 + t, tx_bps=2e4, rx_pps=9.0, tx_pps=7.0), Counters())
        return HostUpdate(host=host, os="linux", state=HostState.LIVE, time=float(t), interfaces=(moving, *same))

    samples = [node(t) for t in range(1, 1001)]

    def best(step, n: int) -> float:
        times = []
        for _ in range(3):
            started = time.perf_counter()
            step()
            times.append((time.perf_counter() - started) / n * 1e6)
        return min(times)

    def each_sample(make):
        def step():
            push = make()
            for u in samples:
                push(u)

        return step

    print(f"per sample of a 602-link node, eth0 moving, {len(samples)} samples, best of 3:")
    print(f"  RateHistory.push   {best(each_sample(lambda: RateHistory(1.0).push), len(samples)):8.1f} us")
    print(f"  Activity.push      {best(each_sample(lambda: Activity(1.0).push), len(samples)):8.1f} us")
    print(f"  host_totals        {best(each_sample(lambda: host_totals), len(samples)):8.1f} us")
    spent = {"observe": 0.0, "view": 0.0, "judge": 0.0}

    def findings():
        d = Diagnoser(Settings())
        for n, u in enumerate(samples):
            started = time.perf_counter()
            d.observe(u)
            spent["observe"] += time.perf_counter() - started
            if n % 2:
                started = time.perf_counter()
                view = d.view()
                spent["view"] += time.perf_counter() - started
                started = time.perf_counter()
                d.judge(view)
                spent["judge"] += time.perf_counter() - started

    runs = []
    for _ in range(3):
        spent.update(observe=0.0, view=0.0, judge=0.0)
        findings()
        runs.append(dict(spent))
    run_ = min(runs, key=lambda r: sum(r.values()))
    per = {k: v / len(samples) * 1e6 for k, v in run_.items()}
    print(f"  Diagnoser.observe  {per['observe']:8.1f} us")
    print(
        f"  findings pass      {per['view'] + per['judge']:8.1f} us a sample, a pass every 2nd sample "
        f"(view() {2 * per['view']:.1f} us, judge {2 * per['judge']:.1f} us a pass)"
    )
    fleet = [[node(t, f"n{h}") for h in range(4)] for t in range(1, 51)]
    prober = SubnetProber(None)  # type: ignore[arg-type]  # due() never reaches the session
    print(
        f"  SubnetProber.due   {best(lambda: [prober.due(us) for us in fleet], len(fleet)):8.1f} us a pass of 4 nodes"
    )
    from types import SimpleNamespace

    from linkdeck.ui.state.advice import Advice

    for label, settings in (("no key", Settings()), ("a key on n0", Settings(speed_overrides={"n0/eht0": 1000}))):
        app = SimpleNamespace(  # what Advice._warn_config reads of the dashboard
            settings=settings,
            updates={},
            screen_stack=[None],
            tests=None,
            notify=lambda *a, **kw: None,
            withdraw=lambda *a: None,
            run_worker=lambda *a, **kw: None,
        )
        advice = Advice(app)  # type: ignore[arg-type]  # the stand-in above
        advice._asked, advice._known = True, set()  # the ssh config answered: nothing known

        def warn(app=app, advice=advice) -> None:
            for us in fleet:
                app.updates.update((u.host, u) for u in us)
                advice._warn_config()

        print(f"  _warn_config       {best(warn, len(fleet)):8.1f} us a pass of 4 nodes, {label}")
    from dataclasses import replace

    from linkdeck.ui.state.row_cache import RowCache
    from linkdeck.ui.state.view_state import ViewState

    # the lab's veths as the dashboard sees them: virtual, so idle ones fold
    virtual = tuple(replace(v, iface=replace(v.iface, kind="virtual")) if v.iface.kind == "veth" else v for v in same)
    fleet = [[replace(u, interfaces=(u.interfaces[0], *virtual)) for u in us] for us in fleet]  # eth0 still moving
    activity = Activity(1.0)
    for us in fleet:
        for u in us:
            activity.push(u)
    for label, grouped in (("grouped", True), ("across hosts (g)", False)):
        cache, view_state = RowCache(), ViewState(grouped=grouped)

        def rebuild(cache=cache, view_state=view_state) -> None:
            for us in fleet:  # a rebuild for each node's sample, as the dashboard's
                for n in range(len(us)):
                    cache.rows(view_state, us[: n + 1] + fleet[0][n + 1 :], {}, activity.idle)

        print(f"  rows, {label:<16} {best(rebuild, 4 * len(fleet)):8.1f} us a rebuild of 4 nodes")


def build_lab(pairs: int, small: bool):
    from tests.lab.lab import Lab
    from tests.lab.node import make_node

    lab = Lab({NODE: {}, **({s: {} for s in SMALL} if small else {})})
    try:
        names = make_node(lab.hosts[NODE], pairs)
        for s in SMALL if small else ():
            make_node(lab.hosts[s], 1)
            lab.hosts[s].add_interface("ifb0")
    except BaseException:
        lab.close()
        raise
    return lab, names


def busy_pod(lab, names):
    """One pod's link carrying frames: sent on its cali end, received on its veth."""
    size, per_s = BUSY_FRAMES
    chatter = Path(__file__).resolve().parents[1] / "tests" / "lab" / "chatter.py"
    return lab.hosts[NODE].popen(sys.executable, str(chatter), names[0][0], str(size), str(per_s))


def spread(values: list[float]) -> str:
    return f"{statistics.median(values):6.2f}  ({min(values):.2f}–{max(values):.2f})"


def profile(lab, config: dict, scenario: int, seconds: float) -> None:
    import pstats

    fd, path = tempfile.mkstemp(prefix="ld-bench-prof-")
    os.close(fd)
    try:
        r = run("dashboard", scenario, seconds, config, {PROFILE_ENV: path})
        print(
            f"profile of the dashboard, {SCENARIOS[scenario][0]}, {seconds:.0f} s: "
            f"{r.get('cpu_pct', float('nan')):.2f}% CPU under cProfile"
        )
        stats = pstats.Stats(path)
        stats.sort_stats("cumulative").print_stats(r"linkdeck", 40)
        stats.sort_stats("tottime").print_stats(25)
    finally:
        os.unlink(path)


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        kind, n, seconds, path = sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
        CHILDREN[kind](n, seconds, path)
        return 0
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--scenarios", default=",".join(str(i) for i in range(len(SCENARIOS))), help="which, by number (0-based)"
    )
    parser.add_argument("--profile", type=int, default=None, help="profile one scenario's dashboard instead")
    parser.add_argument(
        "--smoke", action="store_true", help="a node of 20 links, two scenarios, 1 s runs: does it still run"
    )
    parser.add_argument("--base", type=Path, default=None, help="another checkout's dashboard in the same rounds")
    parser.add_argument("--parts", action="store_true", help="time the per-sample steps on a constructed node")
    parser.add_argument(
        "--settled",
        action="store_true",
        help="start measuring once the graphs' minute of history is full (idle rows' graphs no longer grow)",
    )
    args = parser.parse_args()
    if args.parts:
        parts()
        return 0
    if os.geteuid() != 0:
        print("bench_idle needs root (network namespaces)", file=sys.stderr)
        return 2
    os.environ.pop("SSH_AUTH_SOCK", None)
    pairs, scenarios = 300, [int(s) for s in args.scenarios.split(",")]
    if args.smoke:
        bench_ui.WARMUP_S = 2.0
        os.environ[bench_ui.WARMUP_ENV] = "2.0"
        args.seconds, args.rounds, pairs, scenarios = 1.0, 1, 9, [1, 3]
    if args.settled:
        bench_ui.WARMUP_S = GRAPHS_FULL_S
        os.environ[bench_ui.WARMUP_ENV] = str(GRAPHS_FULL_S)
    small = args.profile == 4 or 4 in scenarios
    started = time.monotonic()
    lab, names = build_lab(pairs, small)
    with lab:
        config = {"ssh_config": str(lab.ssh_config), "known_hosts": str(lab.known_hosts), "busy_veth": names[0][1]}
        print(
            f"lab: a node of {2 * pairs + 2} links{' and 9 small hosts' if small else ''} "
            f"up in {time.monotonic() - started:.1f} s",
            flush=True,
        )
        if args.profile is not None:
            profile(lab, config, args.profile, args.seconds)
            return 0
        print(
            f"{args.seconds:.0f} s measured after {bench_ui.WARMUP_S:.0f} s warm-up, "
            f"1 Hz, 200x60 pty, {args.rounds} rounds (dashboard and Static alternately), "
            f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}"
        )
        results: dict[int, list[tuple[dict, dict]]] = {i: [] for i in scenarios}
        based: dict[int, list[dict]] = {i: [] for i in scenarios}
        for n in range(args.rounds):
            for i in scenarios:
                sender = busy_pod(lab, names) if SCENARIOS[i][2] else None
                try:
                    base_first = args.base is not None and n % 2 == 0
                    if base_first:
                        based[i].append(run("dashboard", i, args.seconds, config, tree=args.base))
                    pair = (run("dashboard", i, args.seconds, config), run("static", i, args.seconds, config))
                    if args.base is not None and not base_first:
                        based[i].append(run("dashboard", i, args.seconds, config, tree=args.base))
                finally:
                    if sender is not None:
                        sender.kill()
                        sender.wait()
                results[i].append(pair)
                print(f"  ran {SCENARIOS[i][0]}: {json.dumps(pair[0])} / static {json.dumps(pair[1])}", flush=True)
                if based[i]:
                    print(f"    base {json.dumps(based[i][-1])}", flush=True)
        print()
        print(
            f"{'scenario':<24} {'dashboard CPU % (spread)':>26} "
            f"{'Static CPU % (spread)':>24} {'ratio (spread)':>20} {'RSS MB':>7} {'rows':>5}"
        )
        for i in scenarios:
            pairs_ = results[i]
            ld = [p[0]["cpu_pct"] for p in pairs_]
            st = [p[1]["cpu_pct"] for p in pairs_]
            ratio = [a / b for a, b in zip(ld, st) if b > 0] or [float("nan")]
            rss = max(p[0]["rss_mb"] for p in pairs_)
            busy = f"  busy veth on screen {min(p[0].get('busy_rows', 0) for p in pairs_)}" if SCENARIOS[i][2] else ""
            print(
                f"{SCENARIOS[i][0]:<24} {spread(ld):>26} {spread(st):>24} "
                f"{spread(ratio):>20} {rss:>7.1f} {pairs_[-1][0]['rows']:>5}{busy}"
            )
            if based[i]:
                bl = [b["cpu_pct"] for b in based[i]]
                b_ratio = [a / b for a, b in zip(bl, st) if b > 0] or [float("nan")]
                print(
                    f"{'  base':<24} {spread(bl):>26} {'':>24} "
                    f"{spread(b_ratio):>20} {max(b['rss_mb'] for b in based[i]):>7.1f}"
                )
        print(
            "goals: 4 idle nodes <= 3 %, 16 <= 8 %, each <= 2x the Static; RSS <= 150 MB at 16; the 10-host lab <= 3 %"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
