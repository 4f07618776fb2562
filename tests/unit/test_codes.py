import copy
import json
import pickle

import pytest

from linkdeck.core.codes import Code
from linkdeck.core.levels import Severity
from linkdeck.core.model import Cause, Finding


@pytest.mark.parametrize("code", list(Code))
def test_a_code_prints_compares_and_dumps_as_its_name(code):
    name = code.name
    assert code.value == name and code == name and hash(code) == hash(name)
    assert str(code) == f"{code}" == "{}".format(code) == "%s" % code == name
    assert f"{code:<24}|" == f"{name:<24}|"
    assert Code.read(name) is code


def test_findings_and_causes_dump_their_code_as_its_name():
    finding = Finding(Code.NIC_DROPS, Severity.WARNING, "h", "eth0", "m", "e", "x")
    assert json.dumps(finding.as_dict()).startswith('{"code": "NIC_DROPS", ')
    assert json.loads(json.dumps(Cause(Code.SPEED_LOW, "m", "e").as_dict()))["code"] == "SPEED_LOW"


def test_a_code_this_version_does_not_know_is_kept_as_its_word():
    # a recording made by a newer linkdeck: its report still names the code
    unlisted = Code.read("FUTURE_CODE")
    assert isinstance(unlisted, Code) and unlisted not in list(Code)
    assert str(unlisted) == f"{unlisted}" == unlisted == "FUTURE_CODE"
    assert json.dumps({unlisted: unlisted}) == '{"FUTURE_CODE": "FUTURE_CODE"}'
    assert all(unlisted != code for code in Code)
    for again in (copy.copy(unlisted), copy.deepcopy(unlisted), pickle.loads(pickle.dumps(unlisted))):
        assert again == "FUTURE_CODE" and isinstance(again, Code)
    assert copy.deepcopy(Code.PATH_MTU) is Code.PATH_MTU and pickle.loads(pickle.dumps(Code.PATH_MTU)) is Code.PATH_MTU
    assert Code.read(7) == "7"  # a damaged entry reads as a word, not an exception
