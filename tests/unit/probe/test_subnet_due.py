"""Which subnets the dashboard would probe is asked with every findings pass: worked out again
only when the live hosts' interfaces are not the ones it was worked out from."""

from __future__ import annotations

from dataclasses import replace

from linkdeck.core.model import Counters, HostState, HostUpdate, Interface, InterfaceView, Rates
from linkdeck.probe import subnet_mtu
from linkdeck.probe.subnet_mtu import SubnetProber


def _host(name: str, *ifaces: Interface, state: HostState = HostState.LIVE) -> HostUpdate:
    views = tuple(InterfaceView(i, Rates(), Counters()) for i in ifaces)
    return HostUpdate(host=name, os="linux", state=state, interfaces=views)


def test_the_subnets_to_probe_are_worked_out_again_only_when_an_interface_changed(monkeypatch):
    worked = []
    real = subnet_mtu.to_probe
    monkeypatch.setattr(subnet_mtu, "to_probe", lambda ports: worked.append(1) or real(ports))
    clock = [1000.0]
    prober = SubnetProber(None, clock=lambda: clock[0])  # type: ignore[arg-type]  # due() never reaches the session
    a = Interface(name="eth0", mtu=9000, addresses=("10.0.0.1/24",))
    b = Interface(name="eth0", mtu=1500, addresses=("10.0.0.2/24",))
    veths = tuple(Interface(name=f"veth{i}", kind="veth") for i in range(50))
    plans = prober.due([_host("a", a, *veths), _host("b", b)])
    assert [(p[0], p[1]) for p in plans] == [("10.0.0.0/24", (1500, 9000))] and len(worked) == 1
    for _ in range(3):  # new updates, the same interfaces: nothing worked out, nothing due again
        assert prober.due([_host("a", a, *veths), _host("b", b)]) == [] and len(worked) == 1
    clock[0] += subnet_mtu.MIN_GAP_S + 1
    b2 = replace(b, mtu=1400)  # an MTU changed: worked out again, and due under the new MTUs
    plans = prober.due([_host("a", a, *veths), _host("b", b2)])
    assert [(p[0], p[1]) for p in plans] == [("10.0.0.0/24", (1400, 9000))] and len(worked) == 2
    # a host no longer live takes its interfaces out: worked out again, nothing mixed left
    assert prober.due([_host("a", a, *veths), _host("b", b2, state=HostState.UNREACHABLE)]) == []
    assert len(worked) == 3
