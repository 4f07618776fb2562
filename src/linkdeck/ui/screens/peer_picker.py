"""The peer picker: which host to test against from an interface row (``t``, ``u``). The peers
sharing the interface's subnet come first, each with the address the test would use; a peer
reached at several addresses is offered once more as "all addresses". ``p`` chooses the
parallel streams each way (iperf3 -P) of the test."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.screen import ModalScreen
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from ...probe import pick_address
from ...probe.every_address import reachable_addresses
from ...probe.watched import view_of
from ..dashboard import Dashboard
from ..state.rows import clean
from .addresses_screen import ALL_ADDRESSES

Choice = tuple[str, str | None]  # (peer, the address to test at: None when none in this subnet)
STREAM_CHOICES = (1, 2, 4, 8)  # what ``p`` cycles through


def peer_choices(
    app: Dashboard, host: str, iface_name: str, peers: list[str]
) -> tuple[list[Choice], dict[str, list[str]]]:
    """The choices in the order shown, and each peer's addresses this host reaches."""
    src_view = view_of(app.updates.get(host), iface_name)
    choices: list[Choice] = []
    for peer in peers:
        address = pick_address(src_view.iface, app.updates.get(peer)) if src_view else None
        choices.append((peer, address))
    choices.sort(key=lambda c: c[1] is None)  # peers in this subnet first
    # A peer with several addresses this host reaches: each tested in turn, compared.
    every = {peer: reachable_addresses(app.updates.get(host), app.updates.get(peer)) for peer in peers}
    choices += [(peer, ALL_ADDRESSES) for peer in peers if len(every[peer]) > 1]
    return choices, every


class PeerScreen(ModalScreen[Choice | None]):
    """Choose the host to test against; the highlighted one shares the interface's subnet."""

    BINDINGS = [Binding("escape", "dismiss(None)", "Cancel"), Binding("p", "streams", "Streams (-P)")]
    DEFAULT_CSS = (
        "PeerScreen { align: center middle; } PeerScreen > OptionList { width: "
        "100%; max-width: 70; height: auto; max-height: 20; border: round $accent; }"
    )

    def __init__(
        self, host: str, iface: str, choices: list[Choice], title: str = "Test from", streams: int | None = None
    ) -> None:
        """``streams``: the parallel streams each way to start from (None: a choice that has
        none, as the path MTU probe)."""
        super().__init__()
        self.host, self.iface, self.choices, self.title_words = host, iface, choices, title
        self.streams = streams

    def compose(self) -> ComposeResult:
        options = [
            Option(Text.assemble((clean(peer), "bold"), f"   {_choice_text(addr)}"), id=str(i))
            for i, (peer, addr) in enumerate(self.choices)
        ]
        ol = OptionList(*options)
        ol.border_title = f"{self.title_words} {clean(self.host)} {clean(self.iface)} to…"
        self._show_streams(ol)
        yield ol

    def _show_streams(self, ol: OptionList) -> None:
        if self.streams is not None:
            each = "1 stream" if self.streams == 1 else f"{self.streams} streams"
            ol.border_subtitle = f"{each} each way (p: -P)"

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        return self.streams is not None if action == "streams" else True

    def action_streams(self) -> None:
        if self.streams is None:
            return
        later = [n for n in STREAM_CHOICES if n > self.streams]
        self.streams = later[0] if later else STREAM_CHOICES[0]
        self._show_streams(self.query_one(OptionList))

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self.choices[int(event.option.id or 0)])


def _choice_text(address: str | None) -> str:
    if address == ALL_ADDRESSES:
        return "all addresses: one test each, compared"
    return clean(address) if address else "(no address in this subnet)"
