"""`linkdeck snapshot` end to end, as a user runs it, on this machine's real interfaces."""

import json
import threading

import psutil

from linkdeck.core.tcpstats import TCP_COUNTERS
from tests.cli import linkdeck
from tests.lab import loopback_traffic


def test_snapshot_json_reports_local_interfaces_with_rates():
    before = set(psutil.net_io_counters(pernic=True))
    stop = threading.Event()
    t = threading.Thread(target=loopback_traffic, args=(stop,), daemon=True)
    t.start()
    try:
        out = linkdeck("snapshot", "--json", "--interval", "0.5")
    finally:
        stop.set()
        t.join(5)
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["findings"] == [] or all(
        {"code", "severity", "host", "message", "evidence", "hint"} <= f.keys() for f in doc["findings"]
    )
    (host,) = doc["hosts"]
    assert host["name"] == "local" and host["state"] == "live" and host["os"] == "linux"
    ifaces = {i["name"]: i for i in host["interfaces"]}
    # every interface the OS has (other tests may add or remove some meanwhile)
    assert before & set(psutil.net_io_counters(pernic=True)) <= set(ifaces)
    lo = ifaces["lo"]
    assert lo["kind"] == "loopback" and lo["mtu"] == psutil.net_if_stats()["lo"].mtu
    assert lo["speed_mbps"] is None and lo["util_pct"] is None  # loopback has no line rate
    assert "127.0.0.1/8" in lo["addresses"]
    assert lo["rx_bps"] > 10e6  # the ~400 Mb/s of loopback traffic above, with a wide margin
    for i in ifaces.values():
        for key in ("rx_bps", "tx_bps", "rx_pps", "tx_pps", "rx_errors_ps", "tx_drops_ps"):
            assert i[key] is None or i[key] >= 0
        assert i["speed_mbps"] is None or i["speed_mbps"] > 0
    # the host's TCP health (issue 19): every key, the loopback transfer's segments counted
    tcp = host["tcp"]
    assert set(tcp) == {f"{n}_ps" for n in TCP_COUNTERS} | {"retrans_pct"}
    assert tcp["out_segs_ps"] > 100 and tcp["in_segs_ps"] > 100
    assert tcp["retrans_pct"] is not None and 0 <= tcp["retrans_pct"] < 5
    assert all(v is not None and v >= 0 for v in tcp.values())  # Linux tells every one


def test_snapshot_table_is_readable():
    out = linkdeck("snapshot", "--interval", "0.2")
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0].startswith("local  [linux]  live")
    assert lines[1].split()[:6] == ["IFACE", "KIND", "OPER", "SPEED", "DUP", "MTU"]
    assert any(line.split()[0] == "lo" and "loopback" in line for line in lines[2:])


def test_bad_config_is_one_clear_line_and_exit_2(tmp_path):
    cfg = tmp_path / "bad.toml"
    cfg.write_text("interval = 1\nintervall = 2\n")
    out = linkdeck("snapshot", "--config", str(cfg))
    assert out.returncode == 2
    assert out.stderr.strip().startswith(f"linkdeck: {cfg}:2: intervall: unknown key")
    assert "Traceback" not in out.stderr


def test_nothing_to_watch_is_an_error():
    out = linkdeck("snapshot", "--no-local")
    assert out.returncode == 2 and "no hosts to watch" in out.stderr


def test_shared_options_before_the_sub_command_and_a_sub_command_is_never_a_host():
    proc = linkdeck("--ssh-config", "/dev/null", "snapshot", "--interval", "0.2", "local", "--json")
    assert proc.returncode == 0, proc.stderr
    assert [h["name"] for h in json.loads(proc.stdout)["hosts"]] == ["local"]
    proc = linkdeck("--no-local", "h1", "snapshot")
    assert proc.returncode == 2 and "'snapshot' is a sub-command, not a host" in proc.stderr


def test_a_host_not_live_exits_1_with_everything_printed_and_marked_stale():
    # Port 1 on loopback refuses at once: an unreachable host beside this live machine.
    out = linkdeck("--ssh-config", "/dev/null", "snapshot", "--json", "--interval", "0.3", "local", "root@127.0.0.1:1")
    assert out.returncode == 1, out.stderr
    hosts = {h["name"]: h for h in json.loads(out.stdout)["hosts"]}
    assert (hosts["local"]["state"], hosts["local"]["stale"]) == ("live", False)
    down = hosts["root@127.0.0.1:1"]
    assert (down["state"], down["stale"]) == ("unreachable", True)
    assert out.stderr == "linkdeck: 1 of 2 hosts not live: root@127.0.0.1:1 (unreachable)\n"
    table = linkdeck("--ssh-config", "/dev/null", "snapshot", "--interval", "0.3", "local", "root@127.0.0.1:1")
    assert table.returncode == 1 and "local  [linux]  live" in table.stdout and "root@127.0.0.1:1" in table.stdout


def test_a_speed_key_that_matches_no_interface_is_one_warning_line(tmp_path):
    cfg = tmp_path / "c.toml"
    cfg.write_text('[speed]\n"local/eht0" = 1000\n"local/lo" = 1000\n')
    out = linkdeck("snapshot", "--config", str(cfg), "--interval", "0.2", "--json")
    assert out.returncode == 0, out.stderr
    names = [i["name"] for i in json.loads(out.stdout)["hosts"][0]["interfaces"]]
    (line,) = out.stderr.splitlines()
    assert line.startswith("linkdeck: speed: local/eht0 matches no interface of local (") and "lo" in line
    assert all(name in line for name in sorted(names)[:12])


def test_snapshot_json_says_which_speed_came_from_the_config(tmp_path):
    # constructed config: lo reports no speed of its own, [speed] gives it one
    cfg = tmp_path / "c.toml"
    cfg.write_text('[speed]\n"local/lo" = 10000\n')
    out = linkdeck("snapshot", "--config", str(cfg), "--interval", "0.2", "--json")
    assert out.returncode == 0, out.stderr
    ifaces = {i["name"]: i for i in json.loads(out.stdout)["hosts"][0]["interfaces"]}
    assert ifaces["lo"]["speed_mbps"] == 10000 and ifaces["lo"]["speed_configured"] is True
    assert all(i["speed_configured"] is False for name, i in ifaces.items() if name != "lo")
    plain = json.loads(linkdeck("snapshot", "--interval", "0.2", "--json").stdout)
    assert all(i["speed_configured"] is False for i in plain["hosts"][0]["interfaces"])


def test_fail_on_exits_1_when_a_finding_that_bad_is_up_and_names_them(capsys):
    from linkdeck.commands.snapshot import gate
    from linkdeck.core.levels import Severity
    from linkdeck.core.model import Finding

    found = [
        Finding("MTU_MISMATCH", Severity.WARNING, "lab-a", "eth0", "m", "e", "n"),
        Finding("HALF_DUPLEX", Severity.ERROR, "lab-b", "eth1", "m", "e", "n"),
        Finding("RETRANSMITS", Severity.INFO, "lab-c", None, "m", "e", "n"),
    ]
    assert gate(found, None) == 0 and capsys.readouterr().err == ""
    assert gate(found, "error") == 1
    assert capsys.readouterr().err == "linkdeck: 1 finding at error or worse: HALF_DUPLEX lab-b/eth1\n"
    assert gate(found, "warning") == 1
    assert (
        capsys.readouterr().err
        == "linkdeck: 2 findings at warning or worse: MTU_MISMATCH lab-a/eth0, HALF_DUPLEX lab-b/eth1\n"
    )
    assert gate(found[2:], "warning") == 0


def test_fail_on_takes_only_warning_or_error():
    out = linkdeck("snapshot", "--fail-on", "info", "local")
    assert out.returncode == 2 and "invalid choice: 'info'" in out.stderr
    ok = linkdeck("snapshot", "--interval", "0.2", "--fail-on", "error", "--json", "local")
    findings = json.loads(ok.stdout)["findings"]
    assert ok.returncode == (1 if any(f["severity"] == "error" for f in findings) else 0), ok.stderr
