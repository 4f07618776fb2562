"""How a refresh shares the event loop with a dashboard beside it (issue 20 §3).

At 10,000 hosts each piece of a refresh's work (an answer's scan, its fold, a step of the
updates, the full collection) takes 0.04-0.2 s. A dashboard's own work mostly runs off timers,
and a timer that falls due during a piece runs only after every callback already queued: with
``asyncio.sleep(0)`` between the pieces, the next piece was always queued first, so a timer
waited for two or three of them (two answers scanned and folded, 0.25-0.3 s, in 4 runs of 10).
Here every piece is made to outlast a ticker's timer, and between any two of them the ticker
must have had its turn. A Prometheus made of constructed answers (httpx's MockTransport)."""

from __future__ import annotations

import asyncio
import functools
import json
import time

import httpx

from linkdeck.prometheus import metrics, source as source_module, vector
from linkdeck.prometheus.metrics import SCRAPE_TIME, fast_queries, slow_queries
from linkdeck.prometheus.source import PrometheusSource
from linkdeck.settings.config import Settings
from linkdeck.settings.prometheus_section import PrometheusConfig

HOSTS, DEVICES = 3, 2
TICK_S = 0.001
PIECE_S = 2 * TICK_S  # each piece outlasts the ticker's sleep: its timer is due when the piece ends


def _answer(labels: tuple[str, ...], step: int) -> bytes:
    """An answer to a query grouped by ``labels``, in Prometheus's own form (labels sorted, no
    spaces): each host's devices, and the scrape time where the query stamps one."""
    series = []
    for h in range(HOSTS):
        instance = f"10.0.0.{h}:9100"
        metric = {
            "instance": instance,
            "device": "",
            "job": "node",
            "operstate": "up",
            "duplex": "full",
            "nodename": f"n{h}",
            "sysname": "Linux",
        }
        for d in range(DEVICES):
            series.append({**metric, "device": f"eth{d}", "linkdeck_tcp": "Tcp_OutSegs" if d == 0 else "Tcp_InSegs"})
        if "linkdeck" in labels:
            series.append({"instance": instance, "linkdeck": SCRAPE_TIME, "value": 1795357000 + 5 * step})
    rows = []
    for s in series:
        value = str(s.pop("value", 1000 * (step + 1)))
        labelled = {name: s[name] for name in labels if s.get(name)}
        rows.append(json.dumps({"metric": labelled, "value": [1795357000, value]}, separators=(",", ":")))
    return ('{"status":"success","data":{"resultType":"vector","result":[' + ",".join(rows) + "]}}").encode()


async def test_a_timer_runs_between_any_two_pieces_of_a_refresh(monkeypatch) -> None:
    cfg = PrometheusConfig(url="http://127.0.0.1:9", interval=15)
    answers = {query: labels for _, query, labels in fast_queries("") + slow_queries("")}
    step = [0]

    def prometheus(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=_answer(answers[request.url.params["query"]], step[0]))

    log: list[str] = []

    def piece(name: str, work):
        def run(*args, **kwargs):
            log.append(name)
            time.sleep(PIECE_S)
            return work(*args, **kwargs)

        return run

    monkeypatch.setattr(vector, "fast_rows", piece("scan", vector.fast_rows))
    monkeypatch.setattr(metrics, "read_into", piece("fold", metrics.read_into))
    monkeypatch.setattr(metrics, "read_slow_into", piece("fold", metrics.read_slow_into))
    monkeypatch.setattr(PrometheusSource, "_names", piece("names", PrometheusSource._names))
    monkeypatch.setattr(PrometheusSource, "_apply_one", piece("step", PrometheusSource._apply_one))
    monkeypatch.setattr(source_module, "YIELD_EVERY", 1)  # a step per host
    monkeypatch.setattr(source_module, "FULL_COLLECTION_EVERY", 1)
    monkeypatch.setattr(source_module, "collect_full", piece("full collection", lambda: None))

    monkeypatch.setattr(
        httpx, "AsyncClient", functools.partial(httpx.AsyncClient, transport=httpx.MockTransport(prometheus))
    )
    source = PrometheusSource(cfg, Settings(local=False, prometheus=cfg), lambda update: None)

    async def ticker() -> None:
        while True:
            log.append("tick")
            await asyncio.sleep(TICK_S)

    tick = asyncio.create_task(ticker())
    try:
        await asyncio.sleep(0)
        for step[0] in range(3):  # the first refresh reads the slow facts too
            await source.refresh()
    finally:
        tick.cancel()
        if source._client is not None:
            await source._client.close()
    assert source.error is None and len(source.hosts) == HOSTS
    assert all(h.samples_seen == 3 for h in source.hosts.values())
    pieces = [name for name in log if name != "tick"]
    assert {"scan", "fold", "names", "step", "full collection"} <= set(pieces)
    assert pieces.count("scan") == pieces.count("fold") == 3 * len(fast_queries("")) + len(slow_queries(""))
    # every two pieces in a row with no tick between them
    together = [(a, b) for a, b in zip(log, log[1:]) if "tick" not in (a, b)]
    assert not together, together
