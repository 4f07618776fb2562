"""`linkdeck report`'s layout (issue 23): the hosts line names each OS once, the charts' time
axis is the wall-clock time the findings and tests are listed in, errors and drops are marks
that say how many on their own axis, and the Markdown findings carry their evidence and next
step. The HTML is read back from a real headless Chromium (its DOM after rendering).

The recording is a real one of this machine (`linkdeck record`) with constructed additions,
labelled where they are made: a second host from the same reads, errors and drops on lo, and
one finding."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import subprocess

import pytest

from linkdeck.recording.fileformat import read
from tests.builders import with_twin
from tests.cli import linkdeck
from tests.unit.recording.test_report import chromium

FINDING = {
    "ev": "finding",
    "on": True,
    "code": "DROPS_RISING",
    "severity": "warning",
    "host": "local",
    "interface": "lo",
    "message": "lo drops 12/s received",
    "evidence": "rx_dropped +12/s over 30 s",
    "hint": "look at the receive rings: ethtool -g lo",
}


@pytest.fixture(scope="module")
def recording(tmp_path_factory):
    base = tmp_path_factory.mktemp("report")
    out = linkdeck("record", str(base / "local.ldrec"), "--duration", "4")
    assert out.returncode == 0, out.stderr
    real = read(base / "local.ldrec")
    # constructed: lo counts 5 receive errors and 12 drops more every sample; one finding
    events, k = [], 0
    for e in real.events():
        events.append(e)
        if e["ev"] == "read" and "lo" in e.get("c", {}):
            k += 1
            e["c"]["lo"][4] += 5 * k
            e["c"]["lo"][6] += 12 * k
            if k == 2:
                events.append({**FINDING, "t": float(e["t"])})
    return with_twin(real, base / "made.ldrec", events=events)


def test_markdown_names_each_os_once_and_findings_carry_evidence_and_next_step(recording) -> None:
    out = linkdeck("report", str(recording), "--markdown", "-o", "-")
    assert out.returncode == 0, out.stderr
    text = out.stdout
    hosts = re.search(r"^\| hosts \| (.*) \|$", text, re.M)
    assert hosts and hosts.group(1) == "2 × linux: local, twin"
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if line.startswith("- **DROPS\\_RISING** (warning) local/lo, "))
    assert lines[at].endswith(": lo drops 12/s received")
    assert lines[at + 1] == "  - evidence: rx\\_dropped +12/s over 30 s"
    assert lines[at + 2] == "  - next step: look at the receive rings: ethtool -g lo"


@pytest.mark.skipif(chromium() is None, reason="needs chromium (scripts/test.sh installs it)")
def test_charts_in_wall_clock_time_with_errors_and_drops_on_their_own_axis(recording, tmp_path) -> None:
    page = tmp_path / "r.html"
    out = linkdeck("report", str(recording), "-o", str(page))
    assert out.returncode == 0, out.stderr
    argv = [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--dump-dom", page.as_uri()]
    dom = subprocess.run(
        argv, capture_output=True, text=True, timeout=120, check=True, env={**os.environ, "HOME": str(tmp_path)}
    ).stdout
    rec = read(recording)

    def chart(title: str) -> str:
        at = dom.index(f">{title}</text>")
        return dom[dom.rindex("<svg", 0, at) : dom.index("</svg>", at)]

    def texts(svg: str) -> list[str]:
        return re.findall(r"<text[^>]*>([^<]*)</text>", svg)

    rates, marks = chart("local / lo"), chart("local / lo: errors and drops")
    # the time axis: round local wall-clock times inside the recording's span, each once, the
    # clock the findings table is in
    span = {
        dt.datetime.fromtimestamp(rec.start + s).strftime("%H:%M:%S") for s in range(-1, int(rec.end - rec.start) + 2)
    }
    for svg in (rates, marks):
        labels = [t for t in texts(svg) if re.fullmatch(r"\d\d:\d\d:\d\d", t)]
        assert labels and set(labels) <= span and len(set(labels)) == len(labels)
    finding = re.search(
        r"<td>(\d\d:\d\d:\d\d)</td><td>\(still raised at the end\)</td><td>warning</td><td>DROPS_RISING</td>", dom
    )
    assert finding and finding.group(1) in span
    # errors and drops: marks on an axis of their own that counts them per second (5 and 12
    # a second), not dots on the traffic's curve
    assert "errors/s" in texts(marks) and "drops/s" in texts(marks) and "errors/s" not in texts(rates)
    ticks = sorted(float(t[:-2]) for t in texts(marks) if re.fullmatch(r"[\d.]+/s", t))
    # 12 drops a sample: 12/s over a second on this machine's sample clock ("m"), a little
    # under whenever every sample came late (11.99/s drew an axis up to 11 under a loaded CI)
    reads = [(e["m"], e["c"]["lo"][6]) for e in rec.events() if e["ev"] == "read" and e.get("h") == "local"]
    peak = max((c1 - c0) / (m1 - m0) for (m0, c0), (m1, c1) in zip(reads, reads[1:]))
    assert 11 < peak < 13
    assert ticks and abs(ticks[-1] - peak) <= ticks[1] - ticks[0]  # the axis reaches the peak, in drops per second
    # a chart with none counted has no marks chart
    assert "ifb0: errors and drops" not in dom


def test_an_all_addresses_run_is_one_table_with_its_path_differs_cause(tmp_path) -> None:
    from dataclasses import asdict

    from linkdeck.core import model
    from linkdeck.core.levels import Status
    from linkdeck.core.model import EndState, Verdict
    from linkdeck.probe.watched import Outcome
    from tests.builders import recording_file

    def test_event(t: float, address: str, dst_iface: str, forward: float, reverse: float = 3.9e9) -> dict:
        # constructed: seed 003's figures (client → server ~500 MB/s to the aggr's address,
        # ~1.9 MB/s to a VNIC's), recorded the way the dashboard records each test of a run
        r = model.TestResult(
            src="client", dst="server", address=address, duration_s=5.0, forward_bps=forward, reverse_bps=reverse
        )
        o = Outcome(
            r,
            EndState("client"),
            EndState("server"),
            Verdict(Status.OK, None, None, summary="measured"),
            "eth0",
            dst_iface,
        )
        return {
            "t": t,
            "ev": "test",
            "matrix": False,
            "own": True,
            "outcome": json.loads(json.dumps(asdict(o), default=str)),
        }

    events = [
        test_event(101.0, "172.30.115.32", "aggr0", 4.0e9),
        test_event(107.0, "172.30.115.47", "admin1", 12.5e6),
        test_event(200.0, "172.30.115.32", "aggr0", 3.9e9),
    ]
    path = recording_file(tmp_path, [*events, {"t": 210.0, "ev": "end"}])
    text = linkdeck("report", str(path), "--markdown", "-o", "-").stdout
    tests = text[text.index("## Tests") :]
    # the two back-to-back tests are one table; the later lone test stays on its own
    assert re.search(r"^### \d\d:\d\d:\d\d client → server: 2 addresses, one test after another$", tests, re.M)
    assert tests.count("### ") == 2
    rows = [line for line in tests.splitlines() if line.startswith("| 172.30.115.")]
    assert [r.split(" | ")[0] for r in rows] == ["| 172.30.115.32", "| 172.30.115.47"]
    assert "BAD — client → server is broken via 172.30.115.47" in rows[1]
    assert (
        "- **PATH\\_DIFFERS**: client → server to 172.30.115.47 (admin1) is 320× slower than to 172.30.115.32 (aggr0)"
        in tests
    )
    page = tmp_path / "r.html"
    assert linkdeck("report", str(path), "-o", str(page)).returncode == 0
    html_text = page.read_text()
    assert html_text.count("<h3>") == 2 and "<td>PATH_DIFFERS</td>" in html_text


def test_the_hosts_line_counts_each_os_once() -> None:
    from linkdeck.commands.report_html import hosts_line
    from linkdeck.core.model import HostState, HostUpdate

    def host(name: str, os: str, detail: str) -> HostUpdate:
        return HostUpdate(host=name, os=os, os_detail=detail, state=HostState.LIVE)

    # OS strings as the adapters report them (the five-host snapshot's), build stamps differing
    fleet = [
        host("h1", "linux", "Debian GNU/Linux 12 (bookworm) (kernel 6.1.0-27-amd64)"),
        host("h2", "linux", "Debian GNU/Linux 12 (bookworm) (kernel 6.1.0-28-amd64)"),
        host("nas01", "truenas", "TrueNAS-13.0-U6.1"),
        host("h3", "linux", "Debian GNU/Linux 12 (bookworm) (kernel 6.1.0-27-amd64)"),
    ]
    assert hosts_line(fleet) == "3 × debian 12 (kernel 6.1): h1, h2, h3; nas01 (truenas 13.0)"


def test_a_configured_speed_is_marked_in_snapshot_and_report_with_what_the_mark_means(tmp_path) -> None:
    # a real recording of this machine with [speed] on lo (constructed config: lo reports none)
    config = tmp_path / "config.toml"
    config.write_text('[speed]\n"local/lo" = 10000\n')
    out = linkdeck("--config", str(config), "record", str(tmp_path / "r.ldrec"), "--duration", "2")
    assert out.returncode == 0, out.stderr
    note = "* after a speed: set in the config's [speed], not negotiated."
    shot = linkdeck("--config", str(config), "snapshot").stdout.splitlines()
    lo = next(line.split() for line in shot if line.split()[:1] == ["lo"])
    assert lo[1:5] == ["loopback", "up", "10G*", "full"] and note in shot
    report = linkdeck("report", str(tmp_path / "r.ldrec"), "--markdown", "-o", "-").stdout.splitlines()
    assert any(line.startswith("| lo | loopback | up | 10G\\* | full | ") for line in report)
    assert (
        "\\* after a speed: set in the config's \\[speed\\], not negotiated." in report
    )  # Markdown shows it as written
    # and without [speed], nothing marked and nothing to explain
    plain = linkdeck("snapshot").stdout
    assert "10G*" not in plain and "[speed]" not in plain
