"""The layout holds what the design says: no import circle, the store behind its interface imports nothing from
sources/, config nothing from the clients, the clients none of the daemon's parts, and no module over 400 lines."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1] / "memoryd"
MAX_LINES = 400


def _module(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """memoryd modules imported at module level (not inside functions or `if TYPE_CHECKING:`)."""
    tree = ast.parse(path.read_text())
    found: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("memoryd"):
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name.startswith("memoryd"))
    return found


def _graph() -> dict[str, set[str]]:
    modules = {_module(p): p for p in ROOT.rglob("*.py")}
    return {name: {m for m in _imports(path) if m in modules and m != name} for name, path in modules.items()}


def test_no_import_circle() -> None:
    graph = _graph()
    state: dict[str, int] = {}

    def visit(node: str, trail: list[str]) -> None:
        state[node] = 1
        for nxt in sorted(graph[node]):
            if state.get(nxt) == 1:
                raise AssertionError("import circle: " + " -> ".join([*trail[trail.index(nxt) :], nxt]))
            if nxt not in state:
                visit(nxt, [*trail, nxt])
        state[node] = 2

    for name in sorted(graph):
        if name not in state:
            visit(name, [name])


def test_parts_import_only_what_they_may() -> None:
    graph = _graph()
    for name, imported in graph.items():
        if name.startswith("memoryd.index.sqlite") or name in ("memoryd.index.interface", "memoryd.index.rows"):
            assert not any(m.startswith("memoryd.sources") for m in imported), (name, imported)
        if name in ("memoryd.config", "memoryd.settings"):
            assert not any(m.startswith("memoryd.client") for m in imported), (name, imported)
        if name.startswith(("memoryd.client", "memoryd.protocol")):
            allowed = ("memoryd.client", "memoryd.protocol")
            assert all(m.startswith(allowed) for m in imported), (name, imported)


def test_no_module_over_400_lines() -> None:
    long = {
        str(p.relative_to(ROOT)): n for p in ROOT.rglob("*.py") if (n := len(p.read_text().splitlines())) > MAX_LINES
    }
    assert not long, long
