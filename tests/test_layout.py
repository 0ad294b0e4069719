"""The layout holds what the design says (docs/design.md, "The layout"): data flows one way, sources -> ingest ->
store <- search <- memory (the facade) <- recall <- daemon; no import circle, deferred and type-only imports
included; nothing outside the store package names a store kind; the client distribution imports nothing of the
daemon's; and a module grows past MAX_LINES only with a reviewed allowance that says why it holds together."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ROOTS = {"memoryd": REPO / "memoryd", "memoryd_client": REPO / "client" / "memoryd_client"}
MAX_LINES = 400
# module -> (its limit, why it is one module): raise a limit only in review, with the reason beside it
ALLOWANCE: dict[str, tuple[int, str]] = {}
STORE_LIBRARIES = ("apsw", "psycopg", "sqlite_vec", "pgvector")
# where the choice of store is made or configured: the package itself, and the settings that name a store
MAY_NAME_STORE_KINDS = ("memoryd.store", "memoryd.config", "memoryd.settings", "memoryd.postgres_urls")


@cache
def _files() -> dict[str, Path]:
    found = {}
    for top, root in ROOTS.items():
        for path in root.rglob("*.py"):
            parts = path.relative_to(root).with_suffix("").parts
            parts = parts[:-1] if parts[-1] == "__init__" else parts
            found[".".join((top, *parts))] = path
    return found


@cache
def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text())


def _imported(path: Path) -> set[str]:
    """Every module imported anywhere in the module: at the top, inside functions, under `if TYPE_CHECKING:`.
    `from package import module` imports the module (the package's __init__ runs for any of its modules)."""
    found: set[str] = set()
    for node in ast.walk(_tree(path)):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                inner = f"{node.module}.{alias.name}"
                found.add(inner if inner in _files() else node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def _graph() -> dict[str, set[str]]:
    modules = _files()
    return {name: {m for m in _imported(path) if m in modules and m != name} for name, path in modules.items()}


def _within(module: str, *packages: str) -> bool:
    return any(module == p or module.startswith(p + ".") for p in packages)


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


def test_the_layout_test_sees_deferred_and_type_only_imports(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        "TYPE_CHECKING = False\nif TYPE_CHECKING:\n    from memoryd.memory import AgentMemory\n"
        "def f():\n    import memoryd.daemon.runtime\n"
    )
    assert {"memoryd.memory", "memoryd.daemon.runtime"} <= _imported(module)


# each stage may import the stages before it, never those after (memoryd.config, settings, durable, threads and the
# embeddings are shared by all)
LATER = {
    "memoryd.sources": ("memoryd.ingest", "memoryd.store", "memoryd.search", "memoryd.recall", "memoryd.daemon"),
    "memoryd.store": ("memoryd.sources", "memoryd.ingest", "memoryd.search", "memoryd.recall", "memoryd.daemon"),
    "memoryd.ingest": ("memoryd.search", "memoryd.recall", "memoryd.daemon", "memoryd.memory"),
    "memoryd.search": ("memoryd.ingest", "memoryd.recall", "memoryd.daemon", "memoryd.memory"),
    "memoryd.memory": ("memoryd.recall", "memoryd.daemon"),
    "memoryd.curation": ("memoryd.memory", "memoryd.recall", "memoryd.daemon"),
    "memoryd.recall": ("memoryd.ingest", "memoryd.daemon"),
    "memoryd.config": ("memoryd.daemon", "memoryd.memory", "memoryd.store", "memoryd.ingest", "memoryd.search"),
    "memoryd.settings": ("memoryd.daemon", "memoryd.memory", "memoryd.store", "memoryd.ingest", "memoryd.search"),
}


def test_data_flows_one_way() -> None:
    for name, imported in _graph().items():
        for stage, later in LATER.items():
            if _within(name, stage):
                wrong = sorted(m for m in imported if _within(m, *later))
                assert not wrong, f"{name} imports {wrong}, which come after {stage}"


def test_the_client_imports_nothing_of_the_daemon() -> None:
    for name, path in _files().items():
        if _within(name, "memoryd_client"):
            wrong = sorted(m for m in _imported(path) if _within(m, "memoryd"))
            assert not wrong, f"{name} imports {wrong}"


def test_nothing_outside_the_store_names_a_store_kind() -> None:
    for name, path in _files().items():
        if _within(name, *MAY_NAME_STORE_KINDS):
            continue
        imported = _imported(path)
        kinds = sorted(
            m for m in imported if _within(m, "memoryd.store.sqlite", "memoryd.store.postgres", *STORE_LIBRARIES)
        )
        assert not kinds, f"{name} imports {kinds}: ask memoryd.store.backend instead"
        postgres = [
            node.lineno for node in ast.walk(_tree(path)) if isinstance(node, ast.Attribute) and node.attr == "postgres"
        ]
        assert not postgres, f"{name} branches on agent.postgres (lines {postgres}): ask the backend"


def test_modules_stay_cohesive() -> None:
    long = {}
    for name, path in _files().items():
        limit = ALLOWANCE.get(name, (MAX_LINES, ""))[0]
        if (lines := len(path.read_text().splitlines())) > limit:
            long[name] = lines
    assert not long, f"over their limit: {long}; find the seam, or argue an allowance in review"
    unused = {name for name, (limit, _) in ALLOWANCE.items() if name not in _files() or limit <= MAX_LINES}
    assert not unused, f"allowances for modules that no longer need one: {unused}"
