"""One host tested through each of its addresses, one after another (a client can be 100×
slower to two VNICs' addresses than to their aggr's): which addresses, the run, and its JSON.

The comparison itself (PATH_DIFFERS) is ``host_verdict.compare_addresses``; the words are
``present.addresses_text``.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

from ..core.addresses import routable
from ..core.jsonfields import Field, through, write
from ..core.kinds import Kind, is_down
from ..core.levels import Status
from ..core.model import CAUSE_JSON, Cause, HostUpdate
from ..findings.helpers import runs_over
from .failures import ProbeError
from .host_verdict import broken_beside, compare_addresses
from .pairs import CELL_JSON
from .watched import Outcome, iface_holding, unread_addresses

AddressDone = Callable[[str, Outcome], None]


def reachable_addresses(src: HostUpdate | None, dst: HostUpdate | None) -> list[str]:
    """Every address of ``dst`` in a subnet one of ``src``'s up interfaces has an address in,
    in ``dst``'s interface order."""
    if src is None or dst is None:
        return []
    mine = [n for v in src.interfaces if _usable(v.iface) for n in routable(v.iface.addresses)]
    found: list[str] = []
    for view in dst.interfaces:
        if not _usable(view.iface):
            continue
        for theirs in routable(view.iface.addresses):
            if any(theirs.version == m.version and theirs.ip in m.network and theirs.ip != m.ip for m in mine):
                found.append(str(theirs.ip))
    return list(dict.fromkeys(found))


def _usable(iface) -> bool:
    return iface.kind != Kind.LOOPBACK and not is_down(iface)


@dataclass(frozen=True, slots=True)
class Tested:
    """One address's test and what carries the address on DST: its interface, the links it
    runs over (vnic → aggr) and the lowest one's ports."""

    __test__ = False
    address: str
    interface: str | None
    over: tuple[str, ...]
    ports: tuple[str, ...]
    outcome: Outcome


@dataclass(frozen=True, slots=True)
class AddressRun:
    src: str
    dst: str
    tested: tuple[Tested, ...]
    causes: tuple[Cause, ...]


def tested(address: str, outcome: Outcome, dst: HostUpdate | None) -> Tested:
    ifname = outcome.dst_iface or iface_holding(dst, address)
    links = tuple(v.iface for v in dst.interfaces) if dst else ()
    over, ports = runs_over(links, ifname) if ifname else ((), ())
    return Tested(address, ifname, over, ports, outcome)


def judge_run(src: str, dst: str, done: list[Tested], dst_update: HostUpdate | None) -> AddressRun:
    links = tuple(v.iface for v in dst_update.interfaces) if dst_update else ()
    tests = [(t.address, t.interface, t.outcome.result) for t in done]
    causes = compare_addresses(tests, links)
    broken = broken_beside(tests)
    done = [
        replace(
            t,
            outcome=replace(
                t.outcome, verdict=replace(t.outcome.verdict, status=Status.BAD, summary=broken[t.address])
            ),
        )
        if t.address in broken and t.outcome.verdict.status is not Status.ERROR
        else t
        for t in done
    ]
    return AddressRun(src, dst, tuple(done), causes)


async def run_addresses(
    session, src: str, dst: str, addresses: list[str] | None = None, on_done: AddressDone | None = None
) -> AddressRun:
    """Test ``dst`` through each of ``addresses`` (default: every address ``src`` reaches in a
    shared subnet) one at a time through ``session`` (a ``TestSession``), then compare them.
    ProbeError when there is no address to test."""
    if addresses is None:
        addresses = reachable_addresses(session.latest(src), session.latest(dst))
        if not addresses:
            raise ProbeError(
                f"{src} and {dst} share no subnet that linkdeck can see{unread_addresses(session.latest, src, dst)}: "
                "give the addresses to test (--address, repeated)"
            )
    done = []
    for address in addresses:
        outcome = await session.run_pair(src, dst, address)
        done.append(tested(address, outcome, session.latest(dst)))
        if on_done is not None:
            on_done(address, outcome)
    run = judge_run(src, dst, done, session.latest(dst))
    for before, after in zip(done, run.tested):
        if after.outcome is not before.outcome:
            session.rejudged(before.outcome, after.outcome)
    return run


def _result_field(f: Field[Outcome]) -> Field[Tested]:
    if f.key == "address":
        return Field("address", ("string",), "DST's address this test was sent to", lambda t: t.address)
    return through(_outcome, (f,))[0]


def _outcome(t: Tested) -> Outcome:
    return t.outcome


# One address's object: a test's as in a matrix (without iperf3's own section), with what holds
# the address on DST.
RESULT_JSON: tuple[Field[Tested], ...] = (
    *(_result_field(f) for f in CELL_JSON),
    Field(
        "interface",
        ("string", "null"),
        "DST's interface holding the address; null when linkdeck could not tell",
        lambda t: t.interface,
    ),
    Field(
        "over",
        ("array",),
        "the links the interface runs over, top down (a VNIC's aggr)",
        lambda t: list(t.over),
        items="string",
    ),
    Field("ports", ("array",), "the lowest link's ports (an aggr's members)", lambda t: list(t.ports), items="string"),
)
# The document of `test --all-addresses --json` (and --address repeated).
ADDRESSES_JSON: tuple[Field[AddressRun], ...] = (
    Field("src", ("string",), "the host the tests ran from (SRC)", lambda r: r.src),
    Field("dst", ("string",), "the host whose addresses were tested (DST)", lambda r: r.dst),
    Field("results", ("array",), "one test per address, in the order run", lambda r: r.tested, of=RESULT_JSON),
    Field(
        "causes",
        ("array",),
        "across the tests: PATH_DIFFERS for an address well below the best one",
        lambda r: r.causes,
        of=CAUSE_JSON,
    ),
)


def addresses_json(run: AddressRun) -> dict:
    """``linkdeck test --all-addresses --json``: one test object per address (as ``linkdeck
    test --json``, without iperf3's own section) with the interface holding it."""
    return write(run, ADDRESSES_JSON)
