"""After every other test (``after_all``, see conftest.py): no process outlived a lab namespace
this run deleted — in particular no per-connection ``sshd: root@notty`` session (issue 9.14)."""

import pytest

from tests.lab import netns


@pytest.mark.lab
@pytest.mark.after_all
def test_no_process_outlives_its_lab_namespace(require_root) -> None:
    if not netns._MADE:
        pytest.skip("no lab namespace was made in this run")
    assert netns.leftovers() == []
