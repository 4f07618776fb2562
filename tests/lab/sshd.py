"""Files for the lab's sshd daemons and ssh clients: keys, sshd_config, known_hosts, ssh_config,
and the PATH a host's SSH logins get.

How a host's logins get their own PATH and a clean shell (verified with OpenSSH 9.2 on
Debian 12): sshd runs ``$SHELL -c CMD`` (root's shell is bash), and Debian's bash sources
``~/.bashrc`` for commands run by sshd even though the shell is not interactive — the real
/root/.bashrc of this machine rewrites PATH (pyenv) and could print text. So each sshd runs
in its own mount namespace (``unshare -m``) with a per-host directory bind-mounted over
/root: a clean HOME whose .bashrc is empty (or holds what the test asked for). PATH itself
comes from ``SetEnv PATH=…`` in that host's sshd_config, which sshd applies after its
built-in default; the replay dir and the built iperf3 3.21's dir go first, and a host without iperf3 gets a directory of
symlinks to the standard bin dirs minus iperf3 instead of the standard dirs.
"""

from __future__ import annotations

import os
from pathlib import Path

from .netns import run

SSHD = "/usr/sbin/sshd"
STANDARD_PATH = ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin")


def keygen(path: Path, comment: str) -> str:
    """An ed25519 key pair without passphrase; returns the public key line."""
    run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-C", comment, "-f", str(path)])
    return Path(f"{path}.pub").read_text().strip()


def bin_farm_without(dest: Path, hidden: tuple[str, ...]) -> Path:
    """A directory of symlinks to every program on the standard PATH except ``hidden``
    (first dir wins, as PATH lookup would), so ``command -v iperf3`` finds nothing."""
    if dest.is_dir():
        return dest
    dest.mkdir(parents=True)
    for directory in STANDARD_PATH:
        try:
            names = os.listdir(directory)
        except OSError:
            continue
        for name in names:
            link = dest / name
            if name in hidden or os.path.lexists(link):
                continue
            target = os.path.join(directory, name)
            if os.path.isfile(target) and os.access(target, os.X_OK):
                link.symlink_to(target)
    return dest


def login_path(first: list[Path], farm: Path | None) -> str:
    """``first`` (a replay dir, the built iperf3's dir) ahead of the standard dirs."""
    parts = [str(p) for p in first]
    parts += [str(farm)] if farm else list(STANDARD_PATH)
    return ":".join(parts)


def sshd_config(*, port: int, host_key: Path, pid_file: Path, authorized_keys: Path, path: str) -> str:
    return "\n".join(
        [
            f"Port {port}",
            f"HostKey {host_key}",
            f"PidFile {pid_file}",
            f"AuthorizedKeysFile {authorized_keys}",
            "PermitRootLogin prohibit-password",
            "PubkeyAuthentication yes",
            "PasswordAuthentication no",
            "KbdInteractiveAuthentication no",
            "UsePAM no",
            "LogLevel VERBOSE",
            # The key files live in a temp dir; ownership checks there add nothing.
            "StrictModes no",
            "PrintMotd no",
            "PrintLastLog no",
            "UseDNS no",
            # Tests open many connections quickly (reconnect loops, several clients at once).
            "MaxStartups 100:30:200",
            "MaxSessions 50",
            "Subsystem sftp internal-sftp",
            f"SetEnv PATH={path}",
            "",
        ]
    )


def sshd_command(home: Path, config: Path, log: Path) -> list[str]:
    """argv that runs sshd in the foreground with ``home`` over /root in a private mount
    namespace. Every step execs, so the pid of this argv is the pid of sshd itself."""
    script = 'mount --bind "$1" /root && exec "$2" -D -f "$3" -E "$4"'
    return ["unshare", "-m", "--propagation", "private", "sh", "-c", script, "sh", str(home), SSHD, str(config), str(log)]


def known_hosts_names(alias: str, address: str, port: int) -> str:
    """The names ssh and paramiko look a host key up by: the HostName (and the alias, for
    clients that skip ssh_config), as ``[name]:port`` when the port is not 22."""
    if port == 22:
        return f"{address},{alias}"
    return f"[{address}]:{port},[{alias}]:{port}"


def ssh_config_block(alias: str, address: str, port: int, key: Path, known_hosts: Path) -> str:
    return "\n".join(
        [
            f"Host {alias}",
            f"  HostName {address}",
            "  User root",
            f"  Port {port}",
            f"  IdentityFile {key}",
            "  IdentitiesOnly yes",
            f"  UserKnownHostsFile {known_hosts}",
            "  GlobalKnownHostsFile /dev/null",
            "  StrictHostKeyChecking yes",
            "  UpdateHostKeys no",
            "  BatchMode yes",
            "  ConnectTimeout 5",
            "  LogLevel ERROR",
            "",
        ]
    )
