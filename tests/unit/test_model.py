import json

from linkdeck.model import Counters, IfaceRecord, Interface, merge_records, record_to_interface


def test_merge_records_later_values_win_and_tuples_union():
    merged = merge_records(
        [
            IfaceRecord("em0", mtu=1500, addresses=("10.0.0.1/24",), counters=Counters(rx_bytes=5)),
            IfaceRecord("em1", oper="down"),
            IfaceRecord("em0", speed_mbps=1000, duplex="full", addresses=("10.0.0.1/24", "fe80::1/64"), nic_counters={"rx_missed": 3}),
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
    iface = record_to_interface(IfaceRecord("aggr0", members=("i40e0", "i40e1"), speed_mbps=20000, nic_counters={"norcvbuf": 2}), default_route=True)
    assert (iface.kind, iface.oper) == ("unknown", "unknown")
    assert iface.members == ("i40e0", "i40e1") and iface.speed_mbps == 20000
    assert iface.default_route is True and iface.nic_counters == {"norcvbuf": 2}


def test_driver_and_offload_facts_survive_a_local_recording():
    # the local adapter records its facts as JSON: offload () (read, all off) is not None (not read)
    from linkdeck.model import interface_from_json, interface_to_json

    on = Interface("veth0", offload=("tcp-segmentation-offload", "generic-segmentation-offload"), driver="veth", driver_version="1.0")
    off, unread = Interface("veth1", offload=()), Interface("veth2")
    for iface in (on, off, unread):
        assert interface_from_json(json.loads(json.dumps(interface_to_json(iface)))) == iface
    assert json.loads(json.dumps(interface_to_json(off))) == {"name": "veth1", "offload": []} and "offload" not in interface_to_json(unread)
