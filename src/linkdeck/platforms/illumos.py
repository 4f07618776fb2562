"""illumos and Solaris 11 hosts (SmartOS, OmniOS, OpenIndiana, Solaris): one streaming sh loop.

Every tick the loop prints ``kstat -p`` for the ``link`` module, filtered on the host to the
statistics read here; every ``facts_every`` ticks it also prints the dladm / ipadm listings
that say what each link is (class, MTU, ports of an aggr, what a vnic sits on, speeds the NIC
can do, addresses) and the default routes' rows of ``netstat -rn``. The sample time is kstat's own ``snaptime``
(high-resolution seconds since boot), so rates do not depend on when the frame crossed the network.
"""

from __future__ import annotations

import shlex
import time
from dataclasses import replace
from functools import partial
from typing import Callable, Collection, Mapping

from ..core.kinds import Kind
from ..core.model import Counters, HostSample, IfaceRecord, merge_records, record_to_interface
from ..core.tcpstats import TcpCounters
from ..parsers import dladm, ipadm, kstat, kstat_tcp, netstat_route
from ..parsers.default_route import DefaultRoute
from ..parsers.parse_error import ParseError
from ..settings.limits import DEFAULT_FACTS_EVERY
from ..transport.runner import Runner
from . import delta, route_marks as default_route, script_text
from .adapter import FRAME_BEGIN, FRAME_END, SECTION, StreamingAdapter, counters_of, parsed, run_once
from .delta import FULL, FULL_EVERY

# The one-shot counter read (a test brackets its transfer with two).
KSTAT_ARGV = tuple(shlex.split(kstat.FILTERED_COMMAND))
# Each tick's one kstat also reads the host's TCP counters (a few more lines, no process).
TICK_KSTAT = kstat.FILTERED_COMMAND.replace("kstat -p ", f"kstat -p '{kstat_tcp.SELECTOR}' ", 1)


def _section(
    name: str, parse, fields: tuple[str, ...]
) -> tuple[str, tuple[str, ...], Callable[[str, str], list[IfaceRecord]]]:
    """(section, the fields its command asks for in -p form, parser reading those fields)."""
    return name, fields, partial(_parse_fields, parse, fields)


def _parse_fields(parse, fields, text: str, os_name: str):
    return parse(text, os_name, fields)


# Section name → (fields, parser), the commands in scripts/illumos_sampler.sh. Order matters:
# later sections win on merge, so live per-port facts (show-phys) come after the generic link
# listing, and kstat (every tick) last.
FACT_SECTIONS = (
    _section("link", dladm.parse_show_link, dladm.SHOW_LINK_FIELDS),
    _section("phys", dladm.parse_show_phys, dladm.SHOW_PHYS_FIELDS),
    _section("mac", dladm.parse_show_phys_mac, dladm.SHOW_PHYS_MAC_FIELDS),
    _section("aggr", dladm.parse_show_aggr, dladm.SHOW_AGGR_FIELDS),
    _section("vnic", dladm.parse_show_vnic, dladm.SHOW_VNIC_FIELDS),
    _section("vnic-min", dladm.parse_show_vnic, dladm.SHOW_VNIC_MIN_FIELDS),
    _section("linkprop", dladm.parse_show_linkprop, dladm.SHOW_LINKPROP_FIELDS),
    _section("addr", ipadm.parse_show_addr, ipadm.PARSEABLE_FIELDS),
)
_FACTS = {name: parse for name, _fields, parse in FACT_SECTIONS}
# Sections that name datalinks; ipadm also lists lo0 and IPMP groups, which are not datalinks
# and have no link kstats, so addresses only decorate links found here or in kstat.
_LINK_SECTIONS = ("link", "phys", "aggr", "vnic", "vnic-min")


def build_script(facts_every: int) -> str:
    """The sampler (scripts/illumos_sampler.sh) piped through the delta filter (nawk)."""
    fields = {f"{name.upper().replace('-', '_')}_FIELDS": ",".join(f) for name, f, _ in FACT_SECTIONS}
    loop = script_text.fill(
        script_text.sh_line(script_text.source("illumos_sampler.sh")),
        {
            **fields,
            "FRAME_BEGIN": FRAME_BEGIN,
            "FRAME_END": FRAME_END,
            "SECTION": SECTION,
            "FULL": FULL,
            "FACTS_EVERY": int(facts_every),
            "FULL_EVERY_TICKS": int(facts_every) * FULL_EVERY,
        },
        code={"KSTAT": TICK_KSTAT},  # fixed text of the kstat parsers: a quoted selector
    )
    return delta.piped(loop, awk="nawk")


def _tcp(text: str) -> TcpCounters | None:
    try:
        return kstat_tcp.parse_kstat(text, TICK_KSTAT)
    except ParseError:
        return None  # no tcp kstats (another zone's view, an old release): TCP unknown


class IllumosAdapter(StreamingAdapter):
    os = "illumos"
    TICK_SECTIONS = frozenset(("kstat",))

    def __init__(
        self,
        runner: Runner | None = None,
        os_name: str | None = None,
        os_detail: str | None = None,
        facts_every: int = DEFAULT_FACTS_EVERY,
    ) -> None:
        super().__init__(runner, os_name, os_detail, facts_every)
        self._facts: dict[str, IfaceRecord] = {}
        self._links: set[str] = set()
        self._routes: tuple[DefaultRoute, ...] = ()

    def script(self) -> str:
        return build_script(self.facts_every)

    def parse_frame(self, sections: Mapping[str, str]) -> HostSample:
        if any(name in sections for name in _FACTS):
            self._facts, self._links = read_facts(sections, self.os)
            self._routes = default_route.read(sections, netstat_route.parse_routes, self.os)
        if "kstat" not in sections:
            raise ParseError(kstat.FILTERED_COMMAND, "the frame has no kstat section")
        live, snaptime = kstat.parse_with_time(sections["kstat"], self.os, kstat.FILTERED_COMMAND)
        if not live:
            raise ParseError(
                kstat.FILTERED_COMMAND,
                "no link statistics: this host has no 'link' kstats (Solaris 10 and older keep them per driver) "
                "or kstat is not on the login's PATH",
            )
        merged = merge_records([*self._facts.values(), *live])
        names = self._links | {rec.name for rec in live}
        interfaces = default_route.mark({name: record_to_interface(merged[name]) for name in names}, self._routes)
        counters = {rec.name: rec.counters for rec in live if rec.counters is not None}
        return HostSample(
            time=snaptime if snaptime is not None else time.monotonic(),
            interfaces=interfaces,
            counters=counters,
            tcp=_tcp(sections["kstat"]),
        )

    async def read_counters(self, names: Collection[str]) -> dict[str, Counters]:
        text = await run_once(self.runner, KSTAT_ARGV)
        return counters_of(parsed(lambda t: kstat.parse(t, self.os), text), names)


def read_facts(sections: Mapping[str, str], os_name: str) -> tuple[dict[str, IfaceRecord], set[str]]:
    """Merge every facts section of one frame; mark aggr ports with the aggr they belong to."""
    records: list[IfaceRecord] = []
    links: set[str] = set()
    for name, parse in _FACTS.items():
        text = sections.get(name)
        if not text:
            continue
        recs = parse(text, os_name)
        records.extend(recs)
        if name in _LINK_SECTIONS:
            links.update(rec.name for rec in recs)
    merged = merge_records(records)
    for rec in list(merged.values()):
        for port in rec.members:
            if rec.kind == Kind.BOND and port in merged:
                merged[port] = replace(merged[port], extra=(*merged[port].extra, ("master", rec.name)))
    return merged, links
