"""memoryd as a library: one agent's memory in your own process, no daemon. It answers with the same types the
daemon's clients get (memoryd_client.protocol.results), so a program can move between the two without changes:

    from memoryd import Memory

    with Memory.open("~/notes") as memory:
        memory.sync()
        for hit in memory.search("what did we decide about auth?"):
            print(hit.citation, hit.snippet)

Opening one takes the index's lock: while a daemon serves the same index, open it through the daemon instead
(memoryd_client.MemoryClient), or give the library its own `data_dir`."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from typing import Any, cast

from memoryd.config import AgentConfig, default_data_dir, default_model_path, load_config, quickstart_agent
from memoryd.embeddings.base import Embedder
from memoryd.ingest.batch import SyncReport
from memoryd.memory import AgentMemory
from memoryd_client.protocol.results import GetResult, SearchResults, WriteResult, search_results
from memoryd_client.protocol.schema import Changes, Forget, Undo, Update, Write
from memoryd_client.protocol.validation import request


class Memory:
    """One agent's memory: sync, search, get, write, forget, update, undo and status, in this process."""

    def __init__(self, agent: AgentConfig, embedder: Embedder | None = None) -> None:
        self.agent = agent
        self._memory = AgentMemory(agent, embedder)

    @classmethod
    def open(cls, workspace: str | os.PathLike[str], *, data_dir: str | os.PathLike[str] | None = None) -> Memory:
        """The memory of a folder of notes, with the default settings (the daemon's data dir unless given). With
        a data dir of its own it still uses the local model `memoryd model prepare` made, when there is none
        in that dir."""
        agent = load_config(workspace=Path(workspace).expanduser(), data_dir=data_dir).default_agent
        prepared = default_model_path(default_data_dir())
        if not Path(agent.embedding.model_path).exists() and prepared.exists():
            agent = replace(agent, embedding=replace(agent.embedding, model_path=str(prepared)))
        return cls(agent)

    @classmethod
    def from_config(cls, path: str | os.PathLike[str] | None = None, agent: str | None = None) -> Memory:
        """An agent of a config file (default: the one memoryd itself reads)."""
        return cls(load_config(path).agent(agent))

    @classmethod
    def quick(cls, workspace: Path, data_dir: Path, **settings: Any) -> Memory:
        """A memory with settings given here rather than in a file (tests, embedding programs)."""
        return cls(quickstart_agent(workspace, data_dir, **settings))

    def sync(self, *, force: bool = False) -> SyncReport:
        """Bring the index in line with the files, every chunk embedded."""
        return self._memory.sync(force=force)

    def search(self, query: str, **options: Any) -> SearchResults:
        """Hybrid search; options as memoryd_client.protocol.schema.Search declares them (max_results, min_score, mode,
        sources, fusion, path, after, before, type, explain, mmr, decay), checked as the daemon checks them."""
        answer = self._memory.search(query, **options).as_dict()
        answer["agent"] = self.agent.id
        return search_results(answer)

    def get(self, path: str, from_line: int = 1, lines: int | None = None) -> GetResult:
        return cast(GetResult, self._memory.get(path, from_line, lines))  # the wire's dict, as GetResult types it

    def write(
        self,
        text: str,
        path: str | None = None,
        *,
        type: str | None = None,
        importance: float | None = None,
        supersedes: str | None = None,
        force: bool = False,
    ) -> WriteResult:
        """Append an entry; one memory holds already is not written again (`duplicate_of`) unless `force`;
        `supersedes` (a citation) marks an older statement as replaced by it."""
        options = {"type": type, "importance": importance, "supersedes": supersedes, "force": force}
        checked = cast(Write, request("write", text=text, path=path, **options))
        answer = self._memory.write(
            checked.text,
            checked.path,
            kind=checked.type,
            importance=checked.importance,
            supersedes=checked.supersedes,
            force=checked.force,
        )
        return cast(WriteResult, answer)  # the wire's dict, as WriteResult types it

    def forget(
        self,
        citation: str | None = None,
        *,
        query: str | None = None,
        confirm: str | None = None,
        expect: str | None = None,
        purge: bool = False,
    ) -> dict[str, Any]:
        """Forget a citation's lines, a note, or (with `query`: first the matches and a `confirm` token, then
        with the token) what a search finds; see the protocol's `forget`."""
        checked = cast(
            Forget, request("forget", citation=citation, query=query, confirm=confirm, expect=expect, purge=purge)
        )
        return self._memory.edits.forget(
            checked.citation, query=checked.query, confirm=checked.confirm, expect=checked.expect, purge=checked.purge
        )

    def update(self, citation: str, text: str, expect: str) -> dict[str, Any]:
        """Replace a citation's lines, if they still hold `expect` (their text, or `sha256:` of it)."""
        checked = cast(Update, request("update", citation=citation, text=text, expect=expect))
        return self._memory.edits.update(checked.citation, checked.text, checked.expect)

    def undo(self, count: int = 1, *, change: int | None = None) -> dict[str, Any]:
        """Undo the newest `count` changes, or `change` (an id from `changes`) alone."""
        checked = cast(Undo, request("undo", count=count, change=change))
        return self._memory.edits.undo(checked.count, checked.change)

    def changes(self, limit: int = 20) -> list[dict[str, Any]]:
        return self._memory.edits.list_changes(cast(Changes, request("changes", limit=limit)).limit)

    def status(self) -> dict[str, Any]:
        return self._memory.status()

    def close(self) -> None:
        self._memory.close()

    def __enter__(self) -> Memory:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
