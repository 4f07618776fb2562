"""Only ui/ may import textual or rich, so the data layer runs headless and stays testable."""

import ast
import importlib
import inspect
import pkgutil
import re
import subprocess
import sys
from pathlib import Path
from typing import Iterable, Protocol

SRC = Path(__file__).resolve().parents[1] / "src" / "linkdeck"
UI_ONLY = ("textual", "rich")


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), str(path))
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def test_nothing_outside_ui_imports_textual_or_rich():
    offenders = []
    files = [p for p in SRC.rglob("*.py") if "ui" not in p.relative_to(SRC).parts]
    assert len(files) > 10  # the walk really found the package
    for path in files:
        bad = _imports(path) & set(UI_ONLY)
        if bad:
            offenders.append(f"{path.relative_to(SRC)}: {', '.join(sorted(bad))}")
    assert offenders == []


def test_only_fleetstate_controls_the_collector_and_the_heap():
    """The cyclic collector and glibc's heap are steered in one place, core/fleetstate.py: a
    module elsewhere that pauses or runs collections, or calls into libc, goes around the
    seam the fleet-sized passes share (overlapping pauses are counted there)."""
    files = [p for p in SRC.rglob("*.py") if p.relative_to(SRC).as_posix() != "core/fleetstate.py"]
    assert len(files) > 10
    offenders = [str(p.relative_to(SRC)) for p in files if _imports(p) & {"gc", "ctypes"}]
    assert offenders == []


def loaded(modules: str, packages: set[str]) -> list[str]:
    """Which of ``packages`` a fresh interpreter holds after importing ``modules``."""
    tops = "{m.split('.')[0] for m in sys.modules}"
    code = f"import sys, {modules}; print(sorted({tops}.intersection({sorted(packages)!r})))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return ast.literal_eval(out.stdout.strip())


def test_headless_commands_do_not_load_textual():
    modules = "linkdeck.cli, linkdeck.fleet.collector, linkdeck.commands.snapshot, linkdeck.commands.snapshot_format"
    assert loaded(modules, set(UI_ONLY)) == []


def test_paramiko_loads_only_for_a_host_watched_over_it():
    """The dashboard, the collector and the OpenSSH transport load no paramiko (nor the
    cryptography under it, about a third of the dashboard's memory at start): a user whose
    hosts are all reached with their own ssh client never pays for it."""
    modules = (
        "linkdeck.cli, linkdeck.ui.app, linkdeck.fleet.collector, linkdeck.platforms.detect, "
        "linkdeck.transport.openssh, linkdeck.transport.ssh_config, linkdeck.transport.choice"
    )
    assert loaded(modules, {"paramiko", "cryptography", "nacl", "bcrypt"}) == []
    assert loaded("linkdeck.transport.ssh", {"paramiko"}) == ["paramiko"]  # the check above would see it


# Layers, lowest first: a module may import its own layer and those below, never above. A new
# top-level module or package must be placed here (the test fails until it is), so the layering
# is decided once, when the module is made. ``cli`` (and ``__main__``) sit on top of everything.
LAYERS = (
    ("core", {"__init__", "core", "settings"}),
    ("parsers", {"parsers"}),
    ("transport", {"transport"}),
    ("platforms", {"platforms", "prometheus"}),
    ("domain", {"fleet", "findings", "verdict", "recording", "flows"}),
    ("probe", {"probe"}),
    ("present", {"present"}),
    ("commands", {"commands"}),
    ("ui", {"ui"}),
    ("entry", {"cli", "__main__"}),
)


def _layer_of(top: str) -> int:
    for rank, (_, members) in enumerate(LAYERS):
        if top in members:
            return rank
    raise AssertionError(f"linkdeck.{top} is in no layer: add it to LAYERS in {Path(__file__).name}")


def _linkdeck_imports(source: str, rel: tuple[str, ...]) -> set[str]:
    """Top-level linkdeck names (``model``, ``parsers`` …) that the module at ``rel`` (its path
    parts under src/linkdeck, without .py) imports."""
    package = rel[:-1]  # where relative imports start from
    tops = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                target = (*base, *(node.module.split(".") if node.module else ()))
            elif node.module and node.module.split(".")[0] == "linkdeck":
                target = tuple(node.module.split(".")[1:])
            else:
                continue
            if target:
                tops.add(target[0])
            else:  # `from linkdeck import x`: x is a module, or a name defined in __init__
                tops.update(a.name if _is_module(a.name) else "__init__" for a in node.names)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                parts = alias.name.split(".")
                if parts[0] == "linkdeck":
                    tops.add(parts[1] if len(parts) > 1 else "__init__")
    return tops


def _is_module(name: str) -> bool:
    return (SRC / f"{name}.py").exists() or (SRC / name).is_dir()


def test_no_import_reaches_a_higher_layer():
    offenders = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).with_suffix("").parts
        own = _layer_of(rel[0])
        for top in _linkdeck_imports(path.read_text(), rel) - {rel[0]}:
            if _layer_of(top) > own:
                offenders.append(
                    f"{path.relative_to(SRC)} imports linkdeck.{top} "
                    f"({LAYERS[_layer_of(top)][0]} is above {LAYERS[own][0]})"
                )
    assert offenders == []


def test_layer_check_sees_an_upward_import():
    """The walk above really resolves imports (a check that cannot fail is no check)."""
    source = (
        "from ..platforms import base\nfrom .. import cli, __version__\nfrom .errors import E\nimport linkdeck.ui.app\n"
    )
    tops = _linkdeck_imports(source, ("parsers", "ethtool"))
    assert tops == {"platforms", "cli", "__init__", "parsers", "ui"}
    assert [t for t in tops if _layer_of(t) > _layer_of("parsers")] != []


def test_every_test_file_the_code_names_exists():
    """A comment pointing at "the test that checks this" is a promise; a renamed or never
    written test breaks it silently."""
    root = SRC.parents[1]
    named = {
        (p.relative_to(SRC), m) for p in SRC.rglob("*.py") for m in re.findall(r"\btests/[\w/]+\.py\b", p.read_text())
    }
    assert len(named) > 3  # the scan really found references
    assert [f"{where}: {test}" for where, test in sorted(named) if not (root / test).exists()] == []


def _module_graph() -> dict[str, set[str]]:
    """Each linkdeck module's linkdeck imports, every kind: at the top, inside functions, and
    under TYPE_CHECKING (a cycle there is still two modules that cannot be read apart)."""
    modules = {}
    for path in SRC.rglob("*.py"):
        parts = path.relative_to(SRC).with_suffix("").parts
        modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
        deps: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            targets: list[list[str]] = []
            if isinstance(node, ast.ImportFrom):
                if node.level:
                    base = [p for p in package if p][: max(0, len([p for p in package if p]) - (node.level - 1))]
                    target = base + (node.module.split(".") if node.module else [])
                elif node.module and node.module.split(".")[0] == "linkdeck":
                    target = node.module.split(".")[1:]
                else:
                    continue
                # a name that is a module of the target is that module; any other is defined in the target
                targets = [target + [a.name] if ".".join(target + [a.name]) in modules else target for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [a.name.split(".")[1:] for a in node.names if a.name.split(".")[0] == "linkdeck"]
            for target in targets:
                while target and ".".join(target) not in modules:
                    target = target[:-1]
                dep = ".".join(target)
                if target and dep != name:
                    deps.add(dep)
        graph[name] = deps
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_no_two_modules_import_each_other_even_lazily():
    graph = _module_graph()
    assert len(graph) > 100 and "core.cells" in graph["ui.widgets.table"]  # the walk really resolved imports
    assert _cycles(graph) == []


def test_the_cycle_check_sees_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_no_two_modules_share_a_name_but_a_sub_command_s():
    """A module's name says what it holds, once: the same file name in two packages is allowed
    only where one of them is `commands/NAME.py`, the sub-command `linkdeck NAME` (its feature
    lives under the same name elsewhere: commands/mtu.py and the MTU rules in findings/mtu.py)."""
    homes: dict[str, list[str]] = {}
    for path in sorted(SRC.rglob("*.py")):
        if path.name not in ("__init__.py", "__main__.py"):
            homes.setdefault(path.stem, []).append(str(path.parent.relative_to(SRC)))
    repeated = {
        name: places
        for name, places in homes.items()
        if len(places) > 1 and not (len(places) == 2 and "commands" in places and _is_sub_command(name))
    }
    assert repeated == {}


def _is_sub_command(name: str) -> bool:
    from linkdeck import cli

    return name in cli.SUBCOMMANDS


def _mixed(classes: Iterable[type]) -> list[str]:
    """Classes that take one of linkdeck's classes as a base beside another base: a mixin. A
    Protocol that extends a Protocol declares what it reads and mixes nothing in."""
    return sorted(
        c.__qualname__
        for c in classes
        if len(c.__bases__) > 1
        and Protocol not in c.__bases__
        and any(b.__module__.split(".")[0] == "linkdeck" for b in c.__bases__)
    )


def _ui_classes() -> list[type]:
    import linkdeck.ui

    found: list[type] = []

    def walk(owner: object, module: str) -> None:
        for value in vars(owner).values():
            if inspect.isclass(value) and value.__module__ == module and value not in found:
                found.append(value)
                walk(value, module)  # the messages a screen declares inside it

    for info in pkgutil.walk_packages(linkdeck.ui.__path__, "linkdeck.ui."):
        walk(importlib.import_module(info.name), info.name)
    return found


def test_no_class_in_ui_is_a_mixin():
    """What screens or the app share is a function they call or an object they hold, never a
    class mixed in beside Textual's, where it would reach into fields another class declares."""
    classes = _ui_classes()
    assert len(classes) > 50 and any(c.__qualname__ == "TestScreen.Phase" for c in classes)  # the walk found them
    assert _mixed(classes) == []


def test_the_mixin_check_sees_a_mixin():
    from textual.app import App

    from linkdeck.ui.state.advice import Advised
    from linkdeck.ui.state.view_keys import ViewKeys

    class Constructed(ViewKeys, App):  # a constructed mixin, as the app once was
        pass

    assert _mixed([Constructed, Advised, App]) == ["test_the_mixin_check_sees_a_mixin.<locals>.Constructed"]
