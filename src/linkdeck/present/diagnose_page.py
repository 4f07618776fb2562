"""``linkdeck diagnose``'s verdict and its words: the causes every step found, ranked by
the evidence behind them, each with its figures and the next step, and what the steps ruled
out ("host ceilings 23 Gb/s and 19 Gb/s: not the hosts"). ``rank`` is pure over a
``probe.diagnosis.Diagnosis``; ``diagnosis_text`` and ``diagnosis_json`` are its two forms."""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..core import units
from ..core.codes import Code
from ..core.jsonfields import Field, write
from ..core.kinds import Kind, is_down
from ..core.levels import Severity, Status
from ..core.model import CAUSE_JSON, FINDING_JSON, Cause, Finding, HostUpdate, InterfaceView
from ..core.tcpstats import TCP_RATES_JSON
from ..probe.diagnose_steps import Diagnosis
from ..probe.every_address import ADDRESSES_JSON
from ..probe.pairs import TEST_JSON
from .outcome import addresses_text, report_text, stale_note, state_word, tcp_detail

# How a test fell short, not why: below the host's own configuration in the ranking.
_SHAPE_ONLY = frozenset({Code.BOTTLENECK, Code.ASYMMETRY})
# A host's ceiling explains a test whose slower direction came within this share of it.
EXPLAINS_RATIO = 0.5
_MTU_CAUSES = frozenset({Code.PATH_MTU, Code.PATH_MTU_SUSPECTED, Code.MTU_MISMATCH})
_PATH = (
    "the slow hop between {src} and {dst}: "
    "a link, a shaper or a firewall near that rate (`linkdeck matrix {src} {dst}` and the hosts on the way)"
)
NEXT = {
    Code.PATH_MTU: (
        "make every hop between {src} and {dst} carry the ends' MTU, "
        "or set the ends to what the path carries (`linkdeck mtu {src} {dst}` re-checks)"
    ),
    Code.PATH_MTU_SUSPECTED: "probe the path MTU (`linkdeck mtu {src} {dst}`) before changing any MTU",
    Code.BOTTLENECK: "find " + _PATH,
    Code.ALONE_ALSO_SLOW: "find " + _PATH,
    Code.BIDIR_ONLY: (
        "the path is fine: test each direction on its own (`linkdeck test {src} {dst}`), "
        "or with more streams (`--parallel 4`)"
    ),
    Code.CEILING_LOW: "the host cannot fill its own link: look at its CPU load and power settings before the network",
    Code.PATH_DIFFERS: (
        "probe that address's path MTU (`linkdeck mtu {src} {dst} --address {address}`), then test it alone "
        "(`linkdeck test {src} {dst} --address {address}`) and check which interface {dst}'s replies leave by"
    ),
    Code.SENDER_CPU: "more streams (`linkdeck test {src} {dst} --parallel 4`) on iperf3 ≥ 3.16, or a less busy {src}",
    Code.RECEIVER_CPU: "more streams (`linkdeck test {src} {dst} --parallel 4`) on iperf3 ≥ 3.16, or a less busy {dst}",
    Code.SPEED_WRONG: "set the real speed under `[speed]` in linkdeck's config, or update the driver that reports it",
    Code.SPEED_SUSPECT: "set the real speed under `[speed]` in linkdeck's config, or update the driver that reports it",
    Code.ROUTED_ELSEWHERE: "send from the chosen interface with iperf3 3.10 or later on {src} (its --bind-dev): "
    "`linkdeck test {src} {dst} --from IF`; or give that interface a subnet of its own",
    Code.RETRANSMITS: (
        "`linkdeck diagnose {src} {dst}` again while nothing else runs; "
        "if they stay, look for drops on the hosts on the way"
    ),
    Code.ANOTHER_TEST: "`linkdeck diagnose {src} {dst}` again when the other test has ended",
    Code.SHARED_PATH: (
        "`linkdeck diagnose {src} {dst}` again when the other traffic has ended "
        "(the dashboard's rates show where it runs)"
    ),
}
# Measured on this path, in the order they explain the rest: what the path carries (its MTU,
# one address), what a host can send (a ceiling the test came near), what a hop carries, what
# the counters saw.
_MEASURED = (
    Code.HOST_DOWN,
    Code.PATH_MTU,
    Code.PATH_DIFFERS,
    Code.CEILING_LOW,
    Code.BOTTLENECK,
    Code.SENDER_CPU,
    Code.RECEIVER_CPU,
    Code.ERRORS,
    Code.DROPS,
    Code.PATH_MTU_SUSPECTED,
)
# What a slow hop (or a shared path) brings with it: told under the bottleneck, not above it.
_UNDER_BOTTLENECK = frozenset({Code.RETRANSMITS, Code.ALONE_ALSO_SLOW})
# A cause about the hosts' interfaces: with one of them up, their findings rule nothing out.
_INTERFACE_CAUSES = _MTU_CAUSES | {Code.SPEED_WRONG, Code.SPEED_SUSPECT, Code.SPEED_LOW, Code.ERRORS, Code.DROPS}


@dataclass(frozen=True, slots=True)
class Ranked:
    code: Code
    message: str
    evidence: str
    next: str
    host: str | None = None

    def as_dict(self) -> dict[str, str | None]:
        return write(self, RANKED_JSON)


# A ranked cause's (or condition's) object in diagnose --json.
RANKED_JSON: tuple[Field[Ranked], ...] = (
    *CAUSE_JSON,
    Field("next", ("string",), "the next step to take", lambda c: c.next),
    Field("host", ("string", "null"), "the host it is about; null: the path", lambda c: c.host),
)


@dataclass(frozen=True, slots=True)
class Judged:
    status: Status
    summary: str
    causes: tuple[Ranked, ...]
    ruled_out: tuple[str, ...]
    conditions: tuple[Ranked, ...] = ()  # what kept the test from measuring the path alone


def _steps(code: Code, d: Diagnosis, address: str | None = None) -> str | None:
    template = NEXT.get(code)
    return template.format(src=d.src, dst=d.dst, address=address or d.dst) if template else None


def _of_cause(c: Cause, d: Diagnosis, host: str | None = None, address: str | None = None) -> Ranked:
    return Ranked(
        c.code,
        c.message,
        c.evidence,
        _steps(c.code, d, address) or f"`linkdeck diagnose {d.src} {d.dst}` again once that is fixed",
        host,
    )


def _of_finding(f: Finding) -> Ranked:
    where = f"{f.host} {f.interface}" if f.interface else f.host
    return Ranked(
        f.code,
        f"{where}: {f.message}",
        f.evidence,
        f.hint or f"`linkdeck host {f.host}` shows it with its figures",
        f.host,
    )


def _address_of(c: Cause, d: Diagnosis) -> str | None:
    """The address a PATH_DIFFERS cause names, for its next step."""
    tested = [t.address for t in d.addresses.tested] if d.addresses is not None else []
    named = [(c.message.find(f" {a} ("), a) for a in tested if f" {a} (" in c.message]
    return min(named)[1] if named else None  # the one it is about comes first, the best one after


def _address_mtus(d: Diagnosis) -> dict[str, Ranked]:
    """Address → PATH_MTU for each address whose path, probed before its test, carried less
    than the sending interface's MTU in a direction: what a direction that moved next to
    nothing through that address comes from."""
    out: dict[str, Ranked] = {}
    for t in d.addresses.tested if d.addresses is not None else ():
        r, p = t.outcome.result, t.outcome.result.path_mtu
        if p is None:
            continue
        short = [
            (way, carried, mtu, bps)
            for way, carried, mtu, bps in (
                (units.arrow(d.src, d.dst), p.forward, p.forward_mtu, r.forward_bps),
                (units.arrow(d.dst, d.src), p.reverse, p.reverse_mtu, r.reverse_bps),
            )
            if carried is not None and mtu is not None and carried < mtu
        ]
        if not short:
            continue
        way, carried, mtu, bps = short[0]
        where = f"{t.address} ({t.interface})" if t.interface else t.address
        moved = f": {way} moved {units.rate(bps)} through it" if bps is not None else ""
        out[t.address] = Ranked(
            Code.PATH_MTU,
            f"{way} via {where} carries {carried}-byte packets; the sender's interface uses {mtu}{moved}",
            f"path MTU probed to {t.address} with don't-fragment pings: {p.forward or '?'} → / {p.reverse or '?'} ←; "
            + (f"{d.dst} {t.interface} " if t.interface else "")
            + f"takes {carried}-byte packets where {mtu}-byte ones are sent",
            f"give every interface in that subnet one MTU ({d.dst} {t.interface or t.address} and the "
            f"hosts sending to it), then `linkdeck mtu {d.src} {d.dst} --address {t.address}` re-checks",
            d.dst,
        )
    return out


def _measured_first(causes: list[Ranked]) -> list[Ranked]:
    return sorted(causes, key=lambda c: _MEASURED.index(c.code) if c.code in _MEASURED else len(_MEASURED))


def _fold(causes: list[Ranked]) -> list[Ranked]:
    """Retransmits and "each alone also slow" under the bottleneck they come with: evidence
    of it, not causes above it."""
    head = next((c for c in causes if c.code == Code.BOTTLENECK), None)
    if head is None:
        return causes
    under = [c for c in causes if c.code in _UNDER_BOTTLENECK]
    if not under:
        return causes
    # a dash, not parentheses: a folded cause's own words and figures carry parentheses already
    told = f"{head.evidence}; with it: " + "; ".join(f"{c.message} — {c.evidence}" for c in under)
    return [replace(c, evidence=told) if c is head else c for c in causes if c.code not in _UNDER_BOTTLENECK]


def rank(d: Diagnosis) -> Judged:  # noqa: C901, PLR0912 - the ranking's tiers in one place
    """Tier 0: what a measurement on this path or host showed (its path MTU, one address far
    below another, a bottleneck's figure, a low ceiling, the counters), in that order; tier 1:
    each end's own configuration (a speed figure, its findings: "local problems
    first"); tier 2: the shape of a shortfall (asymmetry, each direction alone) that names no
    cause; tier 3: notes, and a low ceiling far above what this test carried (true of the
    host, not this path). Retransmits and each-alone figures that come with a bottleneck are
    told under it."""
    tiers: list[list[Ranked]] = [[], [], [], []]
    test = d.test
    verdict = test.verdict if test is not None else None
    in_verdict: set[tuple[str, str | None]] = set()
    if verdict is not None and verdict.status is not Status.OK:
        for c in verdict.causes:
            tier = 0 if c.code in _MEASURED else 2 if c.code in _SHAPE_ONLY else 1
            tiers[tier].append(_of_cause(c, d))
            in_verdict.add((c.code, None))
    slower = _slower(d)
    for host, o in d.ceilings.items():
        # a low ceiling is this path's cause only when the test came near it; far below it,
        # the host cannot fill its link but something else held this test back
        near = slower is None or o.result.forward_bps is None or slower >= EXPLAINS_RATIO * o.result.forward_bps
        tiers[0 if near else 3] += [_of_cause(c, d, host) for c in o.verdict.causes if c.code == Code.CEILING_LOW]
    if d.addresses is not None:
        mtus = _address_mtus(d)
        for c in d.addresses.causes:
            address = _address_of(c, d)
            if address in mtus:  # the address's path MTU explains it: evidence of that
                mtus[address] = replace(mtus[address], evidence=f"{mtus[address].evidence}; {c.message}")
            else:
                tiers[0].append(_of_cause(c, d, d.dst, address))
        tiers[0] += mtus.values()
    # the worst first, whichever end has it: an end's listing order says nothing of weight
    ends_own = sorted((f for found in d.findings.values() for f in found), key=lambda f: -f.severity.rank)
    for f in ends_own:
        if (f.code, None) in in_verdict:
            continue
        tiers[1 if f.severity is not Severity.INFO else 3].append(_of_finding(f))
    for host, why in d.failed.items():
        tiers[0].insert(
            0,
            Ranked(
                Code.HOST_DOWN,
                f"{host} sends no samples",
                why,
                "fix the connection first: `linkdeck hosts " + host + "`",
                host,
            ),
        )
    tiers[0] = _measured_first(tiers[0])
    causes = tuple(_fold([c for tier in tiers for c in tier]))
    status = _with_addresses(d, verdict.status if verdict is not None else Status.ERROR)
    if status is Status.OK and any(c for tier in tiers[:2] for c in tier):
        status = Status.DEGRADED
    conditions = tuple(_of_cause(c, d) for c in verdict.conditions) if verdict is not None else ()
    if test is not None and test.result.error:
        summary = f"the test did not run: {test.result.error}"
    elif conditions and verdict is not None:  # said first, with what the path carried in all
        summary = verdict.summary + (
            f"; {causes[0].message}" if causes and causes[0].message not in verdict.summary else ""
        )
    elif causes and status is not Status.OK:
        summary = causes[0].message
    else:
        summary = "nothing wrong" + (f": {units.rate(slower)} measured" if slower is not None else "")
    return Judged(status, summary, causes, tuple(ruled_out(d, causes)), conditions)


def _with_addresses(d: Diagnosis, status: Status) -> Status:
    """The page's status: the main test's, or worse when an address the page names as a cause
    measured worse (a direction that moved next to nothing through it is broken, whatever the
    main address carried). An address whose test did not run changes nothing."""
    if d.addresses is None or not (d.addresses.causes or _address_mtus(d)) or status is Status.ERROR:
        return status
    measured = [t.outcome.verdict.status for t in d.addresses.tested if t.outcome.verdict.status is not Status.ERROR]
    return max([status, *measured], key=lambda s: s.rank)


def _slower(d: Diagnosis) -> float | None:
    """The test's slower direction (bit/s), None when it measured nothing."""
    r = d.test.result if d.test is not None else None
    known = [b for b in ((r.forward_bps, r.reverse_bps) if r is not None else ()) if b is not None]
    return min(known) if known else None


def ruled_out(d: Diagnosis, causes: tuple[Ranked, ...]) -> list[str]:
    """What a step measured and found fine, with its figures; nothing for a step that did
    not run or measured nothing (unknown is not fine)."""
    out = []
    codes = {c.code for c in causes}
    figures_bps = [o.result.forward_bps for o in d.ceilings.values()]
    ceilings = [b for b in figures_bps if b is not None]
    slower = _slower(d)
    whole = (
        bool(ceilings) and len(figures_bps) == len(dict.fromkeys((d.src, d.dst))) and len(ceilings) == len(figures_bps)
    )
    figures = f"host ceiling{'s' if len(ceilings) > 1 else ''} {' and '.join(units.rate(b) for b in ceilings)}"
    if whole and Code.CEILING_LOW not in codes:
        out.append(f"{figures}: not the hosts")
    elif whole and slower is not None and slower < EXPLAINS_RATIO * min(ceilings):
        out.append(f"{figures}, far above the {units.rate(slower)} measured: not what held this test back")
    path = d.test.result.path_mtu if d.test is not None else None
    if path is not None and path.forward is not None and path.reverse is not None and not codes & _MTU_CAUSES:
        both = f"{path.forward} both ways" if path.forward == path.reverse else f"{path.forward} → / {path.reverse} ←"
        out.append(f"path MTU {both}: not MTU")
    if (
        not d.failed
        and not codes & _INTERFACE_CAUSES
        and not any(f.severity is not Severity.INFO for found in d.findings.values() for f in found)
    ):
        out.append(f"no findings on {' or '.join(d.findings)}: not the hosts' interfaces")
    if d.test is not None and d.test.verdict.status is Status.OK and d.test.verdict.pct_of_expected is not None:
        # with several addresses tested, the main test spoke for its own address's path only
        several = d.addresses is not None and len(d.addresses.tested) > 1 and d.test.result.address
        out.append(
            f"the test carried {units.percent(d.test.verdict.pct_of_expected)} of what a clean path carries: "
            + (f"not the path to {d.test.result.address}" if several else "not the path")
        )
    if d.addresses is not None and not d.addresses.causes and len(d.addresses.tested) > 1:
        out.append(f"{len(d.addresses.tested)} addresses of {d.dst} alike: not one address")
    return out


def _has_interval(u: HostUpdate) -> bool:
    t = u.tcp
    return t is None or u.stale or t.out_segs_ps is not None or t.in_segs_ps is not None


def _interfaces(u: HostUpdate) -> list[str]:
    return [
        f"{v.iface.name} {units.link_speed(v.iface.speed_mbps)} {units.duplex(v.iface.duplex)} "
        f"MTU {units.mtu(v.iface.mtu)}"
        for v in u.interfaces if v.iface.kind != Kind.LOOPBACK and not is_down(v.iface)
    ]  # fmt: skip


def diagnosis_text(d: Diagnosis, judged: Judged | None, done: frozenset[str] | None = None) -> str:  # noqa: C901 - the page's steps in order
    """The page; ``done``: the steps finished so far while it runs (the dashboard's ``d``),
    None once all have (``judged`` is None until then)."""

    def waiting(step: str) -> bool:
        return done is not None and step not in done

    lines = [f"linkdeck diagnose {units.arrow(d.src, d.dst)}", "", "1. Both ends alone"]
    for host in dict.fromkeys((d.src, d.dst)):
        u = d.updates.get(host)
        state = d.failed.get(host) or (
            ", ".join(filter(None, (state_word(u), stale_note(u), u.os_detail or u.os or "OS unknown")))
            if u
            else "no answer"
        )
        lines.append(f"  {host}: {state}")
        if u is not None:
            lines.append(f"    interfaces: {', '.join(_interfaces(u)) or 'none up'}")
            if _has_interval(u):  # one sample has no rates yet: nothing to tell, and no problem
                lines.append(f"    TCP: {tcp_detail(u)}")
        found = d.findings.get(host, ())
        named = "; ".join(" ".join(filter(None, (f.code, f.interface))) for f in found)
        lines.append(f"    findings: {named or 'none'}")
        ceiling = d.ceilings.get(host)
        if ceiling:
            lines.append(f"    loopback: {ceiling.verdict.summary or ceiling.result.error}")
        else:
            lines.append(
                "    loopback: measuring its ceiling…"
                if waiting("ceilings") and host not in d.failed
                else "    loopback: ceiling not measured"
            )
    lines += ["", "2. The path"]
    if d.test is None and waiting("test"):
        lines.append("  testing…" if not waiting("ceilings") else "  tested after both ends")
    if d.test is not None:
        lines += ["  " + line for line in report_text(d.test).rstrip("\n").splitlines()]
    if d.addresses is not None:
        lines += ["  " + line for line in addresses_text(d.addresses).rstrip("\n").splitlines()]
    elif d.addresses_error:
        lines.append(f"  every address: {d.addresses_error}")
    if judged is None:
        return "\n".join([*lines, "", "3. Verdict: when the steps above finish"]) + "\n"
    lines += ["", f"3. Verdict: {judged.status.upper()} — {judged.summary}"]
    for n, c in enumerate(judged.conditions):
        head = "first" if n == 0 else "also"
        lines += [f"  {head}: {c.code}: {c.message}", f"       {c.evidence}", f"       next: {c.next}"]
    for n, c in enumerate(judged.causes, 1):
        lines += [f"  {n}. {c.code}: {c.message}", f"       {c.evidence}", f"       next: {c.next}"]
    if judged.ruled_out:
        lines.append("  ruled out:")
        lines += [f"    - {line}" for line in judged.ruled_out]
    return "\n".join(lines) + "\n"


@dataclass(frozen=True, slots=True)
class _End:
    """One end of a diagnosis, as its step saw it."""

    host: str
    update: HostUpdate | None
    diagnosis: Diagnosis


@dataclass(frozen=True, slots=True)
class _Page:
    diagnosis: Diagnosis
    judged: Judged


# An end's interface (its loopback left out): the facts a cause reads.
_END_INTERFACE_JSON: tuple[Field[InterfaceView], ...] = (
    Field("name", ("string",), "the interface's name", lambda v: v.iface.name),
    Field("speed_mbps", ("integer", "null"), "its link speed, Mb/s; null when unknown", lambda v: v.iface.speed_mbps),
    Field("duplex", ("string", "null"), "full or half", lambda v: v.iface.duplex),
    Field("mtu", ("integer", "null"), "largest IP packet it sends, bytes", lambda v: v.iface.mtu),
)
_END_JSON: tuple[Field[_End], ...] = (
    Field(
        "state",
        ("string", "null"),
        "the host's state, as in snapshot --json; null when no sample came",
        lambda e: e.update.state.value if e.update else None,
    ),
    Field(
        "failed",
        ("string", "null"),
        "why it has no sample; null when it has one",
        lambda e: e.diagnosis.failed.get(e.host),
    ),
    Field(
        "interfaces",
        ("array",),
        "its interfaces but loopback",
        lambda e: [v for v in e.update.interfaces if v.iface.kind != Kind.LOOPBACK] if e.update else [],
        of=_END_INTERFACE_JSON,
    ),
    Field(
        "tcp",
        ("object", "null"),
        "its TCP health at its last sample, as in snapshot --json; null when not read",
        lambda e: e.update.tcp if e.update is not None else None,
        of=TCP_RATES_JSON,
    ),
    Field(
        "findings",
        ("array",),
        "its findings, as in snapshot --json",
        lambda e: e.diagnosis.findings.get(e.host, ()),
        of=FINDING_JSON,
    ),
)
# What each step found.
_STEPS_JSON: tuple[Field[Diagnosis], ...] = (
    Field(
        "ends",
        ("object",),
        "each end by its name",
        lambda d: {host: _End(host, u, d) for host, u in d.updates.items()},
        of=_END_JSON,
        keyed=True,
    ),
    Field(
        "ceilings",
        ("object",),
        "each host's loopback test by its name, as test --json",
        lambda d: d.ceilings,
        of=TEST_JSON,
        keyed=True,
    ),
    Field(
        "test",
        ("object", "null"),
        "the test SRC → DST, as test --json; null when it did not run",
        lambda d: d.test,
        of=TEST_JSON,
    ),
    Field(
        "addresses",
        ("object", "null"),
        "DST tested through each of its addresses, as test --all-addresses --json; null when not run",
        lambda d: d.addresses,
        of=ADDRESSES_JSON,
    ),
)
# The document of diagnose --json.
DIAGNOSE_JSON: tuple[Field[_Page], ...] = (
    Field("src", ("string",), "the host the path is diagnosed from (SRC)", lambda p: p.diagnosis.src),
    Field("dst", ("string",), "the host it goes to (DST)", lambda p: p.diagnosis.dst),
    Field("verdict", ("string",), "ok, degraded, bad or error", lambda p: p.judged.status),
    Field("summary", ("string",), "the verdict in one line", lambda p: p.judged.summary),
    Field(
        "conditions",
        ("array",),
        "what kept the test from measuring the path alone, said before any cause",
        lambda p: p.judged.conditions,
        of=RANKED_JSON,
    ),
    Field(
        "causes",
        ("array",),
        "what every step found, the best evidenced first",
        lambda p: p.judged.causes,
        of=RANKED_JSON,
    ),
    Field(
        "ruled_out",
        ("array",),
        "what the steps ruled out, one line each",
        lambda p: list(p.judged.ruled_out),
        items="string",
    ),
    Field("steps", ("object",), "what each step found", lambda p: p.diagnosis, of=_STEPS_JSON),
)


def diagnosis_json(d: Diagnosis, judged: Judged) -> dict:
    return write(_Page(d, judged), DIAGNOSE_JSON)
