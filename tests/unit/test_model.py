import gc
import json
from dataclasses import FrozenInstanceError, asdict, fields, replace

import pytest

from linkdeck.core.kinds import Kind
from linkdeck.core.model import (
    NO_DETAIL,
    Counters,
    HostDetail,
    IfaceRecord,
    Interface,
    InterfaceFacts,
    InterfaceView,
    Rates,
    merge_records,
    rate_values,
    record_to_interface,
)


def test_merge_records_later_values_win_and_tuples_union():
    merged = merge_records(
        [
            IfaceRecord("em0", mtu=1500, addresses=("10.0.0.1/24",), counters=Counters(rx_bytes=5)),
            IfaceRecord("em1", oper="down"),
            IfaceRecord(
                "em0",
                speed_mbps=1000,
                duplex="full",
                addresses=("10.0.0.1/24", "fe80::1/64"),
                nic_counters={"rx_missed": 3},
            ),
            IfaceRecord("em0", mtu=9000, nic_counters={"rx_fifo": 1}),
        ]
    )
    em0 = merged["em0"]
    assert (em0.mtu, em0.speed_mbps, em0.duplex) == (9000, 1000, "full")
    assert em0.addresses == ("10.0.0.1/24", "fe80::1/64")
    assert em0.nic_counters == {"rx_missed": 3, "rx_fifo": 1}
    assert em0.counters == Counters(rx_bytes=5)  # a record without counters keeps the earlier ones
    assert merged["em1"].oper == "down"


def test_record_to_interface_fills_unknowns_and_copies_facts():
    iface = record_to_interface(
        IfaceRecord("aggr0", members=("i40e0", "i40e1"), speed_mbps=20000, nic_counters={"norcvbuf": 2}),
        default_route=True,
    )
    assert (iface.kind, iface.oper) == ("unknown", "unknown")
    assert iface.members == ("i40e0", "i40e1") and iface.speed_mbps == 20000
    assert iface.default_route is True and iface.nic_counters == {"norcvbuf": 2}


def test_driver_and_offload_facts_survive_a_local_recording():
    # the local adapter records its facts as JSON: offload () (read, all off) is not None (not read)
    from linkdeck.core.rawjson import interface_from_json, interface_to_json

    on = Interface(
        "veth0",
        offload=("tcp-segmentation-offload", "generic-segmentation-offload"),
        driver="veth",
        driver_version="1.0",
    )
    off, unread = Interface("veth1", offload=()), Interface("veth2")
    for iface in (on, off, unread):
        assert interface_from_json(json.loads(json.dumps(interface_to_json(iface)))) == iface
    assert json.loads(json.dumps(interface_to_json(off))) == {
        "name": "veth1",
        "offload": [],
    } and "offload" not in interface_to_json(unread)


def _tracked_referents(obj: object) -> list[object]:
    """What a full collection walks on from ``obj``: its referents the collector tracks (its
    class aside)."""
    gc.collect()
    gc.collect()  # a tuple is untracked once the tuples in it are: the first pass may see it first
    return [o for o in gc.get_referents(obj) if gc.is_tracked(o) and not isinstance(o, type)]


def test_a_view_hands_out_rates_and_totals_as_given_and_the_collector_skips_its_numbers():
    """A view keeps its rates and totals as plain tuples (10,000 hosts keep 80,000 views alive,
    and a full collection walks every tracked object), and is still the dataclass it was: what
    it hands out is what it was given, or built from the same values (the rate step's way), and
    replace, asdict, == and immutability hold."""
    eth0 = Interface("eth0", kind="physical", oper="up", speed_mbps=1000)
    rates, totals = (
        Rates(8e6, 4e6, 1000.0, 500.0, 0.0, None, 0.0, 0.0),
        Counters(10**9, 5 * 10**8, 7, 8, 0, None, 0, 0, bits=64),
    )
    view = InterfaceView(eth0, rates, totals, 0.8)
    assert (view.iface, view.rates, view.totals, view.util_pct) == (eth0, rates, totals, 0.8)
    assert (
        type(view.rates) is Rates
        and type(view.totals) is Counters
        and view.rates.tx_errors_ps is None
        and view.totals.bits == 64
    )
    values = (8e6, 4e6, 1000.0, 500.0, 0.0, None, 0.0, 0.0)
    assert view == InterfaceView.of(eth0, values, (10**9, 5 * 10**8, 7, 8, 0, None, 0, 0, 64), 0.8)
    assert InterfaceView.of(eth0, values, (1, 2, 3, 4, 5, 6, 7, 8), None).totals == Counters(1, 2, 3, 4, 5, 6, 7, 8)
    assert (
        view != replace(view, util_pct=0.9)
        and replace(view, rates=Rates()).rates == Rates()
        and replace(view, rates=Rates()).totals == totals
    )
    assert asdict(view)["rates"]["rx_bps"] == 8e6 and asdict(view)["totals"]["bits"] == 64
    assert "rates=Rates(rx_bps=8000000.0" in repr(view)
    assert (
        rate_values(view) == values == tuple(getattr(view.rates, f.name) for f in fields(Rates))
    )  # the windows' read, no Rates built
    with pytest.raises(FrozenInstanceError):
        view.rates = Rates()  # type: ignore[misc]
    assert _tracked_referents(view) == [eth0]  # the numbers are not walked


def test_an_interface_and_a_record_are_built_on_one_declaration_of_the_facts() -> None:
    """A fact declared on one type and not the other would be dropped between a parser and the
    dashboard without a word: both take every fact from InterfaceFacts and add only their own."""
    facts = [f.name for f in fields(InterfaceFacts)]
    assert [f.name for f in fields(IfaceRecord)] == [*facts, "counters"]  # sent beside the interface
    # what only the whole interface knows: its route, the config's speed over the host's
    assert [f.name for f in fields(Interface)] == [*facts, "default_route", "speed_configured", "reported_speed_mbps"]
    # the one fact of each declared again is the interface's narrowing of an unsaid fact to
    # its unknown: every other is the base's own field, type and default
    base = {f.name: f for f in fields(InterfaceFacts)}
    narrowed = {f.name: (f.type, f.default) for f in fields(Interface) if f.name in base and f != base[f.name]}
    assert narrowed == {"kind": ("Kind", Kind.UNKNOWN), "oper": ("str", "unknown")}
    assert all(f == base[f.name] for f in fields(IfaceRecord) if f.name in base)


@pytest.mark.parametrize("fact", [f for f in fields(InterfaceFacts) if f.name != "name"], ids=lambda f: f.name)
def test_every_fact_a_record_says_survives_the_merge_the_interface_and_its_json_form(fact) -> None:
    """Each fact of the one declaration, said by one command's record, outlasts a later record
    that does not say it, reaches the interface made from the merge, and comes back from the
    interface's JSON form (a local recording's): a fact added to InterfaceFacts is checked
    here without a line of this test changing, until its type is one _sample does not know."""
    from linkdeck.core.rawjson import interface_from_json, interface_to_json

    value = _sample(fact.type)
    said = IfaceRecord("eth0", **{"kind": Kind.PHYSICAL, "oper": "up", fact.name: value})  # a speed that is real
    merged = merge_records([said, IfaceRecord("eth0", counters=Counters(rx_bytes=1))])["eth0"]
    assert getattr(merged, fact.name) == value and merged.counters == Counters(rx_bytes=1)
    iface = record_to_interface(merged, default_route=True)
    assert getattr(iface, fact.name) == value and iface.default_route
    back = interface_from_json(json.loads(json.dumps(interface_to_json(iface))))
    assert back == iface and type(getattr(back, fact.name)) is type(value)


def _sample(annotation: str) -> object:
    """A value of a fact's type that is neither its default nor its interface's."""
    samples: dict[str, object] = {
        "Kind | None": Kind.BOND,
        "str | None": "down",
        "int | None": 7,
        "tuple[str, ...]": ("x", "y"),
        "tuple[str, ...] | None": ("x",),
        "tuple[int, ...]": (1000, 10000),
        "tuple[tuple[str, str], ...]": (("k", "v"),),
        "Mapping[str, int]": {"rx_missed": 1},
    }
    assert annotation in samples, f"a fact of a type this test does not know yet: {annotation}"
    return samples[annotation]


# HostDetail's JSON forms as the collector and the Prometheus source write them, in the order
# their keys come: snapshot --json and recordings hold exactly these strings.
WRITTEN_DETAILS = [
    {"transport": "openssh", "transport_why": "auto (the default): /usr/bin/ssh is OpenSSH_9.2"},
    {"retry_in_s": "8", "retry_at": "1700000001", "blackhole_request_bytes": "1432", "transport": "paramiko"},
    {"blackhole_request_bytes": "1432", "missing": "addresses unavailable: x; MTU from sysfs", "transport": "openssh"},
    {"fingerprint": "SHA256:abc", "key_type": "ssh-ed25519", "key_b64": "AAAA", "hop": "", "transport": "openssh"},
    {"fingerprint": "SHA256:new"},
    {"source": "prometheus", "instance": "h2:9100", "sample_age_s": "0.3"},
    {},
]


@pytest.mark.parametrize("written", WRITTEN_DETAILS)
def test_host_detail_reads_its_json_form_back_to_the_same_bytes(written):
    detail = HostDetail.from_json(written)
    assert json.dumps(detail.as_json()) == json.dumps(written)  # same keys, same order, same strings
    assert HostDetail.from_json(detail.as_json()) == detail


def test_host_detail_fields_are_typed_and_written_as_linkdeck_always_wrote_them():
    detail = HostDetail(retry_in_s=2.0, retry_at=1700000000.0, blackhole_request_bytes=1432, missing=("a", "b"))
    assert detail.as_json() == {
        "retry_in_s": "2", "retry_at": "1700000000", "blackhole_request_bytes": "1432", "missing": "a; b"
    }  # fmt: skip
    read = HostDetail.from_json(WRITTEN_DETAILS[1])
    assert (read.retry_in_s, read.retry_at, read.blackhole_request_bytes) == (8.0, 1700000001.0, 1432)
    assert HostDetail.from_json(WRITTEN_DETAILS[2]).missing == ("addresses unavailable: x", "MTU from sysfs")
    assert HostDetail(sample_age_s=0.25).as_json() == {"sample_age_s": "0.2"}
    # a host key's parts the transport did not tell are said as "", not left out
    assert HostDetail.from_json(WRITTEN_DETAILS[3]).hop == ""
    assert HostDetail().as_json() == {} and HostDetail.from_json({}) is NO_DETAIL


def test_an_older_or_damaged_recordings_detail_reads_what_it_can():
    old = {"retry_in_s": "4", "via": "jump", "retry_at": "$(reboot)", "blackhole_request_bytes": "1.4 KB"}
    assert HostDetail.from_json(old) == HostDetail(retry_in_s=4.0)
    assert HostDetail.from_json({"fingerprint": 7, "hop": None, "missing": ["x"]}) is NO_DETAIL
    for not_an_object in (None, "retry_in_s=4", ["retry_in_s", "4"], 4):
        assert HostDetail.from_json(not_an_object) is NO_DETAIL


def test_replaced_is_dataclasses_replace():
    """The collector's replace of every tick (model.replaced) gives what dataclasses.replace
    gives, for any set of changes, and fails as it does on a name that is no field."""
    import random

    from linkdeck.core.model import HostSample, HostState, HostUpdate, replaced
    from linkdeck.core.tcpstats import TcpCounters, TcpRates

    rng = random.Random(41)
    update = HostUpdate(host="h", os="linux", state=HostState.LIVE, error="e", detail=HostDetail(retry_in_s=2.0))
    sample = HostSample(time=1.0, interfaces={}, counters={}, tcp=TcpCounters(out_segs=1), missing=("m",))
    values = {
        HostUpdate: {"state": HostState.ERROR, "error": None, "time": 3.5, "wire_bytes": 250, "tcp": TcpRates(),
                     "detail": NO_DETAIL, "stale": True, "interfaces": (), "fresh_until": 9.0},
        HostSample: {"time": 2.0, "wire_bytes": 40, "sampler_cpu_s": 0.5, "tcp": None, "missing": ()},
    }  # fmt: skip
    for obj in (update, sample, update, sample) * 25:
        pool = values[type(obj)]
        changes = {k: pool[k] for k in rng.sample(sorted(pool), rng.randrange(len(pool) + 1))}
        got = replaced(obj, changes)
        assert type(got) is type(obj) and got == replace(obj, **changes)
        assert [getattr(got, f.name) for f in fields(got)] == [
            getattr(replace(obj, **changes), f.name) for f in fields(got)
        ]
    with pytest.raises(TypeError):
        replaced(update, {"nonsense": 1})
