"""The namespace lab: a Linux bridge in its own namespace, N host namespaces each with an
``eth0`` leg on it and a real sshd, and one leg into the test's own namespace.

    with Lab({"a": {"mtu": 9000}, "b": {"iperf3": False}}) as lab:
        lab.ssh("a", "uname", "-s")

Everything is torn down on close(), on an exception inside the ``with``, and at interpreter
exit (atexit) for labs nobody closed; processes are killed by PID before their namespace is
deleted.
"""

from __future__ import annotations

import atexit
import contextlib
import itertools
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from linkdeck.settings.config import HostSpec, Settings

from . import netns, sshd
from .host import LabHost
from .iperf3_new import NEW_IPERF3_DIR, new_iperf3_missing

_HOST_OPTIONS = {
    "mtu",
    "iperf3",
    "ping",
    "replay_bin",
    "extra_ifaces",
    "port",
    "bashrc",
    "port_mtu",
    "offload",
    "busybox",
    "ip",
}
_NAME = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,19}$")
_FIRST_HOST = 11  # h1 gets .11, h2 .12 …; the root leg is .1
# The transport lab.settings() gives (unless a test names one): auto (OpenSSH here);
# LINKDECK_LAB_TRANSPORT=paramiko runs the lab suite over paramiko, which stays supported.
LAB_TRANSPORT = os.environ.get("LINKDECK_LAB_TRANSPORT", "auto")
_BRIDGE_PORT_MTU = 9216  # bridge ports never limit a host: each host's own eth0 MTU does
_open_labs: set["Lab"] = set()


class Lab:
    """See the module docstring. Per-host options (all optional):

    - ``mtu`` (1500): eth0 MTU;
    - ``port_mtu`` (9216): MTU of eth0's port on the bridge; below ``mtu`` the bridge drops
      the host's bigger frames without a word (a switch that carries less than the ends);
    - ``offload`` (True): False turns TSO/GSO/GRO off on eth0, so big TCP segments leave as
      real frames (veth's GSO would otherwise slip them past a small ``port_mtu``);
    - ``iperf3`` (True): False hides iperf3 from that host's SSH logins' PATH; "new" puts the
      built iperf3 3.21 first on it (Debian's is 3.12; see iperf3_new.py);
    - ``ping`` (True): False hides ping likewise;
    - ``ip`` (True): False leaves the ip applet out of a ``busybox`` host (a busybox built
      without it; on another host the sampler would still find /usr/sbin/ip);
    - ``busybox`` (False): True makes the host a router or NAS: its SSH sessions see only
      busybox applets (sh, awk, ip, ping …) and iperf3 in /bin, /sbin, /usr/bin, /usr/sbin; no
      ethtool, ss, iproute2 or bash (``iperf3``/``ping`` False leave those out too);
    - ``replay_bin`` (None): a dir whose executables come first on that host's login PATH;
    - ``extra_ifaces``: list of (name, address, mtu) — more legs on the same bridge; address
      is "a.b.c.d/p", an int host number in the lab subnet, or None for the next free one;
    - ``port`` (22): sshd port;
    - ``bashrc`` (""): text of root's ~/.bashrc on that host (sshd's bash sources it for
      commands too) — e.g. ``"echo welcome"`` to play a chatty login.
    """

    def __init__(
        self,
        hosts: dict[str, dict] | int = 3,
        subnet: str | None = None,
        root_mtu: int = 1500,
        uplink_mtu: int = _BRIDGE_PORT_MTU,
        root_offload: bool = True,
    ) -> None:
        """``root_mtu`` is the MTU of the test's own leg, ``uplink_mtu`` that of its port on
        the bridge (below ``root_mtu``: a path MTU black hole between linkdeck and every lab
        host), ``root_offload`` False turns TSO/GSO/GRO off on the test's leg."""
        specs = {f"h{i}": {} for i in range(1, hosts + 1)} if isinstance(hosts, int) else dict(hosts)
        for name, opts in specs.items():
            if not _NAME.match(name):
                raise ValueError(f"lab host name {name!r}: use letters, digits, - and _ (max 20)")
            unknown = set(opts) - _HOST_OPTIONS
            if unknown:
                raise ValueError(f"lab host {name}: unknown options {sorted(unknown)} (known: {sorted(_HOST_OPTIONS)})")
        self.id = netns.run_id()
        self.hosts: dict[str, LabHost] = {}
        self.tmp = Path(tempfile.mkdtemp(prefix=f"{netns.TMP_PREFIX}{self.id}-"))
        self.bridge_ns = f"{netns.NS_PREFIX}{self.id}-br"
        self._root_ifname = f"ld{self.id.replace('-', 'r')}"
        self._namespaces: list[str] = []
        self._ports = itertools.count(1)
        self._used_hosts: set[int] = set()
        self._closed = False
        _open_labs.add(self)
        try:
            self._build(specs, subnet, root_mtu, uplink_mtu, root_offload)
        except BaseException:
            self.close()
            raise

    # -- building ---------------------------------------------------------------------------

    def _build(
        self, specs: dict[str, dict], subnet: str | None, root_mtu: int, uplink_mtu: int, root_offload: bool
    ) -> None:
        self._add_namespace(self.bridge_ns)
        ns = self.bridge_ns
        netns.ip("link", "add", "br0", "type", "bridge", ns=ns)
        netns.ip("link", "set", "br0", "up", ns=ns)
        # No IPv6 chatter (router solicitations, MLD) on the bridge side: counters stay quiet.
        netns.run(["ip", "netns", "exec", ns, "sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1"], check=False)

        with netns.machine_lock():
            self.subnet = netns.pick_subnet(subnet)
            self.prefix = self.subnet.prefixlen
            self.root_address = self._address(1)
            netns.ip(
                "link",
                "add",
                self._root_ifname,
                "mtu",
                str(root_mtu),
                "type",
                "veth",
                "peer",
                "name",
                "uplink",
                "netns",
                ns,
            )
            netns.ip("addr", "add", f"{self.root_address}/{self.prefix}", "dev", self._root_ifname)
            netns.ip("link", "set", self._root_ifname, "up")
        if not root_offload:
            netns.run(["ethtool", "-K", self._root_ifname, "tso", "off", "gso", "off", "gro", "off"])
        netns.ip("link", "set", "uplink", "mtu", str(uplink_mtu), "master", "br0", "up", ns=ns)

        self.client_key = self.tmp / "client_key"
        client_pub = sshd.keygen(self.client_key, f"linkdeck-lab-{self.id}")
        self.authorized_keys = self.tmp / "authorized_keys"
        self.authorized_keys.write_text(client_pub + "\n")
        self.known_hosts = self.tmp / "known_hosts"
        self.ssh_config = self.tmp / "ssh_config"
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # sshd's privilege-separation dir

        for number, (name, opts) in enumerate(specs.items(), _FIRST_HOST):
            self.hosts[name] = self._make_host(name, opts, number)
        self._write_client_files()
        for host in self.hosts.values():
            host.start_sshd()

    def _add_namespace(self, name: str) -> None:
        netns.add_namespace(name)
        self._namespaces.append(name)
        netns.ip("link", "set", "lo", "up", ns=name)

    def _make_host(self, name: str, opts: dict, number: int) -> LabHost:
        ns = f"{netns.NS_PREFIX}{self.id}-{name}"
        self._add_namespace(ns)
        self._bridge_leg(ns, "eth0", int(opts.get("port_mtu", _BRIDGE_PORT_MTU)))
        self._used_hosts.add(number)
        address = self._address(number)
        mtu = int(opts.get("mtu", 1500))
        netns.ip("link", "set", "dev", "eth0", "mtu", str(mtu), ns=ns)
        netns.ip("addr", "add", f"{address}/{self.prefix}", "dev", "eth0", ns=ns)
        netns.ip("link", "set", "dev", "eth0", "up", ns=ns)
        if not opts.get("offload", True):
            netns.run(["ip", "netns", "exec", ns, "ethtool", "-K", "eth0", "tso", "off", "gso", "off", "gro", "off"])

        hdir = self.tmp / name
        (hdir / "home").mkdir(parents=True)
        (hdir / "home" / ".bashrc").write_text(opts.get("bashrc", "") + "\n")
        replay = Path(opts["replay_bin"]).resolve() if opts.get("replay_bin") else None
        has_iperf3 = bool(opts.get("iperf3", True))
        first = [p for p in (replay, self._new_iperf3(name, opts.get("iperf3"))) if p]
        hidden = tuple(tool for tool in ("iperf3", "ping", "ip") if not opts.get(tool, True))
        login = self._login(hidden, first, bool(opts.get("busybox")))
        port = int(opts.get("port", 22))
        sshd.keygen(hdir / "ssh_host_ed25519_key", f"lab-{name}")
        (hdir / "sshd_config").write_text(
            sshd.sshd_config(
                port=port,
                host_key=hdir / "ssh_host_ed25519_key",
                pid_file=hdir / "sshd.pid",
                authorized_keys=self.authorized_keys,
                path=login[0],
                force_command=login[1],
            )
        )
        host = LabHost(
            name=name, netns=ns, address=address, prefix=self.prefix, mtu=mtu, port=port,
            dir=hdir, lab=self, iperf3=has_iperf3, replay_bin=replay,
        )  # fmt: skip
        for ifname, addr, ifmtu in opts.get("extra_ifaces", ()):
            host.add_interface(ifname, addr, ifmtu, on_bridge=True)
        host._added.clear()  # built-in legs, not something heal() should remove
        return host

    def _login(self, hidden: tuple[str, ...], first: list[Path], busybox: bool) -> tuple[str, str | None]:
        """(PATH of the host's SSH logins, sshd ForceCommand or None)."""
        suffix = "-".join(hidden)
        if busybox:
            farm = sshd.busybox_farm(self.tmp / f"busybox-without-{suffix}", hidden)
            return ":".join([*map(str, first), *sshd.BUSYBOX_PATH]), f"{sshd.BUSYBOX_LOGIN} {farm}"
        farm = sshd.bin_farm_without(self.tmp / f"bin-without-{suffix}", hidden) if hidden else None
        return sshd.login_path(first, farm), None

    @staticmethod
    def _new_iperf3(name: str, choice: object) -> Path | None:
        if choice != "new":
            return None
        missing = new_iperf3_missing()
        if missing:
            raise ValueError(f"lab host {name}: {missing}")
        return NEW_IPERF3_DIR

    def _bridge_leg(self, ns: str, ifname: str, port_mtu: int = _BRIDGE_PORT_MTU) -> None:
        """A veth from the bridge namespace into ``ns``, named ``ifname`` there."""
        port = f"port{next(self._ports)}"
        netns.ip(
            "link",
            "add",
            port,
            "mtu",
            str(port_mtu),
            "type",
            "veth",
            "peer",
            "name",
            ifname,
            "netns",
            ns,
            ns=self.bridge_ns,
        )
        netns.ip("link", "set", port, "master", "br0", "up", ns=self.bridge_ns)

    def _address(self, number: int) -> str:
        return str(self.subnet.network_address + number)

    def _next_address(self) -> int:
        number = max(self._used_hosts | {_FIRST_HOST + 50}) + 1
        self._used_hosts.add(number)
        return number

    def _cidr(self, address: str | int) -> str:
        if isinstance(address, int):
            return f"{self._address(address)}/{self.prefix}"
        return address if "/" in address else f"{address}/{self.prefix}"

    def _write_client_files(self) -> None:
        lines, blocks = [], []
        for host in self.hosts.values():
            key = (host.dir / "ssh_host_ed25519_key.pub").read_text().split()
            lines.append(f"{sshd.known_hosts_names(host.name, host.address, host.port)} {key[0]} {key[1]}")
            blocks.append(sshd.ssh_config_block(host.name, host.address, host.port, self.client_key, self.known_hosts))
        self.known_hosts.write_text("\n".join(lines) + "\n")
        self.ssh_config.write_text("\n".join(blocks))

    # -- using ------------------------------------------------------------------------------

    @property
    def root_leg(self) -> tuple[str, str]:
        """(interface name in the test's own namespace, its address in the lab subnet)."""
        return self._root_ifname, self.root_address

    def spec(self, name: str) -> HostSpec:
        self.hosts[name]  # KeyError for a host the lab does not have
        return HostSpec(name=name, address=name)

    def settings(self, **overrides) -> Settings:
        values = dict(
            local=False,
            ssh_config=str(self.ssh_config),
            known_hosts=str(self.known_hosts),
            hosts=tuple(self.spec(n) for n in self.hosts),
            transport=LAB_TRANSPORT,
        )
        values.update(overrides)
        return Settings(**values)

    def sshd_log(self, name: str) -> str:
        path = self.hosts[name].sshd_log_path
        return path.read_text(errors="replace") if path.exists() else ""

    def ssh(
        self, name: str, *command: str, check: bool = True, timeout: float = 30, input: str | None = None
    ) -> subprocess.CompletedProcess:
        """Run ``command`` on host ``name`` with the OpenSSH client and the lab's ssh_config."""
        argv = ["ssh", "-F", str(self.ssh_config), name, *command]
        return netns.run(argv, check=check, timeout=timeout, input=input)

    def heal(self) -> None:
        """Put every host back as built (see :meth:`LabHost.heal`); the session ``lab``
        fixture calls this after each test that used it."""
        for host in self.hosts.values():
            host.heal()

    # -- teardown -----------------------------------------------------------------------------

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        _open_labs.discard(self)
        for host in self.hosts.values():
            with contextlib.suppress(Exception):
                host._reap()
        for ns in reversed(self._namespaces):
            netns.delete_namespace(ns)
        # The root leg dies with its peer in the bridge namespace; this covers a half-built lab.
        netns.ip("link", "del", self._root_ifname, check=False)
        shutil.rmtree(self.tmp, ignore_errors=True)

    def __enter__(self) -> "Lab":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<Lab {self.id} {getattr(self, 'subnet', '?')} hosts={list(self.hosts)}>"


@atexit.register
def _close_all() -> None:
    for lab in list(_open_labs):
        lab.close()
