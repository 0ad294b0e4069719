"""Reloads that fail, watchers that die, fall back or lose their folder: the daemon keeps serving and says so."""

from __future__ import annotations

import errno
import shutil
import signal
from pathlib import Path

import pytest
from watchdog.observers import Observer

from memoryd.config import load_config
from memoryd.daemon.manager import Manager
from memoryd.daemon.watchers import WatchHub

from . import daemon as d
from .conftest import make_chain, write

pytestmark = pytest.mark.slow  # real daemon processes, subprocesses or the real model


def test_a_failing_reload_keeps_the_old_config_serving_and_says_why(tmp_path: Path, workspace: Path) -> None:
    write(workspace / "MEMORY.md", "# One\nThe first agent knows about ibex.\n")
    daemon = d.start(tmp_path, workspace)
    try:
        good = daemon.config.read_text()
        daemon.config.write_text(good + "\n[daemon.oops]\n")  # not valid: the [daemon] table has no sub-tables
        daemon.proc.send_signal(signal.SIGHUP)
        client = daemon.client()
        reason = d.eventually(lambda: client.status()["daemon"]["reload_error"])
        assert "config:" in reason and "oops" in reason
        assert client.search("ibex", mode="keyword").results

        blocked = tmp_path / "blocked"
        blocked.write_text("a file where the new agent's index folder would go\n")
        other = tmp_path / "other"
        write(other / "MEMORY.md", "# Two\nwombats\n")
        daemon.config.write_text(
            good + f'\n[[agents]]\nid = "second"\nworkspace = "{other}"\nstore = "{blocked}/x/index.sqlite"\n'
            '[agents.embedding]\nprovider = "hash"\n'
        )
        daemon.proc.send_signal(signal.SIGHUP)
        reason = d.eventually(lambda: (client.status()["daemon"]["reload_error"] or "").count("could not be opened"))
        assert reason
        assert [a["id"] for a in client.agents()] == ["main"]  # the old config, whole
        assert client.search("ibex", mode="keyword").results  # and it still answers: no KeyError

        daemon.config.write_text(good)
        daemon.proc.send_signal(signal.SIGHUP)
        d.eventually(lambda: client.status()["daemon"]["reload_error"] is None)
    finally:
        d.cleanup(daemon)


class _NoInotify(Observer):  # type: ignore[misc, valid-type]
    """An observer whose every watch fails as when the OS runs out of inotify watches."""

    def schedule(self, *args: object, **kwargs: object) -> object:
        raise OSError(errno.ENOSPC, "No space left on device")


def test_status_shows_a_later_fall_back_to_polling_and_events_still_arrive(tmp_path: Path, workspace: Path) -> None:
    config = load_config(
        d.write_config(tmp_path / "c.toml", workspace=workspace, data_dir=tmp_path / "data", socket=tmp_path / "s")
    )
    manager = Manager(config, watch=True)
    manager.start()
    try:
        runtime = manager.runtime(None)
        assert runtime.status()["watcher"] == "watching"
        hub = manager.hub
        assert isinstance(hub, WatchHub)
        hub._observer.stop()
        hub._observer.join()
        hub._observer = _NoInotify()
        hub._observer.start()
        shutil.rmtree(workspace / "memory")  # a replaced folder makes check() re-arm it, now past the limit
        write(workspace / "memory" / "n.md", "# N\nThe polling watcher sees the caracal note.\n")
        d.eventually(lambda: (hub.check(), runtime.status()["watcher"].startswith("polling"))[1])  # read live
        write(workspace / "memory" / "m.md", "# M\nA second caracal note.\n")
        d.eventually(lambda: len(runtime.memory.search("caracal", mode="keyword").results) == 2)
    finally:
        manager.close()


def test_a_dead_observer_is_replaced(tmp_path: Path, workspace: Path) -> None:
    hub = WatchHub()
    seen: list[str] = []
    try:
        config = load_config(
            d.write_config(tmp_path / "c.toml", workspace=workspace, data_dir=tmp_path / "data", socket=tmp_path / "s")
        )
        hub.add(config.default_agent, lambda path, kind: seen.append(path))
        hub._observer.stop()
        hub._observer.join()
        write(workspace / "memory" / "lost.md", "# Lost\nwritten while nobody watched\n")
        hub.check()
        assert hub.state("main") == "watching" and hub._observer.is_alive()
        write(workspace / "memory" / "found.md", "# Found\n")
        d.eventually(lambda: any(p.endswith("found.md") for p in seen))
    finally:
        hub.close()


def test_a_workspace_deleted_and_recreated_is_watched_again(tmp_path: Path, workspace: Path) -> None:
    write(workspace / "MEMORY.md", "# One\nfirst\n")
    daemon = d.start(tmp_path, workspace)
    try:
        shutil.rmtree(workspace)
        client = daemon.client()
        d.eventually(lambda: "missing" in client.status()["agents"][0]["watcher"])
        write(workspace / "memory" / "back.md", "# Back\nThe returning tapir note.\n")
        d.eventually(lambda: client.search("tapir", mode="keyword").results)  # no reconcile runs in tests
        assert client.status()["agents"][0]["watcher"] == "watching"
    finally:
        d.cleanup(daemon)


def test_a_tree_too_deep_to_watch_degrades_the_watcher_not_the_daemon(
    tmp_path: Path, workspace: Path, deep_tree: Path
) -> None:
    make_chain(deep_tree, 1500, "deep.md", b"# Deep\nThe abyssal note.\n")
    write(workspace / "memory" / "top.md", "# Top\nThe shoebill note.\n")
    daemon = d.start(tmp_path, workspace)
    try:
        client = daemon.client()
        state = client.status()["agents"][0]
        assert "too deep" in state["watcher"] and state["watcher"].startswith("degraded")
        assert client.search("shoebill", mode="keyword").results
        write(workspace / "memory" / "later.md", "# Later\nThe hamerkop note.\n")  # the top level is still watched
        d.eventually(lambda: client.search("hamerkop", mode="keyword").results)
    finally:
        d.cleanup(daemon)


def test_the_daemon_unloads_an_idle_model_and_a_search_brings_it_back(tmp_path: Path, workspace: Path) -> None:
    from .test_faults import _local_agent

    write(workspace / "MEMORY.md", "# Auth\nWe decided to use JWT with 24h expiry.\n")
    for i in range(40):
        write(workspace / "memory" / f"n{i}.md", f"Errand {i}: buy {i} apples for the picnic.\n")
    daemon = d.start(tmp_path, workspace, extra="model_idle_minutes = 0.02\n" + _local_agent(workspace), agent=False)
    try:
        client = daemon.client()
        d.eventually(lambda: client.status()["agents"][0]["model_loaded"] is False)
        d.eventually(lambda: "local model unloaded" in daemon.logs())  # logged right after the state changes
        assert client.status()["agents"][0]["vector_matrix_mb"] == 0  # the warm matrix went with the model
        found = client.search("what did we decide about tokens?")
        assert found.mode == "hybrid" and found.results[0].path == "MEMORY.md"
        assert client.status()["agents"][0]["model_loaded"] is True
        assert client.status()["agents"][0]["vector_matrix_mb"] > 0
        assert client.status()["daemon"]["rss_mb"] > 0
    finally:
        d.cleanup(daemon)


def test_a_sync_asked_for_but_not_begun_shows_as_pending(tmp_path: Path, workspace: Path) -> None:
    """Sync threads run at index_nice, so on a busy machine a requested sync may wait for its thread: status must
    not call the agent settled meanwhile (a client waiting for `dirty` and `syncing` to clear would read a
    half-built index)."""
    from memoryd.config import Config, EmbeddingConfig, quickstart_agent
    from memoryd.daemon.runtime import AgentRuntime

    write(workspace / "MEMORY.md", "# One\nThe agent knows about ibex.\n")
    agent = quickstart_agent(workspace, tmp_path / "data", embedding=EmbeddingConfig(provider="none"))
    runtime = AgentRuntime(agent, Config(data_dir=tmp_path / "data", socket=tmp_path / "s", agents=(agent,)))
    try:
        with runtime.state.cond:
            runtime.state.reindexing = True  # holds the sync job back, as a starved thread would be
        ticket = runtime.request_sync()
        state = runtime.status()
        assert state["dirty"] and not state["syncing"] and state["files"] == 0
        with runtime.state.cond:
            runtime.state.reindexing = False
            runtime.state.cond.notify_all()
        assert runtime.wait_for(ticket, 30)
        state = runtime.status()
        assert not state["dirty"] and not state["syncing"] and state["files"] == 1
    finally:
        runtime.close()


def test_no_automatic_reindex_while_the_workspace_is_missing(tmp_path: Path, workspace: Path) -> None:
    """A changed vector space reindexes on its own, but not while the workspace is gone: the new index would hold
    none of its notes. It waits for the workspace; an explicit reindex is still the user's to ask for."""
    from memoryd.config import Config, EmbeddingConfig, quickstart_agent
    from memoryd.daemon.runtime import AgentRuntime

    write(workspace / "MEMORY.md", "# One\nThe agent knows about ibex.\n")
    agent = quickstart_agent(workspace, tmp_path / "data", embedding=EmbeddingConfig(provider="hash"))
    runtime = AgentRuntime(agent, Config(data_dir=tmp_path / "data", socket=tmp_path / "s", agents=(agent,)))
    try:
        runtime.sync_now(timeout=30)
        runtime.memory.store.set_meta("embedding", "another|model")  # as if the provider had changed
        moved = tmp_path / "moved"
        shutil.move(str(workspace), moved)
        runtime.reindexer.begin_if_stale()
        assert runtime.reindex_progress is None and runtime.status()["files"] == 1
        shutil.move(str(moved), workspace)
        runtime.reindexer.begin_if_stale()
        assert runtime.wait_reindex(60) and runtime.reindex_progress.state == "done"  # type: ignore[union-attr]
        assert runtime.status()["files"] == 1
    finally:
        runtime.close()
