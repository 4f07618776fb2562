"""Every JSON a command prints has its schema in docs/schema/ and validates against it: the
outputs here are real (linkdeck run on this machine, over real captures; the test, matrix,
diagnosis and flows documents from real iperf3 and ss captures judged against constructed
ends, as their own tests build them; the path MTU documents from the lab's figures over
constructed ends, and the every-address run from constructed results, through the real writers).
A command's lab tests produce more of the same (the lab runs of `mtu` and of `test --address`
repeated are validated against these schemas too)."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path

import jsonschema
import pytest

from linkdeck.commands.shared import SCHEMA_VERSION, print_json
from linkdeck.present.diagnose_page import diagnosis_json, rank
from linkdeck.present.flow_words import report_json
from linkdeck.present.outcome import mtu_json
from linkdeck.probe import Matrix, matrix_json, outcome_json
from linkdeck.probe.every_address import addresses_json
from tests.builders import clean_gigabit
from tests.cli import linkdeck
from tests.corpus import fixture

ROOT = Path(__file__).resolve().parents[1]
SCHEMAS = ROOT / "docs" / "schema"


def valid(name: str, document: dict) -> None:
    schema = json.loads((SCHEMAS / f"{name}.schema.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.validate(document, schema, cls=jsonschema.Draft202012Validator)
    assert document["schema_version"] == SCHEMA_VERSION


def printed(document: dict) -> dict:
    import io

    out = io.StringIO()
    print_json(document, out)
    return json.loads(out.getvalue())


def test_snapshot_of_this_machine():
    out = linkdeck("snapshot", "--json", "--no-local", "local")
    assert out.returncode in (0, 1), out.stderr
    doc = json.loads(out.stdout)
    assert list(doc)[0] == "schema_version" and doc["hosts"]
    valid("snapshot", doc)


# Each object a field registry (linkdeck.core.jsonfields) writes: its schema file, where in it
# the object's schema is, and the registry ("module:NAME", called when it is a function).
REGISTERED = [
    ("snapshot", "properties/hosts/items/properties/interfaces/items", "linkdeck.core.cells:json_fields"),
    ("snapshot", "", "linkdeck.commands.snapshot_format:snapshot_fields"),
    ("flows", "", "linkdeck.present.flow_words:REPORT_JSON"),
    ("mtu", "", "linkdeck.present.outcome:MTU_JSON"),
    ("test", "", "linkdeck.probe.pairs:TEST_JSON"),
    ("matrix", "", "linkdeck.probe.pairs:MATRIX_JSON"),
    ("test-all-addresses", "", "linkdeck.probe.every_address:ADDRESSES_JSON"),
    ("parse", "properties/interfaces/items", "linkdeck.commands.parse:RECORD_JSON"),
    ("parse", "properties/flows/items", "linkdeck.core.tcpflow:FLOW_RECORD_JSON"),
    ("parse", "properties/tcp", "linkdeck.core.tcpstats:TCP_COUNTERS_JSON"),
    ("diagnose", "", "linkdeck.present.diagnose_page:DIAGNOSE_JSON"),
    ("hosts", "properties/hosts/items/oneOf/0", "linkdeck.transport.ssh_describe:RESOLVED_JSON"),
    ("hosts", "properties/hosts/items/oneOf/1", "linkdeck.transport.ssh_describe:UNRESOLVED_JSON"),
    ("hosts", "properties/hosts/items/oneOf/2", "linkdeck.transport.ssh_describe:LOCAL_JSON"),
]
_DECLARED = ("properties", "required", "additionalProperties")


def _registry_schema(where: str) -> dict:
    from importlib import import_module

    from linkdeck.core.jsonfields import schema

    module, name = where.split(":")
    fields = getattr(import_module(module), name)
    got = schema(fields() if callable(fields) else fields)
    return {k: got[k] for k in _DECLARED}


def _node(document: dict, path: str) -> dict:
    for step in filter(None, path.split("/")):
        document = document[int(step)] if isinstance(document, list) else document[step]
    return document


def _declared(node: dict, top: bool) -> dict:
    """What of a schema's object the registry makes: for a whole document, all but its
    schema_version (which print_json puts first)."""
    got = {k: node.get(k) for k in _DECLARED}
    if top:
        got["properties"] = {k: v for k, v in got["properties"].items() if k != "schema_version"}
        got["required"] = [k for k in got["required"] if k != "schema_version"]
    return got


@pytest.mark.parametrize("name, path, registry", REGISTERED)
def test_each_schema_is_its_registrys(name, path, registry):
    """An object's keys, types and meanings in docs/schema/ are its field registry's: a key
    added to the registry without its schema fails here. ``LINKDECK_SCHEMA_UPDATE=1`` writes
    the registry's into the file."""
    file = SCHEMAS / f"{name}.schema.json"
    document = json.loads(file.read_text())
    node, want = _node(document, path), _registry_schema(registry)
    if os.environ.get("LINKDECK_SCHEMA_UPDATE"):
        if not path:
            version = document["properties"]["schema_version"]
            want = dict(want, properties={"schema_version": version, **want["properties"]})
            want["required"] = ["schema_version", *want["required"]]
        node.update(want)
        file.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
        return
    assert _declared(node, not path) == want, (
        f"docs/schema/{name}.schema.json at {path or 'the top'} is not what {registry} declares: put "
        f"linkdeck.core.jsonfields.schema({registry.split(':')[1]}) there (LINKDECK_SCHEMA_UPDATE=1 does), "
        "schema_version first at the top"
    )


def test_hosts_through_an_ssh_config(tmp_path):
    config = tmp_path / "ssh_config"
    config.write_text("Host lab-z\n    HostName 198.18.77.99\n    User admin\n")
    out = linkdeck("hosts", "--ssh-config", str(config), "lab-z", "local", "--json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert [h["name"] for h in doc["hosts"]] == ["lab-z", "local"] and doc["hosts"][0]["hostname"] == "198.18.77.99"
    valid("hosts", doc)


def test_a_connections_keys_are_all_of_its_record():
    """parse printed a FlowRecord whole (dataclasses.asdict): a field added to it is declared too."""
    from dataclasses import fields

    from linkdeck.core.tcpflow import FLOW_RECORD_JSON, FlowRecord

    assert [f.key for f in FLOW_RECORD_JSON] == [f.name for f in fields(FlowRecord)]


@pytest.mark.parametrize(
    "command, capture",
    [
        ("ip -j addr", "linux/captured-ip-j-addr.txt"),
        ("ip -s -j link", "linux/captured-ip-s-j-link.txt"),
        ("ethtool -i eth0", "linux/ethtool-i__lolyu-aoi-tg3-debian11.txt"),
        ("cat /proc/net/snmp", "linux/tcp/proc-net-snmp__sysstat-tests-root1.txt"),
        ("ss -tin", "ss/ss-tin__mouse-elephant-jumbo-cubic-iperf.txt"),
        ("iperf3 -J", "iperf3/captured-bidir.json"),
    ],
)
def test_parse_of_real_captures(tmp_path, command, capture):
    path = tmp_path / "out.txt"
    path.write_text(fixture(capture))
    out = linkdeck("parse", "--os", "linux", "--command", command, str(path), "--json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc.get("interfaces") or doc.get("flows") or doc.get("tcp") or doc.get("iperf3")
    valid("parse", doc)


def test_a_test_and_a_matrix_of_it():
    from tests.ui.test_result_panels_ui import degraded_outcome

    outcome = degraded_outcome()
    valid("test", printed(outcome_json(outcome)))
    valid("matrix", printed(matrix_json(Matrix(["web1", "nas01"], {("web1", "nas01"): outcome}))))


@pytest.mark.parametrize("forward", [940e6, 94e6])
def test_a_diagnosis_clean_and_bottlenecked(forward):
    from tests.unit.findings.test_diagnose_rank import PATH_1500, diagnosis, gig_ends, outcome

    d = diagnosis(outcome(clean_gigabit(forward_bps=forward, reverse_bps=forward, path_mtu=PATH_1500), gig_ends()))
    valid("diagnose", printed(diagnosis_json(d, rank(d))))


def test_flows_of_a_real_capture():
    from tests.ui.test_flows_width_ui import a_round

    valid("flows", printed(report_json(a_round())))


def test_a_test_through_every_address():
    from tests.unit.probe.test_every_address import seed_run

    doc = printed(addresses_json(seed_run()))
    assert [r["interface"] for r in doc["results"]] == ["aggr0", "admin1"] and doc["causes"]
    valid("test-all-addresses", doc)


@pytest.mark.parametrize(
    "forward, reverse, src_mtu, dst_mtu, note, causes",
    [
        (1400, 1404, 1400, 1500, None, []),
        (1500, 1500, 9000, 9000, None, ["PATH_MTU"]),
        (1500, None, 9000, None, "lab-b has no ping with don't-fragment", []),
    ],
)
def test_a_path_mtu_probed_both_ways_and_one(forward, reverse, src_mtu, dst_mtu, note, causes):
    from linkdeck.core.model import PathMtu
    from tests.unit.test_present_mtu import outcome

    probed = replace(
        outcome(forward, reverse, src_mtu, dst_mtu), path=PathMtu(forward, reverse, src_mtu, dst_mtu, note)
    )
    doc = printed(mtu_json(probed))
    assert (doc["path_mtu"]["forward"], doc["mtu"]["src"]) == (forward, src_mtu)
    assert [c["code"] for c in doc["causes"]] == causes
    valid("mtu", doc)


def test_a_path_mtu_that_could_not_be_probed():
    from linkdeck.core.model import EndState
    from linkdeck.probe.session import MtuOutcome

    # as TestSession.path_mtu returns it when an end is not reachable, no --address given
    failed = MtuOutcome("lab-a", "lab-b", "", None, EndState("lab-a"), EndState("lab-b"), "lab-b: unreachable")
    doc = printed(mtu_json(failed))
    assert doc["path_mtu"] == {"forward": None, "reverse": None} and doc["error"] == "lab-b: unreachable"
    assert doc["address"] is None  # no address was chosen: unknown is null, as everywhere in linkdeck's JSON
    valid("mtu", doc)


def test_a_schema_refuses_what_it_does_not_describe():
    schema = json.loads((SCHEMAS / "snapshot.schema.json").read_text())
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"schema_version": SCHEMA_VERSION, "hosts": "not a list"}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate({"schema_version": 2, "hosts": []}, schema)


def test_the_mtu_and_every_address_schemas_refuse_what_they_do_not_describe():
    from tests.unit.probe.test_every_address import seed_run

    mtu = json.loads((SCHEMAS / "mtu.schema.json").read_text())
    good = {"schema_version": SCHEMA_VERSION, "src": "a", "dst": "b", "address": "198.18.77.22", "causes": []}
    with pytest.raises(jsonschema.ValidationError):  # a figure as a string
        jsonschema.validate(
            {**good, "path_mtu": {"forward": "1500", "reverse": None}, "mtu": {"src": 1500, "dst": None}}, mtu
        )
    every = json.loads((SCHEMAS / "test-all-addresses.schema.json").read_text())
    doc = printed(addresses_json(seed_run()))
    del doc["results"][0]["interface"]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(doc, every)


def test_every_command_that_prints_json_has_a_schema():
    commands = {
        p.stem
        for p in (ROOT / "src" / "linkdeck" / "commands").glob("*.py")
        if "print_json(" in p.read_text() and p.stem != "shared"
    }
    assert commands and commands <= {p.name.split(".")[0] for p in SCHEMAS.glob("*.schema.json")}
