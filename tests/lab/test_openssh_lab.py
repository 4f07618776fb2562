"""What only the OpenSSH transport does, against real sshd in the lab: host certificates from a
CA in known_hosts, a master the user already has open (no new TCP connection), Match exec and
a ProxyJump chain resolved by ssh itself, and nothing left running on the host after a close."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path

import psutil
import pytest

from linkdeck.core.model import HostSample, HostState
from linkdeck.platforms.detect import open_remote
from linkdeck.settings.config import HostSpec, Settings
from linkdeck.transport import local_runner, openssh_master, openssh_mux
from linkdeck.transport.openssh import OpensshRunner
from linkdeck.transport.runner import CommandTimeout, Unreachable
from linkdeck.transport.ssh_config import resolve
from linkdeck.transport.ssh_options import ssh_client
from tests.lab import wait_for
from tests.lab.test_ssh_lab import fleet_until, last, write_config

pytestmark = pytest.mark.lab


@pytest.fixture(autouse=True)
def no_agent(monkeypatch):
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)


@pytest.fixture
def spawned(monkeypatch) -> list[tuple[str, ...]]:
    """The argv of every process linkdeck starts from here on (ssh's, at connect): through
    asyncio, or off the event loop (local_runner.exit_status: a master's login)."""
    calls: list[tuple[str, ...]] = []
    real = asyncio.create_subprocess_exec
    real_popen = local_runner._popen

    async def counting(*argv, **kw):
        calls.append(tuple(argv))
        return await real(*argv, **kw)

    def counting_popen(argv, popen):
        calls.append(tuple(argv))
        return real_popen(argv, popen)

    monkeypatch.setattr(asyncio, "create_subprocess_exec", counting)
    monkeypatch.setattr(local_runner, "_popen", counting_popen)
    return calls


def connections(lab, name: str) -> int:
    """TCP connections sshd accepted (LogLevel VERBOSE logs each)."""
    return lab.sshd_log(name).count("Connection from ")


async def test_a_host_certificate_from_a_trusted_ca_is_live_over_openssh_and_explained_over_paramiko(
    make_lab, tmp_path: Path
) -> None:
    with make_lab(1) as lab:
        host = lab.hosts["h1"]
        ca = tmp_path / "lab_ca"
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", "lab-ca", "-f", str(ca)], check=True)
        pub = host.dir / "ssh_host_ed25519_key.pub"
        subprocess.run(["ssh-keygen", "-q", "-s", str(ca), "-I", "h1", "-h", "-n", host.address, str(pub)], check=True)
        host.stop_sshd()
        config_path = host.dir / "sshd_config"
        config_path.write_text(
            config_path.read_text() + f"HostCertificate {host.dir / 'ssh_host_ed25519_key-cert.pub'}\n"
        )
        host.start_sshd()
        ca_type, ca_b64 = Path(f"{ca}.pub").read_text().split()[:2]
        known = tmp_path / "known_hosts"
        known.write_text(f"@cert-authority {host.address} {ca_type} {ca_b64}\n")  # only the CA: no plain key
        config = write_config(tmp_path / "ssh_config", lab, "h1", known=known, extra="  StrictHostKeyChecking yes\n")
        spec = HostSpec(name="h1", address="h1")
        for transport in ("openssh", "paramiko"):
            settings = Settings(local=False, ssh_config=str(config), transport=transport)
            fleet, updates = await fleet_until(
                [spec], settings, lambda us: any(u.state not in (HostState.CONNECTING,) for u in us)
            )
            try:
                if transport == "openssh":
                    await asyncio.sleep(0)  # a first sample may follow the connect
                    fleet_state = last(updates, "h1")
                    assert fleet_state.state in (HostState.LIVE, HostState.CONNECTING), fleet_state.error
                    if fleet_state.state != HostState.LIVE:
                        await fleet_until_live(updates)
                    assert last(updates, "h1").detail.transport == "openssh"
                else:
                    u = last(updates, "h1")
                    assert u.state == HostState.HOST_KEY_UNKNOWN, u.error
                    assert "cannot check host certificates" in u.error and "--transport openssh" in u.error
            finally:
                await fleet.stop()
        assert known.read_text() == f"@cert-authority {host.address} {ca_type} {ca_b64}\n"  # nothing written


def sharing_config(lab, tmp_path: Path) -> tuple[Path, Path]:
    """A user's ssh_config for h1 that shares connections (ControlMaster auto), its sockets in a
    directory of their own short enough for sun_path: that directory and the config."""
    socket_dir = Path(tempfile.mkdtemp(prefix="cm", dir="/tmp"))
    config = write_config(
        tmp_path / "ssh_config",
        lab,
        "h1",
        extra=f"  ControlMaster auto\n  ControlPath {socket_dir}/%C\n  ControlPersist 60\n  BatchMode yes\n",
    )
    return socket_dir, config


async def fleet_until_live(updates, timeout: float = 20) -> None:
    await wait_for(lambda: any(u.state == HostState.LIVE for u in updates), timeout=timeout)


async def test_the_users_open_master_is_used_with_no_new_connection_and_left_open(lab, tmp_path: Path, spawned) -> None:
    socket_dir, config = sharing_config(lab, tmp_path)
    user_ssh = ["ssh", "-F", str(config)]
    subprocess.run([*user_ssh, "-fN", "h1"], check=True, stdin=subprocess.DEVNULL, timeout=30)  # the user's master
    try:
        pid = int(
            subprocess.run([*user_ssh, "-O", "check", "h1"], capture_output=True, text=True, check=True)
            .stderr.split("pid=")[1]
            .split(")")[0]
        )
        before = connections(lab, "h1")
        settings = Settings(local=False, ssh_config=str(config), transport="openssh")
        adapter = await open_remote(HostSpec(name="h1", address="h1"), settings)
        try:
            runner = adapter.runner
            assert isinstance(runner, OpensshRunner) and runner.found_open and runner.master_pid == pid
            assert not [argv for argv in spawned if "-O" in argv]  # asked over its socket, by no ssh
            got = 0
            async with contextlib.aclosing(adapter.samples(0.3)) as samples:
                async for sample in samples:
                    got += isinstance(sample, HostSample)
                    if got == 3:
                        break
            assert (await runner.run(["echo", "ok"])).stdout == "ok\n"
            assert spawned == []  # detection, the stream and the command: sessions opened in this process
        finally:
            await adapter.close()
        assert connections(lab, "h1") == before  # not one new TCP connection
        assert psutil.pid_exists(pid)  # and the user's master is still theirs, open
        assert subprocess.run([*user_ssh, "-O", "check", "h1"], capture_output=True).returncode == 0
    finally:
        subprocess.run([*user_ssh, "-O", "exit", "h1"], capture_output=True)
        shutil.rmtree(socket_dir, ignore_errors=True)


async def test_match_exec_chooses_the_hostname_and_a_proxyjump_chain_is_followed(lab, tmp_path: Path) -> None:
    h1, h2, h3 = lab.hosts["h1"], lab.hosts["h2"], lab.hosts["h3"]
    marker = tmp_path / "at-the-lab"
    marker.write_text("")
    common = (
        f"  User root\n  IdentityFile {lab.client_key}\n  IdentitiesOnly yes\n"
        f"  UserKnownHostsFile {lab.known_hosts}\n  GlobalKnownHostsFile /dev/null\n"
    )
    config = tmp_path / "ssh_config"
    config.write_text(
        f'Match originalhost target exec "test -e {marker}"\n  HostName {h3.address}\n'
        f"Host target\n  HostName 192.0.2.1\n  ProxyJump j1,j2\n{common}"
        f"Host j1\n  HostName {h1.address}\n{common}Host j2\n  HostName {h2.address}\n{common}"
    )
    settings = Settings(local=False, ssh_config=str(config), transport="openssh")
    spec = HostSpec(name="target", address="target")
    target = resolve(spec, settings)
    assert target.hostname == h3.address
    seen = {n: lab.sshd_log(n).count("Accepted publickey for root from ") for n in ("h1", "h2", "h3")}
    client = ssh_client()
    assert client is not None
    runner = OpensshRunner(client, spec, target, settings)
    await runner.connect()
    try:
        mac = (await runner.run(["cat", "/sys/class/net/eth0/address"])).stdout
    finally:
        await runner.close()
    assert mac == h3.exec("cat", "/sys/class/net/eth0/address").stdout
    # each hop logged in once: h1 from here, h2 from h1, h3 from h2 (the chain)
    assert {n: lab.sshd_log(n).count("Accepted publickey for root from ") - seen[n] for n in seen} == {
        "h1": 1,
        "h2": 1,
        "h3": 1,
    }
    assert lab.sshd_log("h2").splitlines()[-20:] and f"Accepted publickey for root from {h1.address}" in lab.sshd_log(
        "h2"
    )
    assert f"Accepted publickey for root from {h2.address}" in lab.sshd_log("h3")


def running(procs) -> list[psutil.Process]:
    """Those of ``procs`` still running: one that exits while it is being read counts as gone."""
    left = []
    for proc in procs:
        with contextlib.suppress(psutil.NoSuchProcess):
            if proc.status() != psutil.STATUS_ZOMBIE:
                left.append(proc)
    return left


def on_the_host(sshd: psutil.Process) -> list[psutil.Process]:
    """What runs under the host's sshd besides sshd itself (the sessions' commands). psutil
    keeps the name it read, so reading it again later cannot race an exit."""
    try:
        children = sshd.children(recursive=True)
    except psutil.NoSuchProcess:
        return []
    found = []
    for proc in children:
        with contextlib.suppress(psutil.NoSuchProcess):
            if not proc.name().startswith("sshd"):
                found.append(proc)
    return running(found)


def local_ssh_for(control_path: str) -> list[psutil.Process]:
    """This machine's ssh processes for one control socket: the master and its sessions.
    process_iter skips a process that exits while it is listed; a master retitles itself
    ("ssh: PATH [mux]"), so the path is looked for inside the words."""
    found = [p for p in psutil.process_iter(["cmdline"]) if control_path in " ".join(p.info["cmdline"] or [])]
    return running(found)


async def test_a_closed_stream_and_master_leave_nothing_on_the_host(lab, spawned) -> None:
    """Everything ends on the host and here; the master is ended over its socket, with no
    `ssh -O exit` started."""
    adapter = await open_remote(lab.spec("h2"), lab.settings(transport="openssh"))
    runner = adapter.runner
    assert isinstance(runner, OpensshRunner)
    master_pid = runner.master_pid
    control_path = runner.control_path
    sshd = psutil.Process(lab.hosts["h2"].sshd_pid)
    try:
        async with contextlib.aclosing(adapter.samples(0.3)) as samples:
            async for sample in samples:
                if isinstance(sample, HostSample):
                    break
            # while the stream runs, its shell runs on the host and the master here
            assert "sh" in [p.name() for p in on_the_host(sshd)]
            assert master_pid is not None and master_pid in [p.pid for p in local_ssh_for(control_path)]
    finally:
        await adapter.close()
    await wait_for(lambda: on_the_host(sshd) == [], timeout=10, message="every command linkdeck ran on h2 ended")
    await wait_for(
        lambda: local_ssh_for(control_path) == [], timeout=10, message="linkdeck's ssh master and sessions ended"
    )
    assert [argv for argv in spawned if "-O" in argv] == []
    # the one ssh process was the master: detection and the stream were sessions opened here
    assert len(spawned) == 1 and "ControlMaster=yes" in spawned[0]


async def connected(lab, name: str) -> OpensshRunner:
    """A runner for lab host ``name`` over OpenSSH, its master started."""
    spec, settings = lab.spec(name), lab.settings(transport="openssh")
    client = ssh_client()
    assert client is not None
    runner = OpensshRunner(client, spec, resolve(spec, settings), settings)
    await runner.connect()
    return runner


async def test_a_command_on_a_real_master_gives_its_output_and_status_with_no_ssh_process(lab, spawned) -> None:
    runner = await connected(lab, "h3")
    try:
        done = await runner.run(["sh", "-c", "echo out; echo err >&2; exit 7"])
        assert (done.stdout, done.stderr, done.status) == ("out\n", "err\n", 7)
        with pytest.raises(CommandTimeout):
            await runner.run(["sleep", "30"], timeout=0.5)
        # a session closed from our end leaves the master serving the next one
        assert (await runner.run(["echo", "next"])).stdout == "next\n"
        assert runner.master_pid is not None and psutil.pid_exists(runner.master_pid)
        assert len(spawned) == 1  # the master
    finally:
        await runner.close()


async def test_a_real_master_is_asked_over_its_socket_and_a_killed_ones_is_not_running(lab, spawned) -> None:
    runner = await connected(lab, "h1")
    client = runner.client
    path = runner.control_path
    try:
        assert len(spawned) == 1 and "ControlMaster=yes" in spawned[0]  # the master, and no ssh -O check
        said = subprocess.run([client, "-S", path, "-O", "check", "h1"], capture_output=True, text=True).stderr
        assert runner.master_pid is not None and f"Master running (pid={runner.master_pid})" in said
        assert await openssh_mux.alive_check(path) == runner.master_pid
        psutil.Process(runner.master_pid).kill()  # killed: its socket file stays, nobody listens
        await wait_for(lambda: not psutil.pid_exists(runner.master_pid or 0), timeout=5)
        assert Path(path).exists()
        asked = len(spawned)
        started = asyncio.get_running_loop().time()
        assert await openssh_master.running(client, path) is None
        assert asyncio.get_running_loop().time() - started < 1.0 and len(spawned) == asked
    finally:
        await runner.close()
        Path(path).unlink(missing_ok=True)


async def test_a_stale_socket_at_the_users_control_path_is_replaced_and_nothing_is_left(lab, tmp_path: Path) -> None:
    """The user's ControlPath holds a socket file nobody listens on (a master killed before it
    could unlink it): linkdeck unlinks it as ``ssh HOST`` does, its master goes there, the host
    goes live, and after the close no ssh naming that path runs here."""
    socket_dir, config = sharing_config(lab, tmp_path)
    settings = Settings(local=False, ssh_config=str(config), transport="openssh")
    spec = HostSpec(name="h1", address="h1")
    path = resolve(spec, settings).control_path
    assert path is not None and path.startswith(str(socket_dir))
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(path)
    stale.close()  # the file stays; a connect there is refused
    try:
        fleet, updates = await fleet_until(
            [spec], settings, lambda us: any(u.state not in (HostState.CONNECTING,) for u in us)
        )
        try:
            first = next(u for u in updates if u.state != HostState.CONNECTING)
            assert first.state == HostState.LIVE, first.error
            assert first.detail.transport == "openssh"
            assert await openssh_mux.alive_check(path) > 1  # linkdeck's master, at the user's path
        finally:
            await fleet.stop()
        await wait_for(lambda: local_ssh_for(path) == [], timeout=10, message="no ssh naming the ControlPath is left")
    finally:
        for proc in local_ssh_for(path):  # only what names this test's own path, by PID
            with contextlib.suppress(psutil.Error):
                proc.terminate()
        shutil.rmtree(socket_dir, ignore_errors=True)


async def test_a_master_that_never_answers_leaves_no_detached_ssh(lab, tmp_path: Path, monkeypatch) -> None:
    """Should ssh -fN still log in with no control socket (here: the stale file is left in its
    way on purpose), the host is unreachable and the ssh it left detached is ended, by PID."""
    socket_dir = Path(tempfile.mkdtemp(prefix="cm", dir="/tmp"))
    config = write_config(
        tmp_path / "ssh_config", lab, "h1", extra=f"  ControlMaster auto\n  ControlPath {socket_dir}/%C\n"
    )
    settings = Settings(local=False, ssh_config=str(config), transport="openssh")
    spec = HostSpec(name="h1", address="h1")
    target = resolve(spec, settings)
    path = target.control_path
    assert path is not None
    stale = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stale.bind(path)
    stale.close()
    monkeypatch.setattr(openssh_master, "make_way", lambda path: None)  # constructed: the stale file stays
    client = ssh_client()
    assert client is not None
    runner = OpensshRunner(client, spec, target, settings)
    try:
        with pytest.raises(Unreachable, match="master does not answer"):
            await runner.connect()
        await wait_for(lambda: local_ssh_for(path) == [], timeout=10, message="the detached ssh was ended")
    finally:
        await runner.close()
        for proc in local_ssh_for(path):  # only what names this test's own path, by PID
            with contextlib.suppress(psutil.Error):
                proc.terminate()
        shutil.rmtree(socket_dir, ignore_errors=True)
