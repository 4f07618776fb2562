"""The Prometheus source when Prometheus misbehaves (down, slow, garbage), and the selector and
config rules. The misbehaving servers are tiny local sockets: what they send is the point."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading

import pytest

from linkdeck.core.model import Interface
from linkdeck.prometheus.metrics import SlowFacts, _Iface, fast_queries, interface, read_slow_into, slow_queries
from linkdeck.prometheus.source import PrometheusSource, _Host
from linkdeck.prometheus.vector import parsed_rows
from linkdeck.settings.config import ConfigError, parse
from linkdeck.settings.prometheus_section import SelectorError, matchers


class _Server:
    """A TCP server on loopback that answers each connection with ``reply`` (bytes), or
    never answers when ``reply`` is None."""

    def __init__(self, reply: bytes | None) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.reply = reply
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.held: list[socket.socket] = []
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            if self.reply is None:
                self.held.append(conn)  # read nothing, answer nothing
                continue
            conn.recv(65536)
            conn.sendall(self.reply)
            conn.close()

    def close(self) -> None:
        self.sock.close()
        for conn in self.held:
            conn.close()


def _http(body: bytes, status: str = "200 OK", ctype: str = "application/json") -> bytes:
    return (
        f"HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\nContent-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode() + body


def snapshot(url: str, *extra: str) -> subprocess.CompletedProcess:
    argv = [sys.executable, "-m", "linkdeck", "snapshot", "--no-local", "--prometheus", url, *extra]
    return subprocess.run(
        argv,
        capture_output=True,
        text=True,
        timeout=60,
        env={"XDG_CONFIG_HOME": "/nonexistent", "HOME": "/nonexistent", "PATH": "/usr/bin:/bin"},
    )


def _closed_port() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}"


@pytest.mark.parametrize(
    "reply, expected",
    [
        ("down", "cannot reach Prometheus at"),
        (None, "did not answer within"),
        (_http(b"<html>\x1b[31mnot prometheus</html>", ctype="text/html"), "not JSON"),
        (_http(b'{"status":"success","data":{"resultType":"matrix","result":[]}}'), "without a vector"),
        (
            _http(
                b'{"status":"success","data":{"resultType":"vector","result":[{"metric":{"instance":"a"},"value":[1,"x"]}]}}'
            ),
            "series without labels or a value",
        ),
        (
            _http(b'{"status":"error","errorType":"bad_data","error":"parse error"}', "400 Bad Request"),
            "refused the query: parse error",
        ),
        (_http(b"", "401 Unauthorized"), "refused access (HTTP 401)"),
    ],
    ids=["down", "slow", "html", "wrong-shape", "bad-series", "query-error", "unauthorized"],
)
def test_a_failing_prometheus_is_one_line_and_no_traceback(reply, expected, tmp_path) -> None:
    server = None
    if reply == "down":
        url = _closed_port()
    else:
        server = _Server(reply)
        url = server.url
    try:
        config = tmp_path / "config.toml"
        config.write_text(f'[prometheus]\nurl = "{url}"\ntimeout = 1\n')
        out = snapshot(url, "--config", str(config))
    finally:
        if server:
            server.close()
    assert "Traceback" not in out.stderr + out.stdout
    lines = [line for line in out.stdout.splitlines() if line.strip()]
    assert len(lines) == 1, out.stdout
    assert expected in lines[0] and "unreachable" in lines[0], lines[0]
    assert "\x1b" not in out.stdout


@pytest.mark.parametrize(
    "selector, expected",
    [
        ('{job="storage"}', 'job="storage"'),
        ('job="storage", instance=~"db.*"', 'job="storage", instance=~"db.*"'),
        ("{}", ""),
        ('{job!="a\\"b"}', 'job!="a\\"b"'),
    ],
)
def test_match_accepts_label_matchers(selector, expected) -> None:
    assert matchers(selector) == expected
    assert all(expected in query for _, query, _ in fast_queries(expected))


@pytest.mark.parametrize(
    "selector", ['{job="a"} or vector(1)', 'job="a"}) or up{', "job=a", '{job="a"', 'up{job="a"}', '{job="a\n"}']
)
def test_match_refuses_anything_but_label_matchers(selector) -> None:
    with pytest.raises(SelectorError, match="not a label selector"):
        matchers(selector)


def test_prometheus_config_section() -> None:
    settings = parse(
        '[prometheus]\nurl = "https://prom.example:9090/"\n'
        'match = \'{job="node"}\'\nbearer_token_file = "~/.prom-token"\n'
    )
    assert settings.prometheus.url == "https://prom.example:9090"
    assert settings.prometheus.match == 'job="node"'
    assert parse("interval = 2\n").prometheus is None


@pytest.mark.parametrize(
    "text, message",
    [
        ('[prometheus]\nurl = "http://u:secret@prom:9090"\n', "prometheus.url: no credentials in the URL"),
        ('[prometheus]\nurl = "prom:9090"\n', "prometheus.url: not a Prometheus URL"),
        ("[prometheus]\nmatch = '{job=\"x\"}'\n", "prometheus.url: [prometheus] needs a url"),
        ('[prometheus]\nurl = "http://p:9090"\ntoken = "abc"\n', "prometheus.token: unknown key in [prometheus]"),
        ('[prometheus]\nurl = "http://p:9090"\nmatch = "up"\n', "prometheus.match: not a label selector"),
        (
            '[prometheus]\nurl = "http://p:9090"\ninterval = 0\n',
            "prometheus.interval: must be a number between 0.5 and 3600 seconds",
        ),
    ],
)
def test_prometheus_config_errors_name_the_key(text, message) -> None:
    with pytest.raises(ConfigError) as err:
        parse(text)
    assert message in str(err.value)


def test_secrets_stay_off_the_command_line() -> None:
    out = snapshot("http://user:pw@127.0.0.1:1")
    assert out.returncode == 2 and "no credentials in the URL" in out.stderr


def test_driver_version_and_firmware_from_node_ethtool_info() -> None:
    # node_ethtool_info's labels as node_exporter's ethtool collector exports them (constructed,
    # shaped like ethtool -i: the bridge's firmware "N/A", a veth's empty)
    def info(device: str, driver: str, version: str, firmware: str, bus: str) -> dict:
        labels = {
            "instance": "n1:9100",
            "device": device,
            "driver": driver,
            "version": version,
            "firmware_version": firmware,
            "bus_info": bus,
        }
        return {"metric": {"__name__": "node_ethtool_info", **labels}, "value": [1.0, "1"]}

    facts: dict[str, SlowFacts] = {}
    series = [
        info("eno1", "igb", "5.15.0-91-generic", "1.63, 0x800009fa", "0000:03:00.0"),
        info("br0", "bridge", "2.3", "N/A", "N/A"),
        info("veth0", "veth", "1.0", "", ""),
    ]
    labels = next(names for metric, _, names in slow_queries("") if metric == "node_ethtool_info")
    read_slow_into(facts, parsed_rows(series, labels), "node_ethtool_info", labels)
    slow = facts["n1:9100"]
    eno1, br0, veth0 = (interface(d, _Iface(), slow) for d in ("eno1", "br0", "veth0"))
    assert (eno1.driver, eno1.driver_version, eno1.firmware_version) == ("igb", "5.15.0-91-generic", "1.63, 0x800009fa")
    assert (br0.driver, br0.driver_version, br0.firmware_version) == ("bridge", "2.3", None)
    assert (veth0.driver, veth0.driver_version, veth0.firmware_version) == ("veth", "1.0", None)
    assert interface("eth9", _Iface(), slow).driver_version is None  # no ethtool info: nothing said


def test_a_kept_interface_is_the_one_a_fresh_build_gives() -> None:
    """The source keeps each host's Interfaces while their facts stay the same (building them
    was a third of a refresh at 10,000 hosts): what it hands out equals what ``interface``
    builds from the same facts, is the same object while nothing changed, and is rebuilt when
    a fast fact or the slow facts change."""
    host = _Host("n1:9100", "n1")
    slow = SlowFacts(nodename="n1", drivers={"eth0": ("ixgbe", "0000:01:00.0")}, addresses={"eth0": ("10.0.0.5/24",)})
    raw = _Iface(mtu=1500, speed_bytes=1.25e9, carrier_changes=2, oper="up", duplex="full")
    first = PrometheusSource._interface(host, "eth0", raw, slow)
    assert first == interface("eth0", raw, slow) and (first.mtu, first.speed_mbps, first.addresses) == (
        1500,
        10000,
        ("10.0.0.5/24",),
    )
    assert first == Interface(
        "eth0", "physical", "up", 1500, 10000, "full", ("10.0.0.5/24",), carrier_changes=2, driver="ixgbe"
    )  # no NIC counters: {}
    assert (
        PrometheusSource._interface(
            host, "eth0", _Iface(mtu=1500, speed_bytes=1.25e9, carrier_changes=2, oper="up", duplex="full"), slow
        )
        is first
    )
    raw.mtu = 9000
    jumbo = PrometheusSource._interface(host, "eth0", raw, slow)
    assert jumbo == interface("eth0", raw, slow) and jumbo.mtu == 9000
    moved = SlowFacts(nodename="n1", drivers={"eth0": ("ixgbe", "0000:01:00.0")}, addresses={"eth0": ("10.0.0.6/24",)})
    assert PrometheusSource._interface(host, "eth0", raw, moved) == interface("eth0", raw, moved) != jumbo
    assert PrometheusSource._interface(host, "eth1", raw, moved) == interface(
        "eth1", raw, moved
    )  # a second device beside it
