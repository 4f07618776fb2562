"""``linkdeck test`` and ``linkdeck matrix`` as a user runs them: usage errors exit 2, the
local host's ceiling runs real iperf3 over loopback (lab tests cover remote pairs)."""

from __future__ import annotations

import json
import re
import subprocess

import pytest

from tests.cli import linkdeck

needs_iperf3 = pytest.mark.skipif(
    subprocess.run(["sh", "-c", "command -v iperf3"], capture_output=True).returncode != 0, reason="needs iperf3"
)


@pytest.mark.parametrize(
    "args, message",
    [
        (["test", "local", "local", "--time", "0"], "--time must be a number between 1 and 600 seconds, not 0.0"),
        (["test", "local", "local", "--address", "1.2.3.4;id"], "not an address or host name"),
        (["test", "local", "bad host!"], "not a host"),
        (
            ["test", "local", "h2", "--all-addresses", "--address", "10.0.0.2"],
            "give either --all-addresses or --address, not both",
        ),
        (["test", "local", "local", "--all-addresses"], "SRC and DST are the same host"),
        (["test", "local", "h2", "--address", "10.0.0.2", "--address", "10.0.0.3;id"], "not an address or host name"),
        (["matrix", "local", "local"], "at least two different hosts"),
        (["matrix", "--json", "--csv", "a", "b"], "not allowed with argument"),
    ],
)
def test_usage_errors_exit_2(args: list[str], message: str) -> None:
    proc = linkdeck(*args)
    assert proc.returncode == 2
    assert message in proc.stderr
    assert "Traceback" not in proc.stderr


def test_config_error_exits_2(tmp_path) -> None:
    bad = tmp_path / "bad.toml"
    bad.write_text("[test]\nport = 99999\n")
    proc = linkdeck("test", "local", "local", "--config", str(bad))
    assert proc.returncode == 2 and "test.port: must be a TCP port" in proc.stderr


@needs_iperf3
def test_local_ceiling_json(tmp_path) -> None:
    config = tmp_path / "c.toml"
    config.write_text("[test]\nport = 5431\n")
    proc = linkdeck("test", "local", "local", "--time", "1", "--json", "--config", str(config))
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert (doc["src"], doc["dst"], doc["address"]) == ("local", "local", "127.0.0.1")
    assert doc["forward_bps"] > 1e8 and doc["reverse_bps"] is None  # a ceiling runs one way
    # judged against this machine's fastest link (none with a known speed: the figure alone)
    assert doc["verdict"] in ("ok", "bad") and doc["pct_of_expected"] is None or doc["verdict"] == "bad"
    assert [c["code"] for c in doc["causes"]] == ([] if doc["verdict"] == "ok" else ["CEILING_LOW"])
    # the loopback counters saw what iperf3 sent (both ends are the same lo)
    assert doc["counters_bps"]["src_tx"] == pytest.approx(doc["forward_bps"], rel=0.1)
    assert doc["counters_bps"]["src_tx"] == doc["counters_bps"]["dst_tx"]
    assert "sum_sent" in doc["iperf3"]


@needs_iperf3
def test_local_ceiling_text() -> None:
    proc = linkdeck("test", "local", "local", "--time", "1")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("local ceiling (loopback)   127.0.0.1   1.0 s   iperf3 3.")
    assert lines[2].split()[:3] == ["local", "→", "local"] and "b/s" in lines[2]
    assert re.search(r"Fastest link carries +\S", proc.stdout)
    # a loopback test is CPU-bound by definition: ok, or bad when it cannot fill this
    # machine's fastest link; what it measured is always said
    verdict = next(line for line in lines if line.startswith("  verdict: "))
    assert re.match(r"  verdict: (OK — ceiling \S+ [GM]b/s|BAD — this host cannot fill its )", verdict), verdict
    assert "  Interface counters vs iperf3\n" in proc.stdout
    assert re.search(r"^    forward +sender tx .+b/s, receiver rx .+; iperf3 ", proc.stdout, re.M)


def test_unknown_host_is_an_error_verdict_exit_1(tmp_path) -> None:
    ssh_config = tmp_path / "ssh_config"
    # A host that cannot be reached: an unused port on this machine's loopback.
    ssh_config.write_text("Host ghost\n  HostName 127.0.0.1\n  Port 1\n  ConnectTimeout 2\n")
    proc = linkdeck("test", "local", "ghost", "--json", "--time", "1", "--ssh-config", str(ssh_config))
    assert proc.returncode == 1, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["verdict"] == "error" and doc["error"].startswith("ghost: unreachable")
    assert "refused" in doc["error"]


def test_a_test_that_never_ran_prints_no_duration(tmp_path) -> None:
    ssh_config = tmp_path / "ssh_config"
    ssh_config.write_text("Host ghost\n  HostName 127.0.0.1\n  Port 1\n  ConnectTimeout 2\n")
    proc = linkdeck("test", "local", "ghost", "--time", "5", "--ssh-config", str(ssh_config))
    assert proc.returncode == 1, proc.stderr
    title = proc.stdout.splitlines()[0]
    assert title == "local → ghost", title
    assert "ghost: unreachable" in proc.stdout
