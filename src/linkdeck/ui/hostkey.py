"""The modal that offers to trust an unknown host key (never a changed one)."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

from .rows import clean


class HostKeyScreen(ModalScreen[bool]):
    """Shows the SHA256 fingerprint; dismisses True only when the user chose to trust it."""

    BINDINGS = [
        Binding("y", "trust", "Trust", id="trust_key"),
        Binding("escape,n", "cancel", "Cancel", id="cancel_trust"),
    ]
    DEFAULT_CSS = """
    HostKeyScreen { align: center middle; }
    HostKeyScreen > Vertical { width: 100%; max-width: 84; height: auto; border: thick $warning; padding: 1 2; background: $surface; }
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
