"""The words and colours of test results: the result panel, the dashboard's "Last test"
cell and the matrix cells. Remote text goes through ``clean`` into Rich ``Text``."""

from __future__ import annotations

from rich.text import Text

from .. import units
from ..probe import Outcome
from ..verdict import counters_vs_iperf3
from .rows import clean

_STATUS_STYLE = {"ok": "bold green", "degraded": "bold yellow", "bad": "bold red", "error": "bold magenta"}


def _pct(value: float | None) -> str:
    return units.percent(value)


def short_verdict(o: Outcome) -> str:
    """What the dashboard's "Last test" column shows (12 characters): "OK 98%", or a
    ceiling's figure "ceil 16.1G"."""
    v, r = o.verdict, o.result
    if r.src == r.dst and r.forward_bps is not None:
        return "ceil " + units.si(r.forward_bps, "").replace(" ", "")
    return f"{v.status.upper()} {_pct(v.pct_of_expected)}" if v.pct_of_expected is not None else v.status.upper()


def result_text(o: Outcome) -> Text:
    r, v = o.result, o.verdict
    t = Text()
    t.append(f"{clean(r.src)} → {clean(r.dst)}" if r.src != r.dst else f"{clean(r.src)} ceiling (loopback)", style="bold")
    t.append(f"   {clean(r.address)}   {r.duration_s:.1f} s" + (f"   iperf3 {clean(r.iperf3_version)}" if r.iperf3_version else "") + "\n\n")
    t.append(f"{v.status.upper()}", style=_STATUS_STYLE.get(v.status, "bold"))
    t.append(f"  {clean(v.summary)}\n\n")
    if r.error:
        return t
    rows = (
        (f"{clean(r.src)} → {clean(r.dst)}", units.rate(r.forward_bps), f"retransmits {r.forward_retransmits if r.forward_retransmits is not None else '—'}"),
        (f"{clean(r.dst)} → {clean(r.src)}", units.rate(r.reverse_bps), f"retransmits {r.reverse_retransmits if r.reverse_retransmits is not None else '—'}"),
    )
    for label, bps, retr in rows[: 1 if r.src == r.dst else 2]:  # a ceiling runs one way
        t.append(f"{label:<28}", style="dim")
        t.append(f"{bps:>12}   {retr}\n")
    rtt = f"{r.rtt_ms:.2f} ms" if r.rtt_ms is not None else "—"
    t.append(f"{'RTT':<28}", style="dim")
    t.append(f"{rtt}\n")
    t.append(f"{'CPU sender / receiver':<28}", style="dim")
    t.append(f"{_pct(r.cpu_src_pct)} / {_pct(r.cpu_dst_pct)}" + ("   (single-threaded iperf3)" if r.single_threaded else "") + "\n")
    t.append(f"{'Expected':<28}", style="dim")
    t.append(f"{units.rate(v.expected_bps)}   reached {_pct(v.pct_of_expected)}\n")
    for c in v.causes:
        t.append(f"\n{clean(c.code)}", style="bold yellow")
        t.append(f"  {clean(c.message)}\n  {clean(c.evidence)}\n")
    t.append("\nInterface counters vs iperf3\n", style="bold")
    mtu = o.src.iface.mtu if o.src.iface else None
    for direction, row in counters_vs_iperf3(r, mtu).items():
        if row["iperf3_bps"] is None:
            continue
        diff = f"  {row['diff_pct']:+.1f} %" if row["diff_pct"] is not None else ""
        t.append(f"{direction:<28}", style="dim")
        t.append(
            f"sender tx {units.rate(row['sender_tx_bps'])}, receiver rx {units.rate(row['receiver_rx_bps'])}; "
            f"iperf3 {units.rate(row['iperf3_bps'])} ({units.rate(row['frames_bps'])} in frames){diff}\n"
        )
    return t


def cell_text(o: Outcome) -> Text:
    r, v = o.result, o.verdict
    if r.error:
        return Text("error", style=_STATUS_STYLE["error"])
    pct = v.pct_of_expected
    style = "green" if pct is not None and pct >= 90 else "yellow" if pct is not None and pct >= 50 else "red" if pct is not None else ""
    retr = f" r{r.forward_retransmits}" if r.forward_retransmits is not None else ""
    return Text(f"{units.rate(r.forward_bps)} {_pct(pct)}{retr}", style=style)
