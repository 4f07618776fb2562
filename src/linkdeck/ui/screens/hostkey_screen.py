"""The modal that offers to trust an unknown host key (never a changed one)."""

from __future__ import annotations

from functools import partial

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from ...core.model import HostState, HostUpdate
from ..dashboard import Dashboard
from ..state.rows import clean


class HostKeyScreen(ModalScreen[bool]):
    """Shows the SHA256 fingerprint; dismisses True only when the user chose to trust it."""

    BINDINGS = [
        Binding("y", "trust", "Trust", id="trust_key"),
        Binding("escape,n", "cancel", "Cancel", id="cancel_trust"),
    ]
    DEFAULT_CSS = """
    HostKeyScreen { align: center middle; }
    HostKeyScreen > Vertical {
        width: 100%; max-width: 84; height: auto; border: thick $warning; padding: 1 2; background: $surface;
    }
    HostKeyScreen Horizontal { height: auto; margin-top: 1; }
    HostKeyScreen Button { margin-right: 2; }
    """

    def __init__(self, host: str, fingerprint: str, key_type: str, known_hosts: str) -> None:
        super().__init__()
        self.host, self.fingerprint, self.key_type, self.known_hosts = host, fingerprint, key_type, known_hosts

    def compose(self) -> ComposeResult:
        text = Text()
        text.append("Unknown host key\n\n", style="bold")
        text.append("Host:        ")
        text.append(clean(self.host) + "\n", style="bold")
        text.append("Key type:    " + clean(self.key_type or "?") + "\n")
        text.append("Fingerprint: ")
        text.append(clean(self.fingerprint) + "\n\n", style="bold yellow")
        text.append(
            "Compare it with the host's own `ssh-keygen -lf /etc/ssh/ssh_host_*_key.pub` before "
            f"trusting it. Trusting adds the key to {clean(self.known_hosts)}."
        )
        with Vertical():
            yield Static(text, id="hostkey-text")
            with Horizontal():
                yield Button("Trust and save (y)", variant="warning", id="trust")
                yield Button("Cancel (Esc)", id="cancel")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "trust")

    def action_trust(self) -> None:
        self.dismiss(True)

    def action_cancel(self) -> None:
        self.dismiss(False)


def offer_trust(app: Dashboard, update: HostUpdate) -> None:
    """A host row with a key problem was opened: offer to trust an unknown key; a changed key
    is only explained, never trusted from here."""
    if update.state is HostState.HOST_KEY_UNKNOWN:
        detail = update.detail
        app.push_screen(
            HostKeyScreen(update.host, detail.fingerprint or "?", detail.key_type or "", _trust_target(app, update)),
            partial(_trust_answered, app, update),
        )
    else:
        app.notify(
            f"{clean(update.host)}: the host key CHANGED and will not be trusted from here. "
            "Check the host; if the change is expected, remove the old key with `ssh-keygen -R`.",
            severity="error",
            markup=False,
        )


NOT_CONFIGURED = "linkdeck no longer has this host among its hosts: add it again, then trust its key"


def _trust_target(app: Dashboard, update: HostUpdate) -> str:
    """The known_hosts file the key would go to (shown in the modal before saving)."""
    from ...transport.known_hosts import trust_target

    spec = app.spec(update.host)
    if spec is None:
        return f"? ({NOT_CONFIGURED})"
    detail = update.detail
    try:
        return trust_target(spec, app.settings, detail.key_type or "", detail.key_b64 or "", detail.hop)[0]
    except Exception as exc:  # an unreadable ssh config: say so in the modal, save nothing
        return f"? ({exc})"


def _trust_answered(app: Dashboard, update: HostUpdate, trusted: bool | None) -> None:
    if not trusted:
        return
    from ...transport.known_hosts import trust_host

    spec = app.spec(update.host)
    if spec is None:
        app.notify(f"Could not save {clean(update.host)}'s key: {NOT_CONFIGURED}", severity="error", markup=False)
        return
    detail = update.detail
    try:
        path, _name = trust_host(spec, app.settings, detail.key_type or "", detail.key_b64 or "", detail.hop)
    except Exception as exc:
        app.notify(f"Could not save {clean(update.host)}'s key: {exc}", severity="error", markup=False)
        return
    app.notify(f"Trusted {clean(update.host)}'s key (saved to {path}); connecting.", markup=False)
    if app.fleet is not None:
        app.fleet.restart(update.host)
