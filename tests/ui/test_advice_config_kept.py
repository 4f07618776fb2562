"""The dashboard checks its config keys against the hosts again only when what the check reads
changed (the settings, the hosts the ssh config knows, each host and its interfaces' names),
and says what checking afresh says. Constructed updates, a stand-in for the app."""

import random
from dataclasses import replace
from types import SimpleNamespace

from linkdeck.core.model import HostState, HostUpdate
from linkdeck.findings.engine import unmatched_keys
from linkdeck.settings.config import HostSpec, MuteRule, Settings
from linkdeck.ui.state.advice import Advice
from tests.builders import iface, view


def _app(settings: Settings) -> SimpleNamespace:
    shown: list[str] = []
    app = SimpleNamespace(
        settings=settings,
        updates={},
        screen_stack=[object()],  # the dashboard alone
        tests=None,
        shown=shown,
        notify=lambda message, **kw: shown.append(message),
        withdraw=lambda title, message: None,
        run_worker=lambda *a, **kw: None,
    )
    return app


def _advice(app: SimpleNamespace, known: set[str]) -> Advice:
    advice = Advice(app)  # type: ignore[arg-type]  # a stand-in: what _warn_config reads
    advice.probing = False
    advice._asked, advice._known = True, known
    return advice


def _update(host: str, t: float, names: list[str], rx: float) -> HostUpdate:
    views = tuple(view(iface(n), rx_bps=rx if n == "eth0" else 0.0) for n in names)
    return HostUpdate(host=host, os="linux", state=HostState.LIVE, time=t, interfaces=views)


def test_numbers_moving_do_not_check_the_config_again():
    settings = Settings(speed_overrides={"node/eht0": 1000}, mute=(MuteRule(host="node", interface="veth9*"),))
    app = _app(settings)
    advice = _advice(app, set())
    names = ["eth0", *(f"veth{i}" for i in range(600))]
    for t in range(1, 20):
        app.updates["node"] = _update("node", float(t), names, 1e5 + t)  # new views, the same names
        advice._warn_config()
    assert advice.config_checks == 1
    assert app.shown == [
        "speed: node/eht0 matches no interface of node (eth0, veth0, veth1, veth10, veth100, "
        "veth101, veth102, veth103, veth104, veth105, veth106, veth107 and 589 more)"
    ]
    app.updates["node"] = _update("node", 20.0, ["eht0", *names[1:]], 0.0)  # renamed: the key matches now
    advice._warn_config()
    assert advice.config_checks == 2
    assert advice._unmatched(set()) == []


def test_the_kept_answer_is_that_of_checking_afresh():
    """Random constructed streams: hosts come and go, connect again, their interfaces change
    name, the settings and what the ssh config knows change; each answer is unmatched_keys'
    afresh."""
    rng = random.Random(34)
    base = Settings(hosts=(HostSpec("a", address="a.invalid"),))
    choices = [
        base,
        replace(base, speed_overrides={"a/eth1": 100, "b/eth0": 1000, "z/eth0": 10}),
        replace(base, mute=(MuteRule(host="b", interface="eth2"), MuteRule(host="q*"), MuteRule(interface="veth*"))),
        replace(base, speed_overrides={"c/eth3": 100}, mute=(MuteRule(host="c", interface="eth[01]"),)),
    ]
    app = _app(base)
    known: set[str] = set()
    advice = _advice(app, known)
    t = 0.0
    for step in range(2000):
        t += 1.0
        odd = rng.random()
        if odd < 0.05:
            app.settings = rng.choice(choices)
        elif odd < 0.08:
            known = rng.choice((set(), {"z"}, {"z", "q1"}))
        elif odd < 0.12:
            app.updates.pop(rng.choice("abc"), None)
        host = rng.choice("abc")
        names = [n for n in ("eth0", "eth1", "eth2", "eth3", "veth0") if rng.random() < 0.7]
        if host in app.updates and rng.random() < 0.8:
            names = [v.iface.name for v in app.updates[host].interfaces]  # the same names, other numbers
        if rng.random() < 0.1:  # connecting again: no interfaces to say
            app.updates[host] = HostUpdate(host=host, os="linux", state=HostState.CONNECTING, time=t)
        else:
            app.updates[host] = _update(host, t, names, rng.random())
        assert advice._unmatched(known) == unmatched_keys(app.settings, app.updates.values(), known.__contains__), step
    assert advice.config_checks < 2000 / 2


def test_no_key_reads_no_interface_names():
    updates = [_update(h, 1.0, ["eth0", "eth1"], 0.0) for h in ("a", "b")]
    asked: set[str] = set()
    assert unmatched_keys(Settings(), updates, asked=asked) == [] and asked == set()
    unmatched_keys(Settings(speed_overrides={"b/eth9": 10}), updates, asked=asked)
    assert asked == {"b"}
