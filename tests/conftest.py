from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from memoryd.config import AgentConfig, EmbeddingConfig, QueryConfig, quickstart_agent
from memoryd.embeddings.hashing import HashingEmbedder
from memoryd.memory import AgentMemory


class CountingEmbedder(HashingEmbedder):
    """The hashing embedder, counting every text it is asked to embed."""

    def __init__(self, dims: int = 256) -> None:
        super().__init__(dims)
        self.calls: list[str] = []

    def embed_documents(self, texts: list[str], *, urgent: bool = False) -> np.ndarray:
        self.calls.extend(texts)
        return super().embed_documents(texts, urgent=urgent)


def python_for_anyone() -> str:
    """A Python another user may run (this venv's may sit under root's 0700 home): a probe needs stdlib only."""
    for candidate in ("/usr/bin/python3", "/usr/local/bin/python3", shutil.which("python3") or ""):
        if candidate and os.access(candidate, os.X_OK) and not candidate.startswith(str(Path.home())):
            return candidate
    pytest.fail("no Python outside root's home for the second user to run")


def run_as(uid: int, gid: int, command: list[str]) -> subprocess.CompletedProcess[str]:
    """`command` as another user (this one must be root), with no supplementary groups, from /."""
    return subprocess.run(
        command, user=uid, group=gid, extra_groups=[], capture_output=True, text=True, timeout=60, cwd="/"
    )


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    (ws / "memory").mkdir(parents=True)
    return ws


@pytest.fixture
def data_dir(tmp_path: Path) -> Path:
    return tmp_path / "data"


@pytest.fixture
def agent_factory(workspace: Path, data_dir: Path) -> Callable[..., AgentConfig]:
    def make(provider: str = "hash", **overrides: object) -> AgentConfig:
        query = overrides.pop("query", QueryConfig())
        return quickstart_agent(
            workspace, data_dir, embedding=EmbeddingConfig(provider=provider), query=query, **overrides
        )

    return make


@pytest.fixture
def memory_factory(agent_factory: Callable[..., AgentConfig]) -> Iterator[Callable[..., AgentMemory]]:
    opened: list[AgentMemory] = []

    def make(embedder: object | None = None, provider: str = "hash", **kwargs: object) -> AgentMemory:
        use_sqlite_vec = bool(kwargs.pop("use_sqlite_vec", True))
        memory = AgentMemory(agent_factory(provider, **kwargs), embedder, use_sqlite_vec=use_sqlite_vec)  # type: ignore[arg-type]
        opened.append(memory)
        return memory

    yield make
    for memory in opened:
        memory.close()


def remove_chain(top: Path, name: str = "d") -> None:
    """Remove a chain of nested folders named `name` below `top`, deepest first, without recursion."""
    fds = [os.open(top, os.O_RDONLY)]
    while True:
        try:
            fds.append(os.open(name, os.O_RDONLY, dir_fd=fds[-1]))
        except FileNotFoundError:
            break
    os.close(fds.pop())
    while fds:
        parent = fds[-1]
        inner = os.open(name, os.O_RDONLY, dir_fd=parent)
        for entry in os.listdir(inner):
            os.unlink(entry, dir_fd=inner)
        os.close(inner)
        os.rmdir(name, dir_fd=parent)
        os.close(fds.pop())


def make_chain(top: Path, depth: int, name: str, content: bytes) -> None:
    """Folders `d/d/d/...` `depth` deep below `top` (deeper than PATH_MAX allows to name), a file at the bottom."""
    fd = os.open(top, os.O_RDONLY)
    try:
        for _ in range(depth):
            os.mkdir("d", dir_fd=fd)
            inner = os.open("d", os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = inner
        note = os.open(name, os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd)
        os.write(note, content)
        os.close(note)
    finally:
        os.close(fd)


@pytest.fixture
def deep_tree(workspace: Path) -> Iterator[Path]:
    yield workspace / "memory"
    remove_chain(workspace / "memory")  # pytest's own clean-up recurses and would fail on it
