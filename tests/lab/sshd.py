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

A busybox host (a router, a NAS) gets ``ForceCommand busybox_login.sh FARM``: each session
runs in a further mount namespace where /usr/bin and /usr/sbin (so /bin and /sbin too) are
FARM, a directory holding a copy of busybox, a symlink per applet and a copy of iperf3; busybox
sh runs the client's command there, with PATH the standard bin dirs and nothing else.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from .netns import run

SSHD = "/usr/sbin/sshd"
STANDARD_PATH = ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin")
BUSYBOX_PATH = ("/usr/sbin", "/usr/bin", "/sbin", "/bin")
BUSYBOX_LOGIN = Path(__file__).with_name("busybox_login.sh")


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


def busybox_farm(dest: Path, hidden: tuple[str, ...]) -> Path:
    """A directory standing in for /usr/bin on a busybox host: a copy of busybox (the farm is
    mounted over /usr/bin, so a link to /usr/bin/busybox would point at itself), a symlink to
    it per applet, and a copy of iperf3 unless ``hidden`` names it."""
    if dest.is_dir():
        return dest
    if os.path.realpath("/bin") != "/usr/bin" or os.path.realpath("/sbin") != "/usr/sbin":
        raise ValueError("a busybox lab host needs a merged /usr (/bin and /sbin links to /usr/bin and /usr/sbin)")
    busybox = shutil.which("busybox")
    if busybox is None:
        raise ValueError("a busybox lab host needs busybox (apt-get install busybox)")
    dest.mkdir(parents=True)
    shutil.copy2(busybox, dest / "busybox")
    for applet in run([busybox, "--list"]).stdout.split():
        if applet not in hidden and applet != "busybox":
            (dest / applet).symlink_to("busybox")
    iperf3 = shutil.which("iperf3")
    if iperf3 and "iperf3" not in hidden:
        shutil.copy2(iperf3, dest / "iperf3")
    return dest


def login_path(first: list[Path], farm: Path | None) -> str:
    """``first`` (a replay dir, the built iperf3's dir) ahead of the standard dirs."""
    parts = [str(p) for p in first]
    parts += [str(farm)] if farm else list(STANDARD_PATH)
    return ":".join(parts)


def sshd_config(
    *, port: int, host_key: Path, pid_file: Path, authorized_keys: Path, path: str, force_command: str | None = None
) -> str:
    return "\n".join(
        [
            *([f"ForceCommand {force_command}"] if force_command else []),
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
    return [
        "unshare",
        "-m",
        "--propagation",
        "private",
        "sh",
        "-c",
        script,
        "sh",
        str(home),
        SSHD,
        str(config),
        str(log),
    ]


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
