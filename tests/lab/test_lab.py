"""The lab is real: real sshd per namespace, real addresses and MTUs, real traffic."""

from __future__ import annotations

import ipaddress
import json
import os
import socket
import subprocess

import paramiko
import pytest

from tests.lab import Lab, cleanup_stale, tcp_connects, udp_delivered, wait_until
from tests.lab.netns import listening

pytestmark = pytest.mark.lab


def test_lab_tests_skip_with_a_reason_when_not_root(monkeypatch):
    from tests import conftest

    monkeypatch.setattr(os, "geteuid", lambda: 1000)
    assert conftest._lab_missing() == "needs root for network namespaces"
    monkeypatch.setattr(os, "geteuid", lambda: 0)
    monkeypatch.setattr(conftest.shutil, "which", lambda tool: None if tool == "iperf3" else "/usr/bin/" + tool)
    assert conftest._lab_missing() == "the namespace lab needs `iperf3` on PATH"


def _facts_over_ssh(lab: Lab, name: str) -> tuple[str, int]:
    out = lab.ssh(name, "sh", "-c", "'ip -4 -o addr show dev eth0; cat /sys/class/net/eth0/mtu'").stdout.split("\n")
    return out[0].split()[3], int(out[1])


def test_ssh_into_each_host_reports_its_own_address_and_mtu(lab):
    seen = {name: _facts_over_ssh(lab, name) for name in lab.hosts}
    assert seen == {name: (f"{h.address}/24", 1500) for name, h in lab.hosts.items()}
    assert len({h.address for h in lab.hosts.values()}) == 3
    assert all(ipaddress.ip_address(h.address) in lab.subnet for h in lab.hosts.values())


def test_each_host_is_its_own_namespace(lab):
    inodes = {name: lab.ssh(name, "stat", "-L", "-c", "%i", "/proc/self/ns/net").stdout.strip() for name in lab.hosts}
    assert len(set(inodes.values())) == 3
    with open("/proc/self/ns/net") as mine:
        assert str(os.fstat(mine.fileno()).st_ino) not in inodes.values()


def test_sshd_logs_the_login_verbosely(lab):
    lab.ssh("h2", "true")
    log = lab.sshd_log("h2")
    assert "Accepted publickey for root from " + lab.root_leg[1] in log
    assert "Server listening on 0.0.0.0 port 22" in log


def test_hosts_reach_each_other(lab):
    # no ping on this machine: a TCP handshake with the peer's sshd and a UDP datagram
    h1, h2, h3 = (lab.hosts[n] for n in ("h1", "h2", "h3"))
    assert tcp_connects(h1, h2.address) and tcp_connects(h3, h1.address)
    assert not tcp_connects(h1, h2.address, port=2)  # refused: a real peer answered
    assert udp_delivered(h2, h3, 1000) == 1000
    # the root leg: an address of the lab subnet in the test's own namespace, reaching all
    root_if, root_addr = lab.root_leg
    shown = subprocess.run(["ip", "-4", "-o", "addr", "show", "dev", root_if], capture_output=True, text=True).stdout
    assert shown.split()[3] == f"{root_addr}/24"
    for host in lab.hosts.values():
        socket.create_connection((host.address, host.port), timeout=3).close()


def test_iperf3_between_two_hosts_moves_bytes(lab):
    h1, h2 = lab.hosts["h1"], lab.hosts["h2"]

    def rx_bytes() -> int:
        return int(h2.exec("cat", "/sys/class/net/eth0/statistics/rx_bytes").stdout)

    before = rx_bytes()
    server = h2.popen("iperf3", "-s", "-1", "-p", "5299", stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        sent = 20 * 1024 * 1024
        wait_until(lambda: listening(server.pid, 5299), 10, message="iperf3 server listening")
        result = json.loads(h1.exec("iperf3", "-c", h2.address, "-p", "5299", "-n", str(sent), "-J", timeout=60).stdout)
    finally:
        server.wait(30)
    assert result["start"]["connected"][0]["remote_host"] == h2.address
    assert result["end"]["sum_sent"]["bytes"] >= sent
    # the server stops counting at the test's end, when the client's socket buffers may still
    # hold much of what it wrote (CI once saw 9.9 of 20 MiB counted): bytes moved, and the
    # receiver's own counters saw at least what iperf3 counted
    received = result["end"]["sum_received"]["bytes"]
    assert received > 1024 * 1024
    assert rx_bytes() - before >= received


def test_stop_sshd_closes_the_port_and_start_sshd_reopens_it_with_the_same_key(lab):
    h3 = lab.hosts["h3"]
    key_before = _host_key(h3.address, h3.port)
    old_pid = h3.sshd_pid
    h3.stop_sshd()
    try:
        assert h3.sshd_pid is None
        with socket.socket() as s, pytest.raises(ConnectionRefusedError):
            s.settimeout(3)
            s.connect((h3.address, h3.port))
        assert lab.ssh("h3", "true", check=False).returncode == 255
    finally:
        h3.start_sshd()
    assert h3.sshd_pid not in (None, old_pid)
    assert _host_key(h3.address, h3.port) == key_before
    assert lab.ssh("h3", "echo", "back").stdout == "back\n"


def _host_key(address: str, port: int) -> str:
    with socket.create_connection((address, port), timeout=5) as sock:
        transport = paramiko.Transport(sock)
        try:
            transport.start_client(timeout=5)
            return transport.get_remote_server_key().get_base64()
        finally:
            transport.close()


@pytest.mark.parametrize("port", [22, 2222])
def test_paramiko_connects_strictly_with_the_lab_files(make_lab, port):
    """What linkdeck's transport does: resolve the alias through ssh_config, check the host
    key against known_hosts (reject unknown), authenticate with the client key."""
    with make_lab({"p": {"port": port}}) as lab:
        conf = paramiko.SSHConfig.from_path(str(lab.ssh_config)).lookup("p")
        assert (conf["hostname"], conf["port"], conf["user"]) == (lab.hosts["p"].address, str(port), "root")
        client = paramiko.SSHClient()
        client.load_host_keys(conf["userknownhostsfile"])
        client.set_missing_host_key_policy(paramiko.RejectPolicy())
        try:
            client.connect(conf["hostname"], port=int(conf["port"]), username=conf["user"],
                           key_filename=conf["identityfile"][0], look_for_keys=False, allow_agent=False,
                           timeout=5)  # fmt: skip
            _, out, _ = client.exec_command("cat /sys/class/net/eth0/mtu")
            assert out.read() == b"1500\n"
        finally:
            client.close()


def test_pgrep_finds_processes_of_this_namespace_only(lab):
    h1, h2 = lab.hosts["h1"], lab.hosts["h2"]
    assert h1.pgrep("sshd -D") == [h1.sshd_pid]
    assert h2.pgrep("sshd -D") == [h2.sshd_pid]


def test_replay_host_runs_the_replay_dir_first(make_lab, tmp_path):
    replay = tmp_path / "replay"
    replay.mkdir()
    (replay / "uname").write_text("#!/bin/sh\necho FreeBSD\n")
    (replay / "uname").chmod(0o755)
    with make_lab({"bsd": {"replay_bin": replay}, "plain": {}}) as lab:
        assert lab.ssh("bsd", "uname", "-s").stdout == "FreeBSD\n"
        assert lab.ssh("bsd", "sh", "-c", "'uname -s'").stdout == "FreeBSD\n"
        assert lab.ssh("plain", "uname", "-s").stdout == "Linux\n"
        # everything else still comes from the real system
        assert lab.ssh("bsd", "sh", "-c", "'command -v cat'").stdout == "/usr/bin/cat\n"


def test_host_without_iperf3_has_none_on_its_login_path(make_lab):
    with make_lab({"bare": {"iperf3": False}, "full": {}}) as lab:
        bare = lab.ssh("bare", "sh", "-c", "'command -v iperf3 || echo missing; command -v ip'")
        assert bare.stdout.splitlines() == ["missing", str(lab.tmp / "bin-without-iperf3" / "ip")]
        assert lab.ssh("full", "sh", "-c", "'command -v iperf3'").stdout == "/usr/bin/iperf3\n"


def test_login_shell_prints_nothing_before_the_command(lab):
    assert lab.ssh("h1", "echo", "first").stdout == "first\n"


def test_chatty_bashrc_is_per_host(make_lab):
    with make_lab({"chatty": {"bashrc": "echo 'Welcome!'"}, "quiet": {}}) as lab:
        assert lab.ssh("chatty", "echo", "x").stdout == "Welcome!\nx\n"
        assert lab.ssh("quiet", "echo", "x").stdout == "x\n"


def test_options_mtu_port_and_extra_interface(make_lab):
    opts = {"jumbo": {"mtu": 9000, "port": 2222, "extra_ifaces": [("eth1", None, 1500)]}, "small": {}}
    with make_lab(opts) as lab:
        jumbo, small = lab.hosts["jumbo"], lab.hosts["small"]
        assert _facts_over_ssh(lab, "jumbo") == (f"{jumbo.address}/24", 9000)
        assert f"[{jumbo.address}]:2222" in lab.known_hosts.read_text()
        eth1 = jumbo.exec("ip", "-4", "-o", "addr", "show", "dev", "eth1").stdout.split()[3]
        assert eth1.endswith("/24") and eth1 != f"{jumbo.address}/24"
        assert int(jumbo.exec("cat", "/sys/class/net/eth1/mtu").stdout) == 1500
        # eth1 sits on the same bridge: the other host reaches it
        assert tcp_connects(small, eth1.split("/")[0], port=2222)
        # the MTU is real: 8000-byte frames leave jumbo but die at small's 1500-byte eth0
        assert udp_delivered(small, jumbo, 1400) == 1400
        assert udp_delivered(jumbo, small, 1400) == 1400
        assert udp_delivered(jumbo, small, 8000) == 0


def test_interfaces_come_and_go_and_shape(lab):
    h1 = lab.hosts["h1"]
    h1.add_interface("dummy7", "192.0.2.7/24", mtu=1280)
    try:
        assert "192.0.2.7/24" in lab.ssh("h1", "ip", "-4", "-o", "addr", "show", "dev", "dummy7").stdout
        assert lab.ssh("h1", "cat", "/sys/class/net/dummy7/mtu").stdout == "1280\n"
    finally:
        h1.del_interface("dummy7")
    assert lab.ssh("h1", "test", "-e", "/sys/class/net/dummy7", check=False).returncode == 1
    h1, h2 = lab.hosts["h1"], lab.hosts["h2"]
    h1.add_veth_pair("x0", peer=h2, peer_name="x1", address="192.0.2.1/30", peer_address="192.0.2.2/30", mtu=4000)
    assert lab.ssh("h2", "cat", "/sys/class/net/x1/mtu").stdout == "1500\n"
    assert tcp_connects(h1, "192.0.2.2")  # a direct cable, outside the bridge
    h1.del_interface("x0")
    assert lab.ssh("h2", "test", "-e", "/sys/class/net/x1", check=False).returncode == 1
    h1.shape("eth0", 50)
    try:
        assert "rate 50Mbit" in h1.exec("tc", "qdisc", "show", "dev", "eth0").stdout
    finally:
        h1.unshape("eth0")
    assert "tbf" not in h1.exec("tc", "qdisc", "show", "dev", "eth0").stdout


def test_close_removes_namespaces_daemons_and_files(require_root):
    lab = Lab(1)
    names = [lab.bridge_ns, lab.hosts["h1"].netns]
    pid, tmp, root_if = lab.hosts["h1"].sshd_pid, lab.tmp, lab.root_leg[0]
    lab.close()
    listed = subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert not any(n in listed for n in names)
    assert not os.path.exists(f"/proc/{pid}")
    assert not tmp.exists()
    assert subprocess.run(["ip", "link", "show", root_if], capture_output=True).returncode != 0


def test_cleanup_stale_removes_dead_runs_and_spares_live_labs(lab):
    dead = subprocess.Popen(["true"])
    dead.wait()
    stale = f"ld-{dead.pid}-1-stale"
    subprocess.run(["ip", "netns", "add", stale], check=True)
    sleeper = subprocess.Popen(["ip", "netns", "exec", stale, "sleep", "300"])
    stale_dir = lab.tmp.parent / f"ldlab-{dead.pid}-1-crashed"
    stale_dir.mkdir()
    try:
        cleanup_stale()  # (a concurrent run's session start may beat us to it: same outcome)
        assert sleeper.wait(5) == -15  # killed by PID (SIGTERM) before the namespace went
    finally:
        subprocess.run(["ip", "netns", "delete", stale], capture_output=True)
    assert stale not in subprocess.run(["ip", "netns", "list"], capture_output=True, text=True).stdout
    assert not stale_dir.exists()
    assert lab.ssh("h1", "true").returncode == 0 and lab.tmp.exists()


def test_shared_lab_is_healed_after_a_test_that_broke_it(lab):
    lab.hosts["h2"].stop_sshd()
    lab.hosts["h2"].set_mtu("eth0", 1280)
    lab.hosts["h2"].add_interface("junk0")
    lab.hosts["h2"].shape("eth0", 10)
    lab.heal()
    assert _facts_over_ssh(lab, "h2") == (f"{lab.hosts['h2'].address}/24", 1500)
    assert lab.ssh(
        "h2", "sh", "-c", "'ls /sys/class/net; tc qdisc show dev eth0 | grep -c tbf'", check=False
    ).stdout.split() == ["eth0", "lo", "0"]
