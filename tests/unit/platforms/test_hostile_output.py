"""Text that leaves linkdeck cannot drive a terminal or a shell: interface names with ESC/BEL
(an OSC title sequence) and shell syntax, on real interfaces in a namespace, through
`linkdeck snapshot`; hints that suggest commands quote the name as one shell word."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys

import pytest

from linkdeck.core.model import Interface
from linkdeck.findings.counters import _ring_hint
from linkdeck.findings.helpers import Port, autoneg_hint
from linkdeck.findings.mtu import _mtu_command
from tests.lab import scratch_namespaces

OSC = "ev\x1b]0;x\x07"  # sets the terminal's title when printed raw
SHELL = "$(reboot)"


@pytest.mark.lab
def test_snapshot_prints_hostile_interface_names_inert(require_root) -> None:
    with scratch_namespaces("hostile") as (ns,):
        subprocess.run(["ip", "-n", ns, "link", "add", OSC, "type", "veth", "peer", "name", SHELL], check=True)
        subprocess.run(["ip", "-n", ns, "link", "set", OSC, "up"], check=True)
        subprocess.run(["ip", "-n", ns, "link", "set", SHELL, "up"], check=True)
        # two interfaces in one subnet: a finding whose message, evidence and hint name both
        subprocess.run(["ip", "-n", ns, "addr", "add", "192.0.2.1/24", "dev", OSC], check=True)
        subprocess.run(["ip", "-n", ns, "addr", "add", "192.0.2.2/24", "dev", SHELL], check=True)
        run = ["ip", "netns", "exec", ns, sys.executable, "-m", "linkdeck", "snapshot", "--interval", "0.3"]
        text = subprocess.run(run, capture_output=True, timeout=60)
        doc = subprocess.run([*run, "--json"], capture_output=True, timeout=60)
    assert text.returncode == 0, text.stderr
    for out in (text.stdout, text.stderr, doc.stdout, doc.stderr):
        assert b"\x1b" not in out and b"\x07" not in out
    shown = text.stdout.decode()
    assert "ev\\x1b]0;x\\x07" in shown
    finding = shown[shown.index("Findings:") :]
    assert "TWO_IFACES_ONE_SUBNET" in finding and "ev\\x1b]0;x\\x07" in finding
    names = {i["name"] for h in json.loads(doc.stdout)["hosts"] for i in h["interfaces"]}
    assert {OSC, SHELL} <= names  # JSON keeps the real name, escaped by JSON itself


@pytest.mark.parametrize("os_name", ["linux", "freebsd", "smartos"])
def test_suggested_commands_quote_the_interface_name(os_name: str) -> None:
    port = Port(
        "h", os_name, Interface(name=SHELL, kind="physical", oper="up", mtu=1500, ring_rx=256, ring_rx_max=4096)
    )
    quoted = shlex.quote(SHELL)
    hints = (autoneg_hint(port, 1000), _mtu_command(port, 9000), _ring_hint(port)[1])
    commands = [c for hint in hints for c in hint.split("`")[1::2]]
    assert len(commands) >= 3  # every OS suggests commands that name the interface
    for command in commands:
        assert quoted in command and SHELL not in command.replace(quoted, ""), command  # only ever quoted
    assert f"`ip link set dev {quoted} mtu 9000`" == _mtu_command(Port("h", "linux", port.iface), 9000)
