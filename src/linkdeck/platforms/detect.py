"""Which OS a host runs, and the adapter that reads it: over SSH for remote hosts, through
the local runner for this machine.

One command prints ``uname -s/-r/-v`` and the files that tell distributions apart (OPNsense,
pfSense and TrueNAS are FreeBSD underneath; SmartOS, OmniOS and OpenIndiana are illumos).
Text a login shell prints before it (banners, motd from a chatty rc file) is skipped: only
what follows the markers counts.
"""

from __future__ import annotations

import asyncio
import functools
import json
import os
import re

from ..core.addresses import ssh_server_address
from ..core.oses import OSES, UNAME, family, family_of, local_os
from ..core.units import printable
from ..settings.config import HostSpec, Settings
from ..transport.local_runner import LocalRunner
from ..transport.runner import CommandResult, CommandTimeout, ConnectionLost, Runner, StreamInput, TransportError
from .adapter import Adapter, OpenedStream, StreamingAdapter
from .bsd import BsdAdapter
from .illumos import IllumosAdapter
from .linux import LinuxAdapter

MARK = "@@LD "
# The probes run at every connection, a fleet's all at once at its start: files are read by the
# shell itself and uname runs once, so the probes start one process, not nine. A file's lines
# as cat prints them (its last one too when it lacks a newline):
_LINES = 'while IFS= read -r l || [ -n "$l" ]; do printf %s "$l"; echo; done 2>/dev/null <'
_PROBES = (
    # the kernel's name and release hold no space; its version is the rest (spaces made single)
    # (the kernel's name kept for the guess, GUESSED_START)
    ("uname_s", 'u=$(uname -srv); set -f; set -- $u; set +f; ld_kernel=$1; echo "$1"'),
    ("uname_r", 'echo "$2"'),
    ("uname_v", '[ $# -gt 2 ] && shift 2 && echo "$*"'),
    ("os_release", _LINES + "/etc/os-release"),
    ("openwrt_release", _LINES + "/etc/openwrt_release"),  # OpenWrt before 18.06 has no os-release
    ("opnsense", "opnsense-version"),
    ("etc_version", _LINES + "/etc/version"),
    ("platform", _LINES + "/etc/platform"),
    ("release", 'IFS= read -r l 2>/dev/null </etc/release && printf %s "$l" && echo'),
    ("sw_vers", "sw_vers -productVersion"),
    ("ssh_connection", "echo $SSH_CONNECTION"),  # which of the host's addresses this session came in on
)
# One line, sh syntax, no "!" and no backslashes: csh, tcsh and fish login shells hand it to
# sh unchanged. Probes that do not apply fail quietly.
PROBES = " ".join(f"echo '{MARK}{key}'; {cmd} 2>/dev/null;" for key, cmd in _PROBES)
DETECT_SCRIPT = PROBES + " exit 0"
# The sampler's stream starts with the probes (stdin kept from them: it is the sampler's), says
# they are done, then runs the one line it is sent next: the sampler for the OS they showed.
# Ticks that come first are blank lines, skipped. Same rules as DETECT_SCRIPT.
DETECTED = f"{MARK}DETECTED"
_PROBED = "{ " + PROBES + " } </dev/null; " + f"echo '{DETECTED}'; "
_RUN_NEXT_LINE = 'while IFS= read -r s; do [ -n "$s" ] && break; done; eval "$s"'
STREAM_START = _PROBED + _RUN_NEXT_LINE
# Most watched hosts run Linux: the stream carries its sampler and runs it at once where the
# probes' kernel is one of that family's, with no round trip to be sent it and no line for the
# host's shell to read a byte at a time. Any other host runs the line it is sent, as above.
GUESS = "linux"


def guessed_start(settings: Settings) -> str:
    """STREAM_START carrying the GUESS family's sampler, run where the probes show that family."""
    return _guessed_start(settings.facts_every)


@functools.lru_cache(maxsize=4)
def _guessed_start(facts_every: int) -> str:  # a fleet's hosts share one
    kernels = sorted(facts.uname for name, facts in OSES.items() if facts.uname and family(name) == GUESS)
    sampler = ADAPTERS[GUESS](None, GUESS, None, facts_every)
    assert isinstance(sampler, StreamingAdapter)  # every remote adapter (ADAPTERS)
    return _PROBED + f"case $ld_kernel in {'|'.join(kernels)}) {sampler.script()} ;; *) {_RUN_NEXT_LINE} ;; esac"


# What the probes print is tens of lines; a login banner adds some. Past this the stream is
# not answering them, and the plain probe (detected_adapter) says what it is.
MAX_DETECTION_BYTES = 1 << 20

DETECT_TIMEOUT_S = 15.0
SUPPORTED = "Linux, the BSDs, macOS and illumos"


class ShellRefused(TransportError):
    """The login shell did not run linkdeck's command (nologin, a restricted menu): it stays so
    until someone changes the account, so the host's loop stops and says what the shell said."""

    retryable = False


def refused(host: str, result: CommandResult) -> ShellRefused:
    """What a host said instead of running the probe: its first lines, escaped, as printed."""
    lines = [
        printable(line.strip())[:160] for line in (result.stdout + "\n" + result.stderr).splitlines() if line.strip()
    ]
    said = "“" + " / ".join(lines[:3]) + ("” …" if len(lines) > 3 else "”") if lines else "nothing"
    return ShellRefused(
        f"{host}'s login shell did not run linkdeck's command (exit status {result.status}); it printed {said}: "
        "give the account a login shell that runs commands (/bin/sh, bash)"
    )


class UnsupportedOS(TransportError):
    """The host answered, but runs something linkdeck has no adapter for: asking again will
    not change that, so the host's loop stops (state error) instead of logging in forever."""

    retryable = False


def split_probe_output(text: str) -> dict[str, str]:
    out: dict[str, list[str]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        if line.startswith(MARK):
            current = out.setdefault(line[len(MARK) :].strip(), [])
        elif current is not None:
            current.append(line)
    return {k: "\n".join(v).strip() for k, v in out.items()}


def _os_release(text: str) -> dict[str, str]:
    values = {}
    for line in text.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            values[key.strip()] = value.strip().strip('"').strip("'")
    return values


def classify(text: str) -> tuple[str, str | None]:
    """(os name, display string) from the probe output; UnsupportedOS when unknown."""
    probe = split_probe_output(text)
    kernel = probe.get("uname_s", "").splitlines()[0].strip() if probe.get("uname_s") else ""
    release = probe.get("uname_r", "")
    if not kernel:
        raise UnsupportedOS("the host ran linkdeck's probe but `uname -s` printed nothing: is uname on its PATH?")
    os_name = UNAME.get(kernel)
    if os_name == "linux":
        rel = _os_release(probe.get("os_release", ""))
        name = rel.get("PRETTY_NAME") or " ".join(x for x in (rel.get("NAME"), rel.get("VERSION_ID")) if x)
        name = name or _os_release(probe.get("openwrt_release", "")).get("DISTRIB_DESCRIPTION", "")
        return "linux", f"{name or 'Linux'} (kernel {release})" if release else (name or "Linux")
    if os_name == "freebsd":
        return _freebsd(probe, release)
    if os_name == "illumos":
        return _sunos(probe, release)
    if os_name == "macos":
        version = probe.get("sw_vers", "")
        return os_name, f"macOS {version}" if version else f"Darwin {release}"
    if os_name is not None:
        return os_name, f"{kernel} {release}".strip()
    raise UnsupportedOS(f"unsupported OS: `uname -s` says {kernel[:60]!r} (linkdeck reads {SUPPORTED})")


def _freebsd(probe: dict[str, str], release: str) -> tuple[str, str]:
    opn = probe.get("opnsense", "")
    if opn:
        if opn.startswith("{"):
            try:
                data = json.loads(opn)
                opn = f"{data.get('product_name', 'OPNsense')} {data.get('product_version', '')}".strip()
            except ValueError:
                pass
        return "opnsense", re.sub(r"\s*\(.*\)$", "", opn)
    version = probe.get("etc_version", "").splitlines()[0].strip() if probe.get("etc_version") else ""
    if "pfsense" in probe.get("platform", "").lower():
        return "pfsense", f"pfSense {version}".strip()
    if version.lower().startswith(("truenas", "freenas")):
        return "truenas", version
    return "freebsd", f"FreeBSD {release}".strip()


def _sunos(probe: dict[str, str], release: str) -> tuple[str, str]:
    uname_v = probe.get("uname_v", "").strip()
    banner = probe.get("release", "").strip()
    if uname_v.startswith("joyent_"):
        return "smartos", f"SmartOS {uname_v.removeprefix('joyent_')}"
    if uname_v.startswith("omnios-"):
        return "omnios", f"OmniOS {uname_v.removeprefix('omnios-')}"
    if "openindiana" in banner.lower():
        return "openindiana", banner
    if "oracle solaris" in banner.lower() or uname_v[:2].isdigit():
        return "solaris", banner or f"Solaris {uname_v}"
    return "illumos", banner or f"illumos {uname_v}".strip()


# The adapter of each OS family, by oses.FAMILIES' keys (tests/unit/test_oses.py checks every
# family has one): the core table names no platform, so the layers stay apart.
ADAPTERS: dict[str, type[Adapter]] = {"linux": LinuxAdapter, "bsd": BsdAdapter, "illumos": IllumosAdapter}


def adapter_class(os_name: str | None) -> type[Adapter]:
    """The adapter class for ``os_name``'s family; UnsupportedOS for an OS linkdeck has no
    adapter for."""
    fam = family(os_name)
    if fam not in ADAPTERS:
        raise UnsupportedOS(
            f"no adapter for OS {os_name!r} (family {fam!r}): linkdeck reads {SUPPORTED}; "
            "watch it through node_exporter with --prometheus URL instead"
        )
    return ADAPTERS[fam]


def make_adapter(runner: Runner | None, os_name: str, os_detail: str | None, settings: Settings) -> Adapter:
    return adapter_class(os_name)(runner, os_name, os_detail, settings.facts_every)


async def detected_adapter(runner: Runner, settings: Settings) -> Adapter:
    """Ask the host behind ``runner`` what it runs; the adapter that reads it."""
    result = await runner.run(["sh", "-c", DETECT_SCRIPT], timeout=DETECT_TIMEOUT_S)
    if MARK not in result.stdout:  # not one line of the probe ran
        raise refused(getattr(runner, "name", "the host"), result)
    return adapter_from(runner, result.stdout, settings)


async def streamed_adapter(runner: Runner, settings: Settings, small_requests: bool = False) -> Adapter:
    """Ask the host behind ``runner`` what it runs as the start of the sampler's own stream
    (guessed_start): the adapter that reads it, holding that stream, which already runs the
    sampler where the guess was right, else waits for ``samples`` to send it. One session per
    connection, not a probe's and then a stream's. With ``small_requests`` (a path that drops
    large packets) the stream carries no sampler (STREAM_START). A stream that ends (or
    complains) before its probes are done is asked again the plain way (detected_adapter),
    which says why: a login shell that runs no command, say."""
    feed = StreamInput()
    start = STREAM_START if small_requests else guessed_start(settings)
    lines = runner.stream(["sh", "-c", start], tick=settings.interval, feed=feed)
    said: list[str] = []
    done = False
    try:
        size = 0
        async for line in lines:
            done = line == DETECTED
            size += len(line) + 1
            if done or size > MAX_DETECTION_BYTES:
                break
            said.append(line)
    except (ConnectionLost, CommandTimeout):
        raise
    except TransportError:  # it ended with a complaint on stderr: the plain probe reports it
        pass
    if not done:
        await lines.aclose()
        return await detected_adapter(runner, settings)
    try:
        adapter = adapter_from(runner, "\n".join(said), settings)
    except BaseException:
        await lines.aclose()
        raise
    assert isinstance(adapter, StreamingAdapter)  # every remote adapter (ADAPTERS)
    guessed = not small_requests and family(adapter.os) == GUESS
    adapter.opened = OpenedStream(lines, feed, settings.interval, sampling=guessed)
    return adapter


def adapter_from(runner: Runner, probed: str, settings: Settings) -> Adapter:
    """The adapter the probes' output ``probed`` calls for."""
    os_name, detail = classify(probed)
    adapter = make_adapter(runner, os_name, detail, settings)
    adapter.reached_at = ssh_server_address(split_probe_output(probed).get("ssh_connection", ""))
    return adapter


async def open_remote(spec: HostSpec, settings: Settings, small_requests: bool = False) -> Adapter:
    """Connect to ``spec`` over SSH, find out what it runs, return the adapter that reads it.
    ``small_requests``: the path dropped a large request (a black hole), so nothing large is
    sent: the sampler goes in pieces (upload_in_pieces)."""
    from ..transport.choice import OPENSSH, choose
    from ..transport.ssh_config import resolve

    # Resolving runs `ssh -G` (once per run, then cached), and the config's `Match exec`
    # commands: keep it off the event loop.
    target = await asyncio.to_thread(resolve, spec, settings)
    choice = choose(settings)
    runner: Runner
    if choice.name == OPENSSH and choice.client is not None:
        from ..transport import openssh

        runner = await openssh.open_runner(choice.client, spec, target, settings)
    else:  # paramiko is imported only when a remote host is watched over it
        from ..transport.ssh import open_runner

        runner = await open_runner(target, spec.name, settings.host_key_policy, settings.interval)
    try:
        adapter = await streamed_adapter(runner, settings, small_requests)
    except BaseException:
        await runner.close()
        raise
    if isinstance(adapter, StreamingAdapter):  # every remote adapter (ADAPTERS)
        adapter.small_requests = small_requests
    return adapter


async def open_local(settings: Settings, os_name: str | None = None, runner: Runner | None = None) -> Adapter:
    """This machine's adapter. On the BSDs, macOS and illumos it is the OS's own adapter
    through the local runner: their ifconfig and dladm say speed, duplex and media, which
    psutil does not (it reports macOS speeds as 0 and every interface up, psutil#805). On
    Linux psutil with netlink reads more for less; elsewhere (Windows) psutil is all there is."""
    os_name = os_name or local_os()
    fam = family_of(os_name)
    if fam is not None and fam.local_sampler:
        return await detected_adapter(runner or LocalRunner(), settings)
    from .psutil_adapter import LocalAdapter

    adapter = LocalAdapter(runner, os_name, None, settings.facts_every)
    # linkdeck itself may run in an SSH session to this machine: that address is the user's way in.
    adapter.reached_at = ssh_server_address(os.environ.get("SSH_CONNECTION", ""))
    return adapter
