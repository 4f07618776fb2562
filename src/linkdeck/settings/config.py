"""TOML config → typed settings. Every error names the file, the line and the key."""

from __future__ import annotations

import enum
import hashlib
import os
import re
import sys
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from ..core import bounded_read, cells
from .limits import DEFAULT_FACTS_EVERY, DEFAULT_IPERF3_PORT, out_of_range, unknown_key
from .prometheus_section import PrometheusConfig, parse_section as _prometheus_section

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on 3.10 only
    import tomli as tomllib  # type: ignore[import-not-found, unused-ignore]  # installed on 3.10 only


class ConfigError(Exception):
    def __init__(self, path: Path | None, message: str, line: int | None = None, key: str | None = None):
        self.path, self.line, self.key = path, line, key
        where = str(path) if path else "<config>"
        if line:
            where += f":{line}"
        text = f"{where}: "
        if key:
            text += f"{key}: "
        super().__init__(text + message)


class Hide(str, enum.Enum):
    """[ui] hide, and what `h` cycles through: what the dashboard leaves out of the table."""

    NONE = "none"  # nothing
    DOWN = "down"  # loopback and down interfaces
    IDLE = "idle"  # those and every idle one

    def __str__(self) -> str:
        return str(self.value)


@dataclass(frozen=True, slots=True)
class HostSpec:
    """A host to watch: the local machine, or an SSH destination (address or ssh alias)."""

    name: str
    address: str | None = None  # None means the local host
    user: str | None = None
    port: int | None = None
    identity_file: str | None = None
    jump: str | None = None
    tags: tuple[str, ...] = ()

    @property
    def local(self) -> bool:
        return self.address is None


LOCAL = HostSpec(name="local")


@dataclass(frozen=True, slots=True)
class Thresholds:
    errors_per_s: float = 1.0
    drops_per_s: float = 1.0
    window_s: float = 30.0
    outlier_ratio: float = 0.5


@dataclass(frozen=True, slots=True)
class MuteRule:
    code: str | None = None
    host: str | None = None
    interface: str | None = None


# The dashboard's columns after the name, in their default order of priority (cells.py defines
# them): the narrowest terminal shows the first ones ([ui] columns chooses the set and the order).
UI_COLUMNS = cells.COLUMN_IDS


@dataclass(frozen=True, slots=True)
class Settings:
    path: Path | None = None
    interval: float = 1.0
    facts_every: int = DEFAULT_FACTS_EVERY
    local: bool = True
    host_key_policy: str = "strict"
    transport: str = "auto"  # [ssh] transport / --transport: auto, openssh or paramiko (transport/choice.py)
    transport_set_by: str | None = None  # where transport was chosen, for the words that say why
    ssh_config: str | None = None
    known_hosts: str | None = None
    units: str = "bits"
    hide: Hide = Hide.NONE  # [ui] hide: what the dashboard starts with hidden (`h` cycles it)
    fold_idle: bool = True  # [ui] fold_idle: idle virtual interfaces fold into one row per name pattern
    ui_columns: tuple[str, ...] = UI_COLUMNS
    save_dir: str | None = None  # [ui] save_dir: where r records and the matrix's j/v save (None: the user data dir)
    test_duration: float = 5.0
    test_port: int = DEFAULT_IPERF3_PORT
    test_streams: int = 1  # iperf3 -P: parallel streams each way
    thresholds: Thresholds = Thresholds()
    mute: tuple[MuteRule, ...] = ()
    hosts: tuple[HostSpec, ...] = ()
    # Mb/s per "host/interface", for links whose driver reports none or a made-up one (VMs, veth)
    speed_overrides: dict[str, int] = field(default_factory=dict)
    prometheus: PrometheusConfig | None = None


# key → (expected type(s), settings attribute or None for sections handled below)
_TOP = {
    "interval": ((int, float), "interval"),
    "facts_every": (int, "facts_every"),
    "local": (bool, "local"),
    "host_key_policy": (str, "host_key_policy"),
    "ssh_config": (str, "ssh_config"),
    "known_hosts": (str, "known_hosts"),
}
TRANSPORTS = ("auto", "openssh", "paramiko")
_SSH = {"transport": (str, "transport")}
UNITS = ("bits", "bytes")  # [ui] units: how rates are shown


HIDE = tuple(h.value for h in Hide)  # the words the config takes, in `h`'s order
_UI = {
    "units": (str, "units"),
    "hide": (str, "hide"),
    "fold_idle": (bool, "fold_idle"),
    "columns": (list, "ui_columns"),
    "save_dir": (str, "save_dir"),
}
_TEST = {"duration": ((int, float), "test_duration"), "port": (int, "test_port"), "streams": (int, "test_streams")}
_THRESH = {
    "errors_per_s": (int, float),
    "drops_per_s": (int, float),
    "window_s": (int, float),
    "outlier_ratio": (int, float),
}
_HOST = {"name": str, "address": str, "user": str, "port": int, "identity_file": str, "jump": str, "tags": list}
_MUTE = {"code": str, "host": str, "interface": str}
_SECTIONS = {"ssh", "ui", "test", "thresholds", "hosts", "mute", "speed", "prometheus"}
_FORBIDDEN = {"password", "passphrase", "secret"}


def default_path() -> Path:
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    if sys.platform == "darwin" and not os.environ.get("XDG_CONFIG_HOME"):
        base = os.path.expanduser("~/Library/Application Support")
    return Path(base) / "linkdeck" / "config.toml"


def find_config(explicit: str | None) -> Path | None:
    """--config, then $LINKDECK_CONFIG, then the user config dir; None when there is none."""
    if explicit:
        return Path(explicit).expanduser()
    env = os.environ.get("LINKDECK_CONFIG")
    if env:
        return Path(env).expanduser()
    path = default_path()
    return path if path.exists() else None


def ui_state_path(config_file: Path | None) -> Path:
    """Where the dashboard keeps the column choice made with ``o``: one file per config file,
    beside the default config, so a choice made for one setup never applies to another."""
    default = default_path()
    if config_file is None or config_file.expanduser().resolve() == default.resolve():
        return default.parent / "ui-state.json"
    digest = hashlib.sha256(str(config_file.expanduser().resolve()).encode()).hexdigest()[:12]
    return default.parent / f"ui-state-{digest}.json"


def with_overrides(settings: Settings, **values: float | None) -> Settings:
    """``settings`` with command-line values (``--interval`` → interval …) put in, through the
    same checks as the file's; a None value leaves the setting as it is."""
    # Any: each value goes to a field of its own type (an int, a float), as out_of_range checks
    given: dict[str, Any] = {k: v for k, v in values.items() if v is not None}
    for attr, value in given.items():
        why = out_of_range(attr, value)
        if why:
            flag = {"test_duration": "time", "test_streams": "parallel"}.get(attr, attr).replace("_", "-")
            raise ConfigError(None, f"--{flag} {why}")
    return replace(settings, **given)


def load(explicit: str | None = None) -> Settings:
    path = find_config(explicit)
    if path is None:
        return Settings()
    try:
        raw = bounded_read.read_bytes(path, bounded_read.CONFIG_LIMIT, "a config file")
    except OSError as exc:
        raise ConfigError(path, f"cannot read: {exc.strerror or exc}") from None
    except bounded_read.TooLarge as exc:
        raise ConfigError(path, exc.reason) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise ConfigError(path, "not UTF-8 text (is this the config file, or a binary?)", line) from None
    if "\x00" in text:
        raise ConfigError(
            path,
            "contains NUL bytes (is this the config file, or a binary?)",
            text[: text.index("\x00")].count("\n") + 1,
        )
    return parse(text, path)


def parse(text: str, path: Path | None = None) -> Settings:  # noqa: C901, PLR0912 - one branch per config table
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        match = re.search(r"line (\d+)", str(exc))
        raise ConfigError(path, f"not valid TOML: {exc}", int(match.group(1)) if match else None) from None
    locate = _Locator(text, path)
    values: dict[str, Any] = {"path": path}

    for key, value in data.items():
        if key in _FORBIDDEN:
            raise locate.error(key, "passwords do not belong in config files: use ssh keys and ssh-agent")
        if key in _SECTIONS:
            continue
        if key not in _TOP:
            raise locate.error(key, unknown_key(key, sorted([*_TOP, *_SECTIONS])))
        types, attr = _TOP[key]
        values[attr] = _typed(locate, key, value, types)

    for section, table in (("ssh", _SSH), ("ui", _UI), ("test", _TEST)):
        sub = _table(locate, data, section)
        for key, value in sub.items():
            if key not in table:
                raise locate.error(key, unknown_key(key, table, f" in [{section}]"), section)
            types, attr = table[key]
            values[attr] = _typed(locate, key, value, types, section)

    thresholds = _table(locate, data, "thresholds")
    for key, value in thresholds.items():
        if key not in _THRESH:
            raise locate.error(key, unknown_key(key, _THRESH, " in [thresholds]"), "thresholds")
        _typed(locate, key, value, _THRESH[key], "thresholds")
        why = out_of_range(key, value)
        if why:
            raise locate.error(key, why, "thresholds")
    values["thresholds"] = Thresholds(**{k: float(v) for k, v in thresholds.items()})

    values["hosts"] = tuple(_hosts(locate, data.get("hosts", [])))
    values["mute"] = tuple(_mutes(locate, data.get("mute", [])))

    speeds = _table(locate, data, "speed")
    overrides = {}
    for key, value in speeds.items():
        if "/" not in key:
            raise locate.error(key, 'keys in [speed] are "host/interface"', "speed")
        overrides[key] = _typed(locate, key, value, int, "speed")
        why = out_of_range("speed_mbps", value)
        if why:
            raise locate.error(key, why, "speed")
    values["speed_overrides"] = overrides
    values["prometheus"] = _prometheus_section(
        _table(locate, data, "prometheus"), lambda key, message: locate.error(key, message, "prometheus")
    )

    if "transport" in values:
        values["transport_set_by"] = f"[ssh] transport in {path}" if path else "[ssh] transport"
    if "ui_columns" in values:
        values["ui_columns"] = _columns(locate, values["ui_columns"])
    settings = Settings(**values)
    _check(locate, settings)
    return replace(settings, hide=Hide(settings.hide))  # checked: one of its words


# The settings limits.RANGES bounds: (attribute, its range, its key in the file, its section).
_RANGED = (
    ("interval", "interval", "interval", None),
    ("facts_every", "facts_every", "facts_every", None),
    ("test_duration", "test_duration", "duration", "test"),
    ("test_port", "port", "port", "test"),
    ("test_streams", "test_streams", "streams", "test"),
)


def _check(locate: "_Locator", s: Settings) -> None:
    for attr, bounds, key, section in _RANGED:
        why = out_of_range(bounds, getattr(s, attr))
        if why:
            raise locate.error(key, why, section)
    if s.host_key_policy not in ("strict", "accept-new"):
        raise locate.error("host_key_policy", 'must be "strict" or "accept-new"')
    if s.transport not in TRANSPORTS:
        raise locate.error("transport", 'must be "auto", "openssh" or "paramiko"', "ssh")
    if s.units not in UNITS:
        raise locate.error("units", 'must be "bits" or "bytes"', "ui")
    if s.hide not in HIDE:
        raise locate.error(
            "hide", 'must be "none", "down" (loopback and down interfaces) or "idle" (idle ones too)', "ui"
        )
    names = [h.name for h in s.hosts]
    for name in names:
        if names.count(name) > 1 or name == "local":
            raise locate.error("name", f"host name {name!r} is used twice (or is the reserved 'local')", "hosts")


def _columns(locate: "_Locator", names: list) -> tuple[str, ...]:
    for name in names:
        if name not in cells.COLUMNS:
            raise locate.error("columns", f"unknown column {name!r} (known: {', '.join(cells.COLUMNS)})", "ui")
    if len(set(names)) != len(names):
        raise locate.error("columns", "a column is listed twice", "ui")
    return tuple(names)


def _table(locate: "_Locator", data: dict, section: str) -> dict:
    sub = data.get(section, {})
    if not isinstance(sub, dict):
        raise locate.error(section, f"must be a table ([{section}])")
    return sub


def _hosts(locate: "_Locator", hosts: Any) -> list[HostSpec]:
    if not isinstance(hosts, list):
        raise locate.error("hosts", "must be an array of tables ([[hosts]])")
    out = []
    for entry in hosts:
        if not isinstance(entry, dict):
            raise locate.error("hosts", "must be an array of tables ([[hosts]]), not a list of values")
        for key, value in entry.items():
            if key in _FORBIDDEN:
                raise locate.error(key, "passwords do not belong in config files: use ssh keys and ssh-agent", "hosts")
            if key not in _HOST:
                raise locate.error(key, unknown_key(key, _HOST, " in [[hosts]]"), "hosts")
            _typed(locate, key, value, _HOST[key], "hosts")
        if "address" not in entry and "name" not in entry:
            raise locate.error("hosts", "each [[hosts]] needs an address (or an ssh alias as name)")
        address = entry.get("address") or entry["name"]
        if not _HOST_ARG.match(address) or "@" in address or address.startswith("-"):
            raise locate.error("address", f"not a host name, IP address or ssh alias: {address!r}", "hosts")
        if "user" in entry and not re.fullmatch(r"[A-Za-z0-9._][A-Za-z0-9._-]*", entry["user"]):
            raise locate.error("user", f"not a user name: {entry['user']!r}", "hosts")
        port = entry.get("port")
        why = out_of_range("port", port) if port is not None else None
        if why:
            raise locate.error("port", why, "hosts")
        out.append(
            HostSpec(
                name=entry.get("name") or address,
                address=address,
                user=entry.get("user"),
                port=port,
                identity_file=entry.get("identity_file"),
                jump=entry.get("jump"),
                tags=tuple(str(t) for t in entry.get("tags", ())),
            )
        )
    return out


def _mutes(locate: "_Locator", mutes: Any) -> list[MuteRule]:
    if not isinstance(mutes, list):
        raise locate.error("mute", "must be an array of tables ([[mute]])")
    out = []
    for entry in mutes:
        if not isinstance(entry, dict):
            raise locate.error("mute", "must be an array of tables ([[mute]]), not a list of values")
        for key, value in entry.items():
            if key not in _MUTE:
                raise locate.error(key, unknown_key(key, _MUTE, " in [[mute]]"), "mute")
            _typed(locate, key, value, _MUTE[key], "mute")
        out.append(MuteRule(**entry))
    return out


def _typed(locate: "_Locator", key: str, value: Any, types: Any, section: str | None = None) -> Any:
    if isinstance(value, bool) and types is not bool and bool not in (types if isinstance(types, tuple) else (types,)):
        raise locate.error(key, f"expected {_type_name(types)}, got {value!r}", section)
    if not isinstance(value, types):
        raise locate.error(key, f"expected {_type_name(types)}, got {value!r}", section)
    return value


def _type_name(types: Any) -> str:
    names = {int: "an integer", float: "a number", str: "a string", bool: "true or false", list: "a list"}
    if isinstance(types, tuple):
        return "a number" if float in types else " or ".join(names.get(t, t.__name__) for t in types)
    return names.get(types, types.__name__)


class _Locator:
    """Finds the line a key sits on, since tomllib keeps no positions."""

    def __init__(self, text: str, path: Path | None) -> None:
        self.lines = text.splitlines()
        self.path = path

    def line_of(self, key: str, section: str | None = None) -> int | None:
        in_section = section is None
        pattern = re.compile(rf"^\s*\"?{re.escape(key)}\"?\s*=")
        header = re.compile(rf"^\s*\[\[?\s*{re.escape(section)}\s*\]\]?") if section else None
        for number, line in enumerate(self.lines, 1):
            stripped = line.strip()
            if stripped.startswith("["):
                if header is not None:
                    in_section = bool(header.match(stripped))
                elif re.match(rf"^\[\[?\s*{re.escape(key)}\s*\]\]?", stripped):
                    return number
                else:
                    in_section = False
                continue
            if in_section and pattern.match(line):
                return number
        return None

    def error(self, key: str, message: str, section: str | None = None) -> ConfigError:
        shown = f"{section}.{key}" if section and section != key else key
        return ConfigError(self.path, message, self.line_of(key, section), shown)


# Deliberately narrow: a HOST ends up in ssh configs, known_hosts lines and error messages.
_HOST_ARG = re.compile(
    r"^(?:(?P<user>[A-Za-z0-9._][A-Za-z0-9._-]*)@)?"
    r"(?P<host>\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_][A-Za-z0-9._-]*)"
    r"(?::(?P<port>\d{1,5}))?$"
)


def host_from_arg(text: str, known: tuple[HostSpec, ...] = ()) -> HostSpec:
    """A HOST from the command line: a configured host's name, ``user@host[:port]``, an ssh
    alias, or ``local``."""
    if text == "local":
        return LOCAL
    for spec in known:
        if spec.name == text:
            return spec
    match = _HOST_ARG.match(text)
    if not match or text.startswith("-"):
        raise ConfigError(None, f"not a host: {text!r} (expected user@host[:port] or an ssh alias)")
    host = match.group("host").strip("[]")
    port = int(match.group("port")) if match.group("port") else None
    why = out_of_range("port", port) if port is not None else None
    if why:
        raise ConfigError(None, f"the port in {text!r} {why}")
    return HostSpec(name=text, address=host, user=match.group("user"), port=port)
