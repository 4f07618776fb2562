"""The ``[prometheus]`` config section and the ``--match`` selector.

Secrets never sit in the config or on the command line: a bearer token or a ``user:password``
pair is read from a file the config names (and only when linkdeck connects)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable
from urllib.parse import urlsplit

from .limits import out_of_range, unknown_key


@dataclass(frozen=True, slots=True)
class PrometheusConfig:
    url: str
    match: str = ""  # label matchers without braces: 'job="node",env!="lab"'
    bearer_token_file: str | None = None
    basic_auth_file: str | None = None  # one line "user:password"
    ca_file: str | None = None
    interval: float = 5.0  # seconds between refreshes
    timeout: float = 5.0  # seconds one refresh may take


_KEYS: dict[str, tuple[type | tuple[type, ...], str]] = {
    "url": (str, "url"),
    "match": (str, "match"),
    "bearer_token_file": (str, "bearer_token_file"),
    "basic_auth_file": (str, "basic_auth_file"),
    "ca_file": (str, "ca_file"),
    "interval": ((int, float), "interval"),
    "timeout": ((int, float), "timeout"),
}

# One label matcher: name, operator, a double-quoted value with escapes. Anything else (a
# second selector, a brace, a PromQL function) is refused, so the user's text can only narrow
# linkdeck's own queries, never change them.
_MATCHER = r'\s*[A-Za-z_][A-Za-z0-9_]*\s*(?:=~|!~|!=|=)\s*"(?:[^"\\\n]|\\.)*"\s*'
_MATCHERS = re.compile(rf"^(?:{_MATCHER}(?:,{_MATCHER})*,?\s*)?$")


class SelectorError(ValueError):
    pass


def matchers(selector: str) -> str:
    """``{job="node"}`` or ``job="node"`` → ``job="node"`` (checked), "" for no selector."""
    text = selector.strip()
    if text.startswith("{") and text.endswith("}"):
        text = text[1:-1]
    if not _MATCHERS.match(text):
        raise SelectorError(
            f"not a label selector: {selector!r} "
            f"(expected label matchers such as '{{job=\"node\"}}' or '{{instance=~\"db.*\"}}')"
        )
    return text.strip().rstrip(",").strip()


def check_url(url: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise SelectorError(f"not a Prometheus URL: {url!r} (expected http://HOST:9090 or https://…)")
    if parts.username or parts.password:
        raise SelectorError("no credentials in the URL: put them in a file named by [prometheus] basic_auth_file")
    return url.rstrip("/")


def parse_section(table: dict[str, Any], error: Callable[[str, str], Exception]) -> PrometheusConfig | None:
    """The ``[prometheus]`` table → a config (None without a url); ``error(key, message)``
    makes the caller's located config error."""
    if not table:
        return None
    values: dict[str, Any] = {}
    for key, value in table.items():
        if key not in _KEYS:
            raise error(key, unknown_key(key, _KEYS, " in [prometheus]"))
        types, attr = _KEYS[key]
        if isinstance(value, bool) or not isinstance(value, types):
            raise error(key, "expected a number" if types is not str else "expected a string")
        values[attr] = float(value) if isinstance(value, (int, float)) else value
    if "url" not in values:
        raise error("url", "[prometheus] needs a url (http://HOST:9090)")
    try:
        values["url"] = check_url(values["url"])
    except SelectorError as exc:
        raise error("url", str(exc)) from None
    try:
        values["match"] = matchers(values.get("match", ""))
    except SelectorError as exc:
        raise error("match", str(exc)) from None
    for key in ("interval", "timeout"):
        why = out_of_range(f"prometheus_{key}", values[key]) if key in values else None
        if why:
            raise error(key, why)
    return PrometheusConfig(**values)
