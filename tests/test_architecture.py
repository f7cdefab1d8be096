"""Which way the engine's imports may point: the layering of the architecture review (table 2.3), checked.

Every import of every module under engine/ is read from its syntax tree: top-level ones, those under
`if TYPE_CHECKING:` (the review found the cycles hiding there, and table 2.3 forbids even those) and those
inside functions. Each engine module belongs to one group of one layer (LAYERS); an import may point to its
own group or down, never up or sideways, except between the pure modules of layer 0; FORBIDDEN and ONLY add
the table's "must not import" entries that point down. The engine never imports the web layer.
"""
from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# group: (layer, module prefixes). A module belongs to the group with its longest matching prefix.
LAYERS: dict[str, tuple[float, tuple[str, ...]]] = {
    "sim": (0, ("engine.sim",)),
    "common": (0, ("engine.common", "engine.topic_pattern")),   # topic_pattern: a pure matcher for names
    "events": (0, ("engine.events",)),
    "protocol": (0, ("engine.protocol",)),
    "groups.pure": (0, ("engine.groups.protocol", "engine.groups.kafka_types", "engine.groups.offsets_topic",
                        "engine.groups.consumer_protocol", "engine.groups.coordinator_partition",
                        "engine.groups.assignors")),
    "storage": (1, ("engine.storage",)),
    "network": (1, ("engine.network",)),
    "metadata": (1, ("engine.metadata",)),
    "node": (2, ("engine.node",)),
    "raft": (2, ("engine.raft",)),   # KRaft's consensus layer (KIP-595): storage, sim, events; below the controller
    "replication": (3, ("engine.replication",)),
    # KRaft's quorum controller: above replication, whose pure rules it reuses (reassignment steps,
    # preferred leaders), below the broker that hosts it in combined mode.
    "controller": (3.5, ("engine.controller",)),
    "groups.broker": (3, ("engine.groups.coordinator", "engine.groups.group")),
    "broker": (4, ("engine.broker",)),
    "clients": (4, ("engine.clients", "engine.produced_log")),     # produced_log: what a producer sent
    "facade": (5, ("engine.config", "engine.cluster")),
    "apps": (6, ("engine.inspect", "engine.scenarios", "engine.persistence", "engine.read_api",
                 "engine.read_api_server", "engine.cli", "engine.cli_groups", "engine.cli_quorum", "engine.jepsen",
                 "engine.bench",
                 "engine.tools", "engine.checkpoint", "engine.graph_pickle",
                 "engine.timers")),   # timers reads the whole cluster's queue, as inspect/ reads its state
}
# Table 2.3's "must not import, even under TYPE_CHECKING" entries that point down a layer.
FORBIDDEN: dict[str, frozenset[str]] = {
    "replication": frozenset({"groups.pure"}),
    "clients": frozenset({"replication", "groups.broker", "metadata"}),
}
# Groups whose "may import" list is shorter than "anything below".
ONLY: dict[str, frozenset[str]] = {
    "storage": frozenset({"common"}),
}
WEB_LAYER = ("django", "channels", "asgiref", "lab", "classroom", "lessons", "spark_exercises")


@dataclass(frozen=True)
class Import:
    source: str          # the importing module, "engine.storage.log"
    target: str          # the imported module (or, for `from m import name`, m.name when that is a module)
    where: str           # path:line
    how: str             # "top level", "TYPE_CHECKING" or "in a function"


# Packages whose own __init__ sits apart from their modules' groups (matched exactly, not as prefixes).
PACKAGES = {"engine": "apps",              # `from engine import Cluster`
            "engine.groups": "groups.pure"}   # a docstring: the package holds both kinds


def group_of(module: str) -> str | None:
    if module in PACKAGES:
        return PACKAGES[module]
    best, best_length = None, -1
    for group, (_, prefixes) in LAYERS.items():
        for prefix in prefixes:
            if (module == prefix or module.startswith(prefix + ".")) and len(prefix) > best_length:
                best, best_length = group, len(prefix)
    return best


def violation(edge: Import) -> str | None:
    """Why this import breaks the layering, or None if it may be."""
    if edge.target.split(".")[0] in WEB_LAYER:
        return f"{edge.where}: {edge.source} imports {edge.target}: the engine never imports the web layer"
    if not edge.target.startswith("engine.") and edge.target != "engine":
        return None   # the standard library and third-party packages
    source, target = group_of(edge.source), group_of(edge.target)
    if source is None or target is None:
        return f"{edge.where}: {edge.source if source is None else edge.target} has no layer in LAYERS"
    if source == target:
        return None
    (source_level, _), (target_level, _) = LAYERS[source], LAYERS[target]
    if target_level > source_level or (target_level == source_level and source_level > 0):
        why = "up" if target_level > source_level else "sideways"
    elif target in FORBIDDEN.get(source, ()) or (source in ONLY and target not in ONLY[source]):
        why = "to a group table 2.3 forbids"
    else:
        return None
    return (f"{edge.where}: {edge.source} ({source}, L{source_level}) imports {edge.target} "
            f"({target}, L{target_level}) {edge.how}: {why}")


# -- reading the imports ---------------------------------------------------------------------------
def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports_of(path: Path, root: Path) -> Iterator[Import]:
    source = module_name(path, root)
    package = source if path.name == "__init__.py" else source.rpartition(".")[0]
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    for node, how in _walk(tree, "top level"):
        where = f"{path.relative_to(root)}:{node.lineno}"
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(source, alias.name, where, how)
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(node, package)
            for alias in node.names:
                candidate = f"{base}.{alias.name}"
                target = candidate if _is_module(candidate, root) else base
                yield Import(source, target, where, how)


def _walk(node: ast.AST, how: str) -> Iterator[tuple[ast.AST, str]]:
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.Import, ast.ImportFrom)):
            yield child, how
            continue
        inner = how
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            inner = "in a function"
        elif isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
            inner = "TYPE_CHECKING"
        yield from _walk(child, inner)


def _absolute(node: ast.ImportFrom, package: str) -> str:
    if not node.level:
        return node.module or ""
    parts = package.split(".")
    base = ".".join(parts[:len(parts) - node.level + 1])
    return f"{base}.{node.module}" if node.module else base


def _is_module(name: str, root: Path) -> bool:
    path = root.joinpath(*name.split("."))
    return path.with_suffix(".py").exists() or (path / "__init__.py").exists()


def engine_imports(root: Path) -> list[Import]:
    return [edge for path in sorted((root / "engine").rglob("*.py")) for edge in imports_of(path, root)]


def violations(edges: Iterable[Import]) -> list[str]:
    return [found for found in map(violation, edges) if found]


# -- the engine as it stands -----------------------------------------------------------------------
def test_every_engine_import_points_down_the_layers() -> None:
    edges = engine_imports(ROOT)
    assert len(edges) > 300   # the reader found the engine's imports (it is not checking nothing)
    found = violations(edges)
    assert not found, f"{len(found)} imports break the layering:\n" + "\n".join(found)


def test_every_engine_module_has_a_layer() -> None:
    modules = {module_name(path, ROOT) for path in (ROOT / "engine").rglob("*.py")}
    assert not sorted(m for m in modules if group_of(m) is None)


# -- the checker itself, on imports made up for it ------------------------------------------------------------
def _edge(source: str, target: str, how: str = "top level") -> Import:
    return Import(source, target, "x.py:1", how)


def test_the_checker_refuses_an_upward_import_even_under_type_checking() -> None:
    assert violation(_edge("engine.clients.producer", "engine.cluster", "TYPE_CHECKING"))
    assert violation(_edge("engine.storage.log", "engine.broker.broker", "in a function"))
    assert violation(_edge("engine.replication.partition", "engine.cluster"))


def test_the_checker_refuses_sideways_and_forbidden_downward_imports() -> None:
    assert violation(_edge("engine.broker.broker", "engine.clients.producer"))       # L4 to L4
    assert violation(_edge("engine.replication.partition", "engine.groups.coordinator"))   # L3 to L3
    assert violation(_edge("engine.clients.consumer", "engine.replication.partition"))     # table 2.3
    assert violation(_edge("engine.clients.consumer", "engine.metadata.store"))
    assert violation(_edge("engine.storage.log", "engine.events"))                       # storage: common only
    assert violation(_edge("engine.network", "engine.storage.log"))


def test_the_checker_refuses_the_web_layer_anywhere_in_the_engine() -> None:
    assert violation(_edge("engine.storage.log", "django.conf"))
    assert violation(_edge("engine.sim.scheduler", "asgiref.sync", "in a function"))
    assert violation(_edge("engine.cluster", "lab.host"))


def test_the_checker_lets_the_allowed_directions_through() -> None:
    allowed = [("engine.cluster", "engine.broker.broker"), ("engine.clients.consumer", "engine.groups.assignors.range"),
               ("engine.broker.broker", "engine.replication.partition"), ("engine.storage.log", "engine.common.errors"),
               ("engine.protocol", "engine.common.errors"), ("engine.scenarios.runner", "engine.cluster"),
               ("engine.groups.coordinator", "engine.groups.offsets_topic"), ("engine.node", "engine.network"),
               ("engine.storage.log", "engine.storage.segment"), ("engine.sim.scheduler", "heapq")]
    assert violations(_edge(a, b) for a, b in allowed) == []


def test_the_reader_finds_imports_under_type_checking_and_in_functions(tmp_path: Path) -> None:
    package = tmp_path / "engine" / "storage"
    package.mkdir(parents=True)
    for folder in (tmp_path / "engine", package):
        (folder / "__init__.py").write_text("")
    (tmp_path / "engine" / "cluster.py").write_text("")
    (package / "log.py").write_text(
        "from __future__ import annotations\n"
        "from typing import TYPE_CHECKING\n"
        "from . import segment\n"
        "if TYPE_CHECKING:\n"
        "    from engine.cluster import Cluster\n"
        "def open_log():\n"
        "    import django\n")
    (package / "segment.py").write_text("")
    edges = engine_imports(tmp_path)
    assert {(e.target, e.how) for e in edges} >= {("engine.storage.segment", "top level"),
                                                   ("engine.cluster", "TYPE_CHECKING"), ("django", "in a function")}
    assert len(violations(edges)) == 2
