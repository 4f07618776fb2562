"""An ssh-agent that lists a FIDO (sk) key beside an ordinary one, as a hardware token's agent
does: over OpenSSH and over paramiko the host is live, signed by the ordinary key, and the sk
key costs nothing (paramiko-based tools once crashed on it). The agent is the lab's own
(tests/lab/agent.py), speaking the real protocol to the real ssh client and paramiko."""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from linkdeck.core.model import HostState
from linkdeck.settings.config import HostSpec, Settings
from tests.lab.agent import Agent
from tests.lab.test_ssh_lab import fleet_until, last

pytestmark = pytest.mark.lab


def agent_only_config(lab, tmp_path: Path) -> Path:
    """h1 with no identity file: every key comes from the agent."""
    host = lab.hosts["h1"]
    config = tmp_path / "ssh_config"
    config.write_text(
        f"Host h1\n  HostName {host.address}\n  User root\n  Port {host.port}\n"
        f"  IdentityFile {tmp_path / 'none'}\n  UserKnownHostsFile {lab.known_hosts}\n"
        "  GlobalKnownHostsFile /dev/null\n  ConnectTimeout 5\n  BatchMode yes\n"
    )
    return config


def agent_socket(monkeypatch) -> Path:
    sock = Path(tempfile.mkdtemp(prefix="agent", dir="/tmp")) / "s"  # a socket path fits in sun_path
    monkeypatch.setenv("SSH_AUTH_SOCK", str(sock))
    return sock


@pytest.mark.parametrize("transport", ["openssh", "paramiko"])
async def test_an_agent_listing_an_sk_key_before_the_right_one_connects(
    lab, tmp_path: Path, monkeypatch, transport: str
) -> None:
    config, sock = agent_only_config(lab, tmp_path), agent_socket(monkeypatch)
    with Agent(sock, lab.client_key) as agent:
        settings = Settings(local=False, ssh_config=str(config), transport=transport)
        fleet, updates = await fleet_until(
            [HostSpec(name="h1", address="h1")],
            settings,
            lambda us: any(u.state is HostState.LIVE or u.error for u in us),
        )
        try:
            u = last(updates, "h1")
            assert u is not None and u.state is HostState.LIVE, (u.state, u.error) if u else None
            assert u.detail.transport == transport
        finally:
            await fleet.stop()
        assert agent.listed >= 1 and agent.signed == [agent.ordinary]
        assert agent.refused == []  # the server never accepted the sk key, so nothing asked it to sign
    sock.parent.rmdir()


async def test_over_paramiko_an_agent_with_only_a_fido_key_says_to_use_openssh(
    lab, tmp_path: Path, monkeypatch
) -> None:
    config, sock = agent_only_config(lab, tmp_path), agent_socket(monkeypatch)
    with Agent(sock, lab.client_key, ordinary=False) as agent:
        settings = Settings(local=False, ssh_config=str(config), transport="paramiko")
        fleet, updates = await fleet_until(
            [HostSpec(name="h1", address="h1")], settings, lambda us: any(u.error for u in us)
        )
        try:
            u = last(updates, "h1")
            assert u is not None and u.state is HostState.AUTH_FAILED, (u.state, u.error) if u else None
            assert "ssh-agent's FIDO key SHA256:" in u.error and "`--transport openssh` offers it" in u.error
        finally:
            await fleet.stop()
        assert agent.refused == [] and agent.signed == []  # never asked to sign: no touch, no dead session
    sock.parent.rmdir()
