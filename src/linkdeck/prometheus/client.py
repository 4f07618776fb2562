"""Prometheus's HTTP query API over httpx: one request per query, bounded by a timeout, and
every failure as one line that says what to check."""

from __future__ import annotations

import ssl
from pathlib import Path
from typing import Callable

import httpx
import orjson

from ..core import bounded_read
from ..core.fleetstate import Turns
from ..core.units import printable as escape_control
from ..settings.prometheus_section import PrometheusConfig
from . import vector
from .vector import Row


class PrometheusError(Exception):
    """Prometheus could not be asked, or its answer could not be read: one line."""


def _read_secret(path: str, what: str) -> str:
    try:
        text = bounded_read.read_text(Path(path).expanduser(), bounded_read.KEY_LIMIT, f"a {what} file").strip()
    except OSError as exc:
        raise PrometheusError(f"cannot read the {what} file {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise PrometheusError(f"the {what} file {path} is not UTF-8 text (is it the right file?)") from None
    except bounded_read.TooLarge as exc:
        raise PrometheusError(str(exc)) from None
    if not text:
        raise PrometheusError(f"the {what} file {path} is empty")
    return text


def _client_options(cfg: PrometheusConfig) -> dict:
    headers = {"Accept": "application/json"}
    auth = None
    if cfg.bearer_token_file:
        headers["Authorization"] = "Bearer " + _read_secret(cfg.bearer_token_file, "bearer token")
    if cfg.basic_auth_file:
        user, sep, password = _read_secret(cfg.basic_auth_file, "basic auth").partition(":")
        if not sep:
            raise PrometheusError(f"the basic auth file {cfg.basic_auth_file} must hold one line user:password")
        auth = httpx.BasicAuth(user, password)
    verify: ssl.SSLContext | bool = True
    if cfg.ca_file:
        try:
            verify = ssl.create_default_context(cafile=str(Path(cfg.ca_file).expanduser()))
        except (OSError, ssl.SSLError) as exc:
            raise PrometheusError(f"cannot use the CA file {cfg.ca_file}: {exc}") from None
    return {"headers": headers, "auth": auth, "verify": verify}


class PromClient:
    def __init__(self, cfg: PrometheusConfig, turns: Turns) -> None:
        self.url = cfg.url
        self._turns = turns  # the source's: an answer's scan and fold each take one
        self._http = httpx.AsyncClient(
            base_url=cfg.url, timeout=cfg.timeout, follow_redirects=False, **_client_options(cfg)
        )
        self._timeout = cfg.timeout

    async def close(self) -> None:
        await self._http.aclose()

    async def query(self, expr: str, labels: tuple[str, ...], fold: Callable[[list[Row]], None]) -> None:
        """Hand an instant query's series to ``fold`` as rows (:mod:`.vector`): for each, the
        values of ``labels`` (sorted) and the value's text. The caller pauses the cyclic
        collector around it (prometheus/source.py says why). A ``fold`` that cannot read a row
        raises ValueError or OverflowError, and a parsed series without labels or a value
        KeyError, IndexError, TypeError or AttributeError: garbage."""
        content, status = await self._fetch("/api/v1/query", {"query": expr})
        try:
            async with self._turns.turn():
                rows = vector.fast_rows(content, labels)
                if rows is None:
                    data = self._data(content, status)
                    if (
                        not isinstance(data, dict)
                        or data.get("resultType") != "vector"
                        or not isinstance(data.get("result"), list)
                    ):
                        raise self._garbage("a query answer without a vector")
                    rows = vector.parsed_rows(data["result"], labels)
                del content
            async with self._turns.turn():
                fold(rows)
        except (KeyError, IndexError, TypeError, ValueError, AttributeError, OverflowError):
            raise self._garbage("series without labels or a value") from None

    async def target_errors(self) -> dict[str, str]:
        """instance → Prometheus's last scrape error, for the targets that are down."""
        data = await self._get("/api/v1/targets", {"state": "active"})
        errors: dict[str, str] = {}
        for target in (data or {}).get("activeTargets", ()) if isinstance(data, dict) else ():
            if isinstance(target, dict) and target.get("health") == "down":
                instance = (target.get("labels") or {}).get("instance")
                if instance:
                    errors[instance] = str(target.get("lastError") or "down")
        return errors

    async def _get(self, path: str, params: dict[str, str]):
        content, status = await self._fetch(path, params)
        return self._data(content, status)

    async def _fetch(self, path: str, params: dict[str, str]) -> tuple[bytes, int]:
        try:
            async with self._http.stream("GET", path, params=params) as response:
                if response.status_code in (401, 403):
                    raise PrometheusError(
                        f"Prometheus at {self.url} refused access (HTTP {response.status_code}): "
                        "check bearer_token_file / basic_auth_file in [prometheus]"
                    )
                content = await bounded_read.gather(
                    response.aiter_bytes(),
                    f"Prometheus at {self.url}",
                    bounded_read.PROMETHEUS_ANSWER_LIMIT,
                    "one answer",
                    "watch fewer targets with --match (or match in [prometheus])",
                )
                return content, response.status_code
        except bounded_read.TooLarge as exc:
            raise PrometheusError(str(exc)) from None
        except httpx.TimeoutException:
            raise PrometheusError(f"Prometheus at {self.url} did not answer within {self._timeout:g} s") from None
        except httpx.HTTPError as exc:
            raise PrometheusError(
                f"cannot reach Prometheus at {self.url}: {escape_control(str(exc) or type(exc).__name__)}"
            ) from None

    def _data(self, content: bytes, status: int):
        """The ``data`` of an API answer, or the one line that says why there is none."""
        try:
            body = orjson.loads(content)
        except ValueError:
            text = content[:60].decode("utf-8", "replace")
            raise self._garbage(f"HTTP {status}, not JSON: {escape_control(text)!r}") from None
        if not isinstance(body, dict):
            raise self._garbage("JSON that is not an object")
        if body.get("status") != "success":
            error = escape_control(str(body.get("error") or f"HTTP {status}"))[:200]
            raise PrometheusError(f"Prometheus at {self.url} refused the query: {error}")
        return body.get("data")

    def _garbage(self, what: str) -> PrometheusError:
        return PrometheusError(f"Prometheus at {self.url} answered with {what}: is this the Prometheus API?")
