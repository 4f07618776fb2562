"""A changed host key for a host linkdeck no longer has among its hosts: the modal and the
save both say so and what to do (they said "'NoneType' object has no attribute 'address'")."""

from linkdeck.core.model import HostDetail, HostState, HostUpdate
from linkdeck.settings.config import Settings
from linkdeck.ui.screens.hostkey_screen import NOT_CONFIGURED, _trust_answered, _trust_target


class _Gone:
    """The two things these functions ask of the app: the host's spec (gone) and the settings."""

    settings = Settings()

    def __init__(self) -> None:
        self.notes: list[str] = []

    def spec(self, name: str) -> None:
        return None

    def notify(self, message: str, **_kw: object) -> None:
        self.notes.append(message)


UPDATE = HostUpdate(
    host="gone", os=None, state=HostState.HOST_KEY_CHANGED, detail=HostDetail(key_type="ssh-ed25519", key_b64="AAAA")
)


def test_the_modal_names_why_the_key_cannot_be_saved() -> None:
    assert _trust_target(_Gone(), UPDATE) == f"? ({NOT_CONFIGURED})"


def test_trusting_it_says_so_and_saves_nothing() -> None:
    app = _Gone()
    _trust_answered(app, UPDATE, True)
    assert app.notes == [f"Could not save gone's key: {NOT_CONFIGURED}"]
