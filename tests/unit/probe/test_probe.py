"""The test orchestration on this machine: real iperf3 over LocalRunner on loopback (the
lab tests do the same over real SSH between namespaces). Runners that only change what
``iperf3 --version`` says, or hide iperf3 from PATH, stand in for old and missing iperf3."""

from __future__ import annotations

import asyncio
import socket
import subprocess
from pathlib import Path

import pytest

from linkdeck.core import oses
from linkdeck.probe import (
    End,
    Iperf3Missing,
    PeerUnreachable,
    ProbeError,
    TestTimeout,
    iperf,
    run_test,
    templates as cmd,
)
from linkdeck.probe.iperf import iperf3_info, run_client, start_server
from linkdeck.transport.local_runner import LocalRunner
from linkdeck.transport.runner import CommandResult
from tests.lab import free_port, iperf3_pids

pytestmark = pytest.mark.skipif(
    subprocess.run(["sh", "-c", "command -v iperf3"], capture_output=True).returncode != 0, reason="needs iperf3"
)


class VersionRunner(LocalRunner):
    """Real commands, but ``iperf3 --version`` answers as an older iperf3 would."""

    def __init__(self, banner: str) -> None:
        self.banner = banner

    async def run(self, argv, timeout: float = 10.0) -> CommandResult:
        if list(argv) == ["iperf3", "--version"]:
            return CommandResult(self.banner + "\n", "", 0)
        return await super().run(argv, timeout)


class PathRunner(LocalRunner):
    """Every command runs with PATH set to one directory (a login whose PATH lacks iperf3)."""

    def __init__(self, path: Path) -> None:
        self.path = str(path)

    def _wrap(self, argv):
        return ["/usr/bin/env", f"PATH={self.path}", *argv]

    async def run(self, argv, timeout: float = 10.0) -> CommandResult:
        return await super().run(self._wrap(argv), timeout)

    def stream(self, argv):
        return super().stream(self._wrap(argv))


def _installed_iperf3() -> str | None:
    out = subprocess.run(["sh", "-c", "iperf3 --version"], capture_output=True, text=True)
    version = cmd.parse_version(out.stdout + out.stderr)
    return ".".join(map(str, version)) if version else None


INSTALLED_IPERF3 = _installed_iperf3()
THIS_MACHINE_HINT = oses.iperf3_install(
    "linux", Path("/etc/os-release").read_text() if Path("/etc/os-release").exists() else ""
)


def local(os_name: str | None = "linux", runner=None) -> End:
    return End("here", runner or LocalRunner(), os_name)


# --- templates and validation -----------------------------------------------------------------


@pytest.mark.parametrize("bad", ["10.0.0.1; reboot", "$(id)", "-oProxyCommand=x", "a b", "", "host`x`", "1.2.3.4\nid"])
def test_hostile_addresses_are_refused(bad: str) -> None:
    with pytest.raises(ProbeError, match="not an address"):
        cmd.check_address(bad)


def test_addresses_names_ports_and_durations() -> None:
    assert cmd.check_address(" 10.77.0.12 ") == "10.77.0.12"
    assert cmd.check_address("fe80::1%eth0") == "fe80::1%eth0"
    assert cmd.check_address("nas01.lan") == "nas01.lan"
    assert cmd.check_port(5201) == 5201
    for port in (0, 65536, "5201", True, 52.0):
        with pytest.raises(ProbeError):
            cmd.check_port(port)
    assert cmd.check_duration(0.4) == 1 and cmd.check_duration(5.4) == 5
    for secs in (601, float("nan"), "5", None):
        with pytest.raises(ProbeError):
            cmd.check_duration(secs)


def test_templates_are_fixed_text_with_checked_values() -> None:
    assert cmd.server_script(5201, True) == "echo $$; exec iperf3 -s -1 -p 5201 --forceflush 2>&1"
    assert cmd.server_script(5300, False) == "echo $$; exec iperf3 -s -1 -p 5300 2>&1"
    assert cmd.client_script("10.0.0.2", 5201, 3, "bidir", True) == (
        "echo $$; exec iperf3 -c 10.0.0.2 -p 5201 --bidir -J -t 3 --connect-timeout 3000 2>&1"
    )
    assert (
        cmd.client_script("h2.lan", 5202, 5, "reverse", False)
        == "echo $$; exec iperf3 -c h2.lan -p 5202 -R -J -t 5 2>&1"
    )
    with pytest.raises(ProbeError):
        cmd.kill_script(1)
    assert cmd.kill_script(4242).startswith("kill 4242 2>/dev/null || exit 0;")


def test_version_banners() -> None:
    assert cmd.parse_version("iperf 3.12 (cJSON 1.7.15)\nLinux vm 6.18") == (3, 12)
    assert cmd.parse_version("iperf 3.1.3\n") == (3, 1, 3)
    assert cmd.parse_version("iperf version 2.1.9 (14 March 2023) pthreads") is None
    assert cmd.parse_version("sh: iperf3: not found") is None


@pytest.mark.parametrize(
    "os_name, release, hint",
    [
        ("linux", 'ID=debian\nVERSION_ID="12"', "apt install iperf3"),
        ("linux", "ID=ubuntu\nID_LIKE=debian", "apt install iperf3"),
        ("linux", 'ID="rocky"\nID_LIKE="rhel centos fedora"', "dnf install iperf3"),
        ("linux", "ID=alpine", "apk add iperf3"),
        ("linux", "", oses.LINUX_IPERF3_FALLBACK),
        ("freebsd", "", "pkg install iperf3"),
        ("opnsense", "", "pkg install iperf3"),
        ("pfsense", "", "pkg install iperf3"),
        ("truenas", "", "pkg install iperf3"),
        ("macos", "", "brew install iperf3"),
        ("openbsd", "", "pkg_add iperf3"),
        ("netbsd", "", "pkgin install iperf3"),
        ("smartos", "", "pkgin install iperf3"),
        ("omnios", "", "pkg install iperf3"),
    ],
)
def test_install_hint_per_os(os_name: str, release: str, hint: str) -> None:
    assert oses.iperf3_install(os_name, release) == hint


# --- real iperf3 on loopback -------------------------------------------------------------------


async def test_loopback_bidir_test_measures_both_directions_and_leaves_nothing() -> None:
    port = free_port()
    end = local()
    result = await run_test(end, end, "127.0.0.1", 1, port)
    assert result.error is None
    assert result.forward_bps > 1e8 and result.reverse_bps > 1e8  # loopback carries Gb/s
    assert (result.src, result.dst, result.address) == ("here", "here", "127.0.0.1")
    assert 0.9 < result.duration_s < 1.5
    assert result.iperf3_version == INSTALLED_IPERF3
    assert result.single_threaded is (cmd.parse_version(f"iperf {INSTALLED_IPERF3}") < cmd.MULTITHREADED_SINCE)
    assert result.cpu_src_pct is not None and result.cpu_dst_pct is not None
    assert {"sum_sent", "sum_received", "sum_sent_bidir_reverse"} <= set(result.raw_end)
    assert iperf3_pids(port) == []


async def test_one_way_test_for_a_ceiling() -> None:
    port = free_port()
    result = await run_test(local(), local(), "127.0.0.1", 1, port, both_ways=False)
    assert result.forward_bps > 1e8 and result.reverse_bps is None
    assert "sum_sent_bidir_reverse" not in result.raw_end


async def test_port_in_use_moves_to_the_next_one() -> None:
    port = free_port()
    with socket.socket(socket.AF_INET6) as blocker:  # iperf3 listens on [::] (dual stack)
        blocker.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
        blocker.bind(("::", port))
        blocker.listen()
        end = local()
        info = await iperf3_info(end)
        server, used = await start_server(end, info, port, idle_s=10)
        try:
            assert used == port + 1
            assert server.pid is not None and iperf3_pids(port + 1) == [server.pid]
        finally:
            await server.stop()
        assert iperf3_pids(port + 1) == []
        result = await run_test(end, end, "127.0.0.1", 1, port)
        assert result.forward_bps > 1e8


async def test_old_iperf3_runs_forward_then_reverse() -> None:
    port = free_port()
    end = End("old", VersionRunner("iperf 3.6 (cJSON 1.5.2)"), "linux")
    result = await run_test(end, end, "127.0.0.1", 1, port)
    assert result.forward_bps > 1e8 and result.reverse_bps > 1e8
    assert set(result.raw_end) == {"forward", "reverse"}
    assert result.raw_end["forward"]["sum_received"]["bits_per_second"] == result.forward_bps
    assert iperf3_pids(port) == []


async def test_iperf3_without_forceflush_or_connect_timeout_still_runs() -> None:
    port = free_port()
    end = End("ancient", VersionRunner("iperf 3.1.3"), "linux")
    result = await run_test(end, end, "127.0.0.1", 1, port)
    assert result.forward_bps > 1e8 and result.reverse_bps > 1e8
    assert iperf3_pids(port) == []


async def test_missing_iperf3_names_the_install_command(tmp_path: Path) -> None:
    for tool in ("sh", "cat"):
        (tmp_path / tool).symlink_to(
            subprocess.run(["sh", "-c", f"command -v {tool}"], capture_output=True, text=True).stdout.strip()
        )
    end = End("nas01", PathRunner(tmp_path), "linux")
    with pytest.raises(Iperf3Missing) as caught:
        await run_test(end, local(), "127.0.0.1", 1, free_port())
    # the hint follows this machine's own /etc/os-release
    assert str(caught.value) == f"iperf3 not found on nas01: `{THIS_MACHINE_HINT}`"
    bsd = End("fw", PathRunner(tmp_path), "opnsense")
    with pytest.raises(Iperf3Missing, match=r"^iperf3 not found on fw: `pkg install iperf3`$"):
        await run_test(local(), bsd, "127.0.0.1", 1, free_port())


async def test_nobody_listening_is_peer_unreachable() -> None:
    end = local()
    info = await iperf3_info(end)
    port = free_port()
    with pytest.raises(
        PeerUnreachable, match=rf"here \(127.0.0.1\) port {port} is not reachable from here: .*Connection refused"
    ):
        await run_client(end, end, info, "127.0.0.1", port, 1, "bidir", [], idle_s=10)


async def a_running_test() -> tuple[int, asyncio.Task]:
    """A 10 s local test, once its server and client both run: its port and its task."""
    port = free_port()
    end = local()
    task = asyncio.create_task(run_test(end, end, "127.0.0.1", 10, port))
    for _ in range(200):
        if len(iperf3_pids(port)) == 2:
            break
        await asyncio.sleep(0.025)
    assert len(iperf3_pids(port)) == 2  # server and client both ran
    return port, task


async def test_cancel_mid_test_kills_server_and_client() -> None:
    port, task = await a_running_test()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert iperf3_pids(port) == []


async def test_timeout_kills_both_and_says_so() -> None:
    port = free_port()
    end = local()
    with pytest.raises(TestTimeout, match="did not finish within 2 s"):
        await run_test(end, end, "127.0.0.1", 6, port, timeout=2)
    assert iperf3_pids(port) == []


async def test_bad_values_never_reach_a_shell() -> None:
    with pytest.raises(ProbeError, match="not an address"):
        await run_test(local(), local(), "127.0.0.1;touch /tmp/x", 1, free_port())
    with pytest.raises(ProbeError, match="TCP port"):
        await run_test(local(), local(), "127.0.0.1", 1, 70000)


async def test_a_test_end_keeps_its_connection_and_no_sampler_stream() -> None:
    """Opening a host starts its sampler's stream (on Linux it samples at once); a test's end
    only runs commands, so the pool ends that stream and keeps the connection."""
    import psutil

    from linkdeck.platforms.detect import DETECTED, streamed_adapter
    from linkdeck.probe.session import EndPool
    from linkdeck.settings.config import HostSpec, Settings
    from linkdeck.transport.local_runner import LocalRunner

    def streams() -> list[psutil.Process]:
        return [p for p in psutil.Process().children() if DETECTED in " ".join(p.cmdline())]

    async def opener(spec, settings, small_requests=False):
        return await streamed_adapter(LocalRunner(), settings, small_requests)

    pool = EndPool(Settings(), opener)
    try:
        end = await pool.get(HostSpec("a", "192.0.2.1"))
        _, alive = await asyncio.to_thread(psutil.wait_procs, streams(), 5)
        assert alive == [] and streams() == []
        assert (await end.runner.run(["echo", "still open"])).stdout == "still open\n"
    finally:
        await pool.close()


async def test_end_pool_opens_both_ends_at_once_and_names_the_one_that_failed() -> None:
    from linkdeck.platforms.psutil_adapter import LocalAdapter
    from linkdeck.probe.session import EndPool
    from linkdeck.settings.config import HostSpec, Settings
    from linkdeck.transport.runner import TransportError

    opening: list[str] = []
    both = asyncio.Event()

    async def opener(spec, settings, small_requests=False):
        opening.append(spec.name)
        if len(opening) == 2:
            both.set()
        await asyncio.wait_for(both.wait(), 5)  # returns only once both opens are under way
        if spec.name == "down":
            raise TransportError("connection refused")
        adapter = LocalAdapter(None, "linux")
        return adapter

    pool = EndPool(Settings(), opener)
    try:
        src, dst = await pool.pair(HostSpec("a", "192.0.2.1"), HostSpec("b", "192.0.2.2"))
        assert (src.name, dst.name, src.os, sorted(opening)) == ("a", "b", "linux", ["a", "b"])
        opening.clear()
        both.clear()
        with pytest.raises(ProbeError, match="cannot open down: connection refused"):
            await pool.pair(HostSpec("c", "192.0.2.3"), HostSpec("down", "192.0.2.4"))
        assert sorted(opening) == ["c", "down"]
    finally:
        await pool.close()


def test_a_result_covering_less_than_asked_is_cut_short() -> None:
    # constructed: a -J end whose sums cover 2.3 of the 5 s asked, with no error (a killed
    # 3.19+ run exits 0; its real output also carries "interrupt …", tested in the lab)
    from linkdeck.parsers.iperf3 import parse_json
    from linkdeck.probe.iperf import cut_short

    doc = (
        '{"start": {"test_start": {"duration": 5, "reverse": 0}}, '
        '"end": {"sum_sent": {"seconds": 2.3, "bytes": 1, "bits_per_second": 8e9}, '
        '"sum_received": {"seconds": 2.3, "bytes": 1, "bits_per_second": 8e9}}}'
    )
    assert cut_short(parse_json(doc), 5) == "its result covers 2.3 of 5 s"
    assert cut_short(parse_json(doc.replace("2.3", "5.0")), 5) is None
    stopped = parse_json(doc[:-1] + ', "error": "interrupt - the client has terminated by signal Hangup(1)"}')
    assert cut_short(stopped, 5) == "after 2.3 of 5 s (interrupt - the client has terminated by signal Hangup(1))"


async def test_a_test_cancelled_twice_is_still_cleaned_up_and_can_be_waited_for() -> None:
    """A second cancel (an app quitting cancels its test, then its framework cancels it again)
    ends the test's task while its shielded cleanup still kills the iperf3 processes; whoever
    closes the connections next waits for that cleanup with iperf.stopped."""
    port, task = await a_running_test()
    task.cancel()
    for _ in range(400):  # into the cleanup, then cancelled again there
        if iperf._stopping:
            break
        await asyncio.sleep(0.005)
    assert iperf._stopping and not task.done()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert iperf._stopping, "the cleanup outlived the test's task"
    await iperf.stopped(10)
    assert iperf3_pids(port) == [] and not iperf._stopping
