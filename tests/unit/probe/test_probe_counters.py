"""One-shot counter reads (each adapter's ``read_counters``): recorded outputs from
tests/fixtures/ through a runner that answers with them, the replayed FreeBSD and SmartOS hosts
of tests/replay/ run for real, and this machine's own counters."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from linkdeck.core.model import Counters
from linkdeck.platforms.adapter import CountersUnavailable
from linkdeck.platforms.bsd import counters_script, profile_for
from linkdeck.platforms.detect import make_adapter
from linkdeck.platforms.illumos import KSTAT_ARGV
from linkdeck.platforms.psutil_adapter import LocalAdapter
from linkdeck.settings.config import Settings
from linkdeck.transport.local_runner import LocalRunner
from linkdeck.transport.runner import CommandResult
from tests.corpus import fixture

REPLAY = Path(__file__).parents[2] / "replay"
LINUX_ARGV = ("cat", "/proc/net/dev")


def adapter(os_name: str, runner):
    return make_adapter(runner, os_name, None, Settings())


async def read_counters(os_name: str, runner, names):
    return await adapter(os_name, runner).read_counters(names)


def bsd_script(os_name: str, name: str) -> str:
    return counters_script(profile_for(os_name), name)


class RecordedRunner:
    """Answers each command with a recorded output and remembers what it was asked."""

    def __init__(self, answers: dict[tuple[str, ...], str]) -> None:
        self.answers = answers
        self.asked: list[list[str]] = []

    async def run(self, argv, timeout: float = 10.0) -> CommandResult:
        self.asked.append(list(argv))
        out = self.answers.get(tuple(argv))
        return (
            CommandResult(out, "", 0) if out is not None else CommandResult("", "netstat: interface does not exist", 1)
        )


class ReplayRunner(LocalRunner):
    """Real commands with a replay directory first on PATH and HOME (its call counters) in a
    temporary directory, as the lab gives a replayed host."""

    def __init__(self, replay: Path, home: Path) -> None:
        self.env = [f"PATH={replay}:{os.environ['PATH']}", f"HOME={home}"]

    async def run(self, argv, timeout: float = 10.0) -> CommandResult:
        return await super().run(["/usr/bin/env", *self.env, *argv], timeout)


async def test_linux_reads_proc_net_dev_for_the_named_interfaces() -> None:
    runner = RecordedRunner({LINUX_ARGV: fixture("linux/captured-proc-net-dev.txt")})
    got = await read_counters("linux", runner, {"veth0", "v.üm|x", "gone0"})
    assert runner.asked == [["cat", "/proc/net/dev"]]
    assert set(got) == {"veth0", "v.üm|x"}  # an interface the host does not list is left out
    assert (got["veth0"].rx_bytes, got["veth0"].tx_bytes, got["veth0"].rx_packets, got["veth0"].tx_packets) == (
        7791,
        5140390,
        112,
        156,
    )
    assert (got["v.üm|x"].rx_bytes, got["v.üm|x"].tx_bytes) == (2050, 266)


async def test_freebsd_reads_one_interface_with_netstat_dash_i() -> None:
    script = bsd_script("freebsd", "vtnet0")
    assert script == (
        "netstat -i -b -d -n -W -I vtnet0 2>/dev/null || "
        "netstat -i -b -d -n -I vtnet0 2>/dev/null || netstat -i -b -n -I vtnet0"
    )
    table = fixture("freebsd/netstat-ibdn__ohai-freebsd14-spec.txt")
    runner = RecordedRunner({("sh", "-c", script): table})
    got = await read_counters("freebsd", runner, {"vtnet0"})
    # the link row's counters, not an address row's
    assert got == {
        "vtnet0": Counters(
            rx_bytes=46746,
            tx_bytes=26242,
            rx_packets=579,
            tx_packets=210,
            rx_errors=0,
            tx_errors=0,
            rx_drops=0,
            tx_drops=0,
        )
    }


async def test_macos_name_cut_to_five_characters_is_the_interface_asked_for() -> None:
    # macOS prints names in a 5-character field; with -I the one link row is bridge100's.
    table = fixture("macos/netstat-i-d-l-b-n__ohai-darwin-spec.txt").splitlines()
    rows = [table[0]] + [line.replace("en1  ", "bridg", 1) for line in table if line.startswith("en1 ")]
    runner = RecordedRunner({("sh", "-c", bsd_script("macos", "bridge100")): "\n".join(rows) + "\n"})
    got = await read_counters("macos", runner, {"bridge100"})
    assert (got["bridge100"].rx_bytes, got["bridge100"].tx_bytes, got["bridge100"].rx_packets) == (
        2530556736,
        18228234970,
        5921903,
    )


async def test_openbsd_merges_the_bytes_and_packets_tables() -> None:
    script = bsd_script("openbsd", "em0")
    assert script == (
        "netstat -i -b -n -I em0; echo '@@LD SECTION packets'; "
        "netstat -i -d -n -I em0 2>/dev/null || netstat -i -n -I em0"
    )
    bytes_table = (
        "Name    Mtu   Network     Address              Ibytes       Obytes\n"
        "em0     1500  <Link>      00:0d:b9:41:6e:58   812345678    98765432\n"
    )
    packets_table = (
        "Name    Mtu   Network     Address              Ipkts Ifail    Opkts Ofail Colls Drop\n"
        "em0     1500  <Link>      00:0d:b9:41:6e:58   604411     3   301112     0     0    7\n"
    )
    runner = RecordedRunner({("sh", "-c", script): bytes_table + "@@LD SECTION packets\n" + packets_table})
    got = (await read_counters("openbsd", runner, {"em0"}))["em0"]
    assert (got.rx_bytes, got.tx_bytes, got.rx_packets, got.tx_packets, got.rx_errors, got.tx_drops) == (
        812345678,
        98765432,
        604411,
        301112,
        3,
        7,
    )


async def test_hostile_interface_name_never_reaches_a_command() -> None:
    runner = RecordedRunner({})
    with pytest.raises(CountersUnavailable, match="not a BSD interface name"):
        await read_counters("freebsd", runner, {"em0;reboot"})
    with pytest.raises(CountersUnavailable, match="not a BSD interface name"):
        await read_counters("freebsd", runner, {"-a"})
    assert runner.asked == []


async def test_illumos_reads_the_filtered_kstat() -> None:
    text = fixture("illumos/kstat-p-link0__datadog-fixture-smartos-zone.txt")
    runner = RecordedRunner({KSTAT_ARGV: text})
    got = await read_counters("smartos", runner, {"net0", "net1"})
    assert runner.asked == [["kstat", "-p", KSTAT_ARGV[2]]] and KSTAT_ARGV[2].startswith("link:::/^(rbytes64|")
    assert (got["net0"].rx_bytes, got["net0"].tx_bytes) == (113983614, 12820668)
    assert (got["net1"].rx_bytes, got["net1"].tx_bytes) == (304384894, 73324)


async def test_unreadable_output_and_failed_command_say_why() -> None:
    garbled = RecordedRunner({LINUX_ARGV: "eth0: 12 x\n"})
    with pytest.raises(CountersUnavailable, match="/proc/net/dev"):
        await read_counters("linux", garbled, {"eth0"})
    with pytest.raises(CountersUnavailable, match="sh -c .*interface does not exist"):
        await read_counters("freebsd", RecordedRunner({}), {"em9"})


async def test_replayed_freebsd_host_advances_by_its_scripted_step(tmp_path) -> None:
    # tests/replay/bsd/netstat adds 1,250,000 bytes in and 625,000 out to vtnet0 per call.
    bsd = adapter("freebsd", ReplayRunner(REPLAY / "bsd", tmp_path))
    first = (await bsd.read_counters({"vtnet0"}))["vtnet0"]
    second = (await bsd.read_counters({"vtnet0"}))["vtnet0"]
    assert (second.rx_bytes - first.rx_bytes, second.tx_bytes - first.tx_bytes) == (1_250_000, 625_000)
    assert (second.rx_packets - first.rx_packets, second.tx_packets - first.tx_packets) == (1000, 500)


async def test_replayed_smartos_host_advances_by_its_scripted_amounts(tmp_path) -> None:
    # tests/replay/illumos/kstat advances aggr0 by 12,500,000 bytes in, 5,000,000 out per call.
    sun = adapter("smartos", ReplayRunner(REPLAY / "illumos", tmp_path))
    first = await sun.read_counters({"aggr0", "admin1"})
    second = await sun.read_counters({"aggr0", "admin1"})
    assert set(second) == {"aggr0", "admin1"}
    assert (second["aggr0"].rx_bytes - first["aggr0"].rx_bytes, second["aggr0"].tx_bytes - first["aggr0"].tx_bytes) == (
        12_500_000,
        5_000_000,
    )
    assert second["admin1"].tx_bytes - first["admin1"].tx_bytes == 125_000


async def test_this_machines_loopback_counts_what_was_sent_between_two_reads() -> None:
    local = LocalAdapter()
    before = (await local.read_counters({"lo"}))["lo"]
    payload = b"x" * 1_000_000
    with socket.create_server(("127.0.0.1", 0)) as server:
        with socket.create_connection(server.getsockname()) as client:
            conn, _ = server.accept()
            with conn:
                client.sendall(payload)
                client.shutdown(socket.SHUT_WR)
                received = 0
                while chunk := conn.recv(65536):
                    received += len(chunk)
    after = (await local.read_counters({"lo"}))["lo"]
    assert received == len(payload)
    # other traffic on lo may add to it, never take away
    assert after.rx_bytes - before.rx_bytes >= len(payload) and after.tx_bytes - before.tx_bytes >= len(payload)


async def test_the_local_adapter_reads_psutil_and_leaves_out_unknown_names() -> None:
    # Counters only grow, so the read lies between two psutil reads taken around it.
    import psutil

    first = psutil.net_io_counters(pernic=True)["lo"].bytes_recv
    got = await LocalAdapter().read_counters({"lo", "nosuch0"})
    last = psutil.net_io_counters(pernic=True)["lo"].bytes_recv
    assert set(got) == {"lo"} and first <= got["lo"].rx_bytes <= last


async def test_an_adapter_without_a_one_shot_read_says_so() -> None:
    from linkdeck.platforms.adapter import Adapter

    class Bare(Adapter):
        os = "plan9"

        def samples(self, interval):
            raise NotImplementedError

    with pytest.raises(CountersUnavailable, match="no one-shot counter read for OS 'plan9'"):
        await Bare(RecordedRunner({})).read_counters({"eth0"})
