"""A real node_exporter in each lab host's namespace and a real Prometheus in the test's own
namespace scraping them every second, on the lab subnet and loopback only.

    with PromLab(lab) as prom:
        prom.url            # http://127.0.0.1:PORT
        prom.stop_exporter("h2")

node_exporter runs under ``unshare --uts`` with the lab host's name as its hostname, so its
``node_uname_info`` nodename is the name the SSH side knows the host by. Processes are
killed by PID on close; the data directory is the lab's temp dir.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import urllib.parse
import urllib.request
from pathlib import Path

from . import netns
from .wait import wait_until

EXPORTER = "prometheus-node-exporter"
EXPORTER_PORT = 9100
SCRAPE_S = 1.0
EXPORTER_FLAGS = (
    "--collector.disable-defaults",
    "--collector.netdev",
    "--collector.netclass",
    "--collector.uname",
    "--collector.ethtool",
    "--collector.netdev.address-info",
    "--collector.netdev.device-exclude=^$",  # loopback too: the SSH side shows it
    "--collector.netstat",  # the host's TCP counters, with node_exporter's default field list
)


def missing() -> str | None:
    for tool in ("prometheus", EXPORTER, "unshare"):
        if shutil.which(tool) is None:
            return f"the Prometheus lab needs `{tool}` (apt-get install prometheus prometheus-node-exporter)"
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PromLab:
    def __init__(self, lab, scrape_s: float = SCRAPE_S, dead_target: bool = False) -> None:
        self.lab = lab
        # A target in the node job where nothing listens: down from the start.
        self.dead_target = f"127.0.0.1:{free_port()}" if dead_target else None
        self.scrape_s = scrape_s
        self.dir = Path(lab.tmp) / "prometheus"
        self.dir.mkdir()
        self.exporters: dict[str, subprocess.Popen] = {}
        self.prometheus: subprocess.Popen | None = None
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        try:
            for name in lab.hosts:
                self.start_exporter(name)
            self._start_prometheus()
        except BaseException:
            self.close()
            raise

    def start_exporter(self, name: str) -> None:
        host = self.lab.hosts[name]
        argv = [
            "ip", "netns", "exec", host.netns, "unshare", "--uts", "sh", "-c",
            f'hostname "$0" && exec {EXPORTER} "$@"', name,
            f"--web.listen-address={host.address}:{EXPORTER_PORT}", *EXPORTER_FLAGS,
        ]  # fmt: skip
        log = open(self.dir / f"exporter-{name}.log", "wb")
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=log)
        log.close()
        self.exporters[name] = proc
        wait_until(
            lambda: proc.poll() is not None or netns.listening(proc.pid, EXPORTER_PORT),
            10,
            message=f"node_exporter on {name}",
        )
        if proc.poll() is not None:
            raise RuntimeError(
                f"node_exporter on {name} exited: {(self.dir / f'exporter-{name}.log').read_text()[-500:]}"
            )

    def stop_exporter(self, name: str) -> None:
        proc = self.exporters.pop(name)
        netns.kill_pids([proc.pid])
        proc.wait(5)

    def _start_prometheus(self) -> None:
        addresses = [f"{h.address}:{EXPORTER_PORT}" for h in self.lab.hosts.values()] + (
            [self.dead_target] if self.dead_target else []
        )
        targets = ", ".join(f"'{a}'" for a in addresses)
        (self.dir / "prometheus.yml").write_text(
            f"global:\n  scrape_interval: {self.scrape_s:g}s\n  scrape_timeout: {self.scrape_s:g}s\n"
            f"scrape_configs:\n  - job_name: node\n    static_configs:\n      - targets: [{targets}]\n"
        )
        log = open(self.dir / "prometheus.log", "wb")
        self.prometheus = subprocess.Popen(
            [
                "prometheus",
                f"--config.file={self.dir / 'prometheus.yml'}",
                f"--storage.tsdb.path={self.dir / 'data'}",
                f"--web.listen-address=127.0.0.1:{self.port}",
            ],  # fmt: skip
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
        )
        log.close()
        # Ready when every target has been scraped twice (rates need two samples).
        wait_until(self._scraped_twice, 30, interval=0.2, message="Prometheus scraping every lab node_exporter")

    def query(self, expr: str) -> list:
        url = f"{self.url}/api/v1/query?" + urllib.parse.urlencode({"query": expr})
        with urllib.request.urlopen(url, timeout=5) as response:
            return json.load(response)["data"]["result"]

    def _scraped_twice(self) -> bool:
        if self.prometheus.poll() is not None:
            raise RuntimeError(f"prometheus exited: {(self.dir / 'prometheus.log').read_text()[-800:]}")
        try:
            counts = self.query('count_over_time(up{job="node"}[1m]) >= 2')
        except OSError:
            return False
        return len(counts) == len(self.lab.hosts) + bool(self.dead_target)

    def close(self) -> None:
        pids = [p.pid for p in self.exporters.values()] + ([self.prometheus.pid] if self.prometheus else [])
        netns.kill_pids(pids)
        for proc in [*self.exporters.values(), *([self.prometheus] if self.prometheus else [])]:
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                pass
        self.exporters.clear()
        self.prometheus = None

    def __enter__(self) -> "PromLab":
        return self

    def __exit__(self, *exc) -> None:
        self.close()
