"""Forget, update, supersede, one copy and undo (issue 45), in the library, attacked as a hostile user would: every
edit checked byte for byte, every bad input shown to change nothing, editors' saves raced in both orders."""

from __future__ import annotations

import contextlib
import errno
import json
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from memoryd.config import EmbeddingConfig, quickstart_agent
from memoryd.curation import notefile
from memoryd.entry_journal import EntryJournal
from memoryd.memory import AgentMemory
from memoryd.notes import RequestError
from memoryd.recall.answer import Recaller
from memoryd.search.filters import Filters
from memoryd.sources.entries import entries
from memoryd_client.protocol.validation import request

from .conftest import write

NOTE = (
    "# Services\n"
    "\n"
    "- billing uses Redis as the cache for invoices\n"
    "- the deploy queue is RabbitMQ with three workers\n"
    "\n"
    "- Alice drinks jasmine tea every morning at nine\n"
)
REDIS = "billing uses Redis as the cache for invoices"


# -- helpers --------------------------------------------------------------------------------------------------


def tree(*roots: Path) -> dict[str, bytes | str]:
    """Every file under the roots (bytes; a symlink's target), by path: what 'nothing changed' compares."""
    found: dict[str, bytes | str] = {}
    for root in roots:
        if not root.exists():
            continue
        for path in sorted(root.rglob("*")):
            if path.is_symlink():
                found[str(path)] = "-> " + os.readlink(path)
            elif path.is_file() and path.suffix not in (".sqlite", ".sqlite-wal", ".sqlite-shm", ".lock"):
                found[str(path)] = path.read_bytes()
    return found


def state(memory: AgentMemory) -> dict[str, bytes | str]:
    """The workspace's files, the change log, the forget record and any temp file beside them."""
    found = {**tree(memory.agent.workspace), **tree(memory.agent.store.parent)}  # the index aside
    record = str(memory.agent.store.parent / "forgotten.json")
    if record in found and not any(v for k, v in json.loads(found[record]).items() if k != "about"):
        del found[record]  # a record that holds nothing is no record
    return found


def hits(memory: AgentMemory, query: str, mode: str = "keyword") -> str:
    """Every snippet a search finds, as one text."""
    return "\n".join(hit.snippet for hit in memory.search(query, mode=mode, max_results=20).results)


def recalled(memory: AgentMemory, prompt: str) -> str:
    return str(Recaller.create().recall(memory, request("recall", prompt=prompt))["block"])


def gone_everywhere(memory: AgentMemory, text: str, query: str, path: str) -> None:
    for mode in ("keyword", "hybrid"):
        assert text not in hits(memory, query, mode), mode
    assert text not in recalled(memory, f"{query}?")
    with contextlib.suppress(RequestError):  # else the note is gone
        assert text not in memory.get(path)["text"]


@pytest.fixture
def memory(memory_factory: Callable[..., AgentMemory], workspace: Path) -> AgentMemory:
    write(workspace / "memory" / "services.md", NOTE)
    made = memory_factory()
    made.sync()
    return made


@pytest.fixture
def sessions(workspace: Path) -> Path:
    folder = workspace / "sessions"
    folder.mkdir()
    return folder


def turn(role: str, text: str, ts: str = "2026-11-20T10:00:00Z") -> str:
    return json.dumps({"type": "message", "timestamp": ts, "message": {"role": role, "content": text}})


@pytest.fixture
def with_sessions(workspace: Path, data_dir: Path, sessions: Path) -> Iterator[Callable[[], AgentMemory]]:
    opened: list[AgentMemory] = []

    def make() -> AgentMemory:
        agent = quickstart_agent(
            workspace,
            data_dir,
            sources=("memory", "sessions"),
            sessions_dirs=(sessions,),
            embedding=EmbeddingConfig(provider="hash"),
        )
        opened.append(AgentMemory(agent))
        return opened[-1]

    yield make
    for made in opened:
        made.close()


# -- forget ---------------------------------------------------------------------------------------------------


def test_forget_by_citation_is_gone_from_search_get_and_recall_when_it_returns(
    memory: AgentMemory, workspace: Path
) -> None:
    assert REDIS in hits(memory, "billing cache Redis") and REDIS in recalled(memory, "Which cache does billing use?")
    done = memory.edits.forget("memory/services.md#L3")
    assert done["forgotten"] == "memory/services.md#L3-L3" and done["indexed"] and done["change"] == 1
    assert (workspace / "memory" / "services.md").read_text() == NOTE.replace(REDIS + "\n", "").replace("- - ", "- ")
    gone_everywhere(memory, "Redis", "which cache does billing use for invoices", "memory/services.md")
    assert "RabbitMQ" in hits(memory, "deploy queue RabbitMQ")  # the line beside it stays
    assert [c["kind"] for c in memory.edits.list_changes()] == ["forget"]


def test_forget_a_whole_note_and_undo_it(memory: AgentMemory, workspace: Path) -> None:
    note = workspace / "memory" / "services.md"
    note.chmod(0o640)
    done = memory.edits.forget("memory/services.md")
    assert done["forgotten"] == "memory/services.md" and not note.exists()
    gone_everywhere(memory, "Redis", "which cache does billing use", "memory/services.md")
    assert memory.search("jasmine tea", mode="keyword").results == []
    with pytest.raises(RequestError):
        memory.get("memory/services.md")
    memory.edits.undo()
    assert note.read_bytes() == NOTE.encode() and REDIS in hits(memory, "billing cache Redis")


def test_expect_is_checked_for_a_whole_note_and_refused_where_it_cannot_mean_anything(
    memory: AgentMemory, workspace: Path, with_sessions: Callable[[], AgentMemory], sessions: Path
) -> None:
    note = workspace / "memory" / "services.md"
    seen = memory.get("memory/services.md")
    note.write_text(NOTE.replace("Redis", "Valkey"))  # an editor changed it since
    before = state(memory)
    for expect in (seen["text"], seen["hash"]):
        stale = memory.edits.forget("memory/services.md", expect=expect)
        assert stale["forgotten"] is None and "Valkey" in stale["current"]["text"] and state(memory) == before
    with pytest.raises(RequestError, match="confirm"):
        memory.edits.forget(query="billing cache", expect=seen["hash"])
    assert state(memory) == before
    done = memory.edits.forget("memory/services.md", expect=memory.get("memory/services.md")["hash"])
    assert done["forgotten"] == "memory/services.md" and not note.exists()
    memory.close()  # the index is one process's: the agent with transcripts opens it next
    write(sessions / "chat.jsonl", turn("user", "My bank PIN is 9921, keep it safe please.") + "\n")
    chats = with_sessions()
    chats.sync()
    path = chats.search("bank PIN", mode="keyword").results[0].path
    with pytest.raises(RequestError, match="whole transcript"):
        chats.edits.forget(path, expect=chats.get(path)["hash"])
    assert "9921" in hits(chats, "bank PIN 9921")


def test_forget_by_query_shows_then_forgets_exactly_what_was_confirmed(memory: AgentMemory, workspace: Path) -> None:
    write(workspace / "memory" / "other.md", "# Other\n\nThe garden shed is painted green.\n")
    memory.sync()
    before = state(memory)
    shown = memory.edits.forget(query="jasmine tea morning")
    assert shown["forgotten"] is None and shown["matches"] and shown["confirm"]
    assert state(memory) == before  # showing changes nothing
    assert all(m["citation"].startswith("memory/services.md") for m in shown["matches"])
    wrong = memory.edits.forget(query="jasmine tea morning", confirm="0" * 16)
    assert wrong["forgotten"] is None and "conflict" in wrong and state(memory) == before
    done = memory.edits.forget(query="jasmine tea morning", confirm=shown["confirm"])
    assert done["forgotten"] and all(r["forgotten"] for r in done["results"])
    gone_everywhere(memory, "jasmine", "what does Alice drink in the morning jasmine tea", "memory/services.md")
    assert "garden shed" in hits(memory, "garden shed green")


def test_a_confirmation_of_matches_that_changed_is_refused(memory: AgentMemory, workspace: Path) -> None:
    shown = memory.edits.forget(query="jasmine tea morning")
    note = workspace / "memory" / "services.md"
    note.write_text(NOTE.replace("jasmine tea every morning", "jasmine tea every single morning"))
    memory.sync()
    before = state(memory)
    again = memory.edits.forget(query="jasmine tea morning", confirm=shown["confirm"])
    assert (
        again["forgotten"] is None and again["conflict"] and again["matches"] and again["confirm"] != shown["confirm"]
    )
    assert state(memory) == before


def test_forget_transcript_lines_leaves_the_file_byte_identical(
    with_sessions: Callable[[], AgentMemory], sessions: Path
) -> None:
    lines = [
        json.dumps({"type": "session", "id": "s1"}),
        turn("user", "Remember that my locker code is 4417 at the gym."),
        turn("assistant", "Noted: your gym locker code is 4417."),
        turn("user", "We should repaint the fence in the spring."),
    ]
    transcript = write(sessions / "chat.jsonl", "\n".join(lines) + "\n")
    raw = transcript.read_bytes()
    memory = with_sessions()
    memory.sync()
    assert "4417" in hits(memory, "gym locker code")
    path = memory.search("gym locker code", mode="keyword").results[0].path
    done = memory.edits.forget(f"{path}#L2-L3")
    assert done["forgotten"] and done["indexed"]
    assert transcript.read_bytes() == raw
    assert "4417" not in hits(memory, "gym locker code") and "repaint the fence" in hits(memory, "repaint fence")
    shown = memory.get(path)["text"].split("\n")
    assert shown[1:3] == ["[forgotten]", "[forgotten]"] and "fence" in shown[3]
    assert "4417" not in recalled(memory, "what is my gym locker code?")
    memory.reindex()
    assert "4417" not in hits(memory, "gym locker code")
    memory.edits.undo()
    assert transcript.read_bytes() == raw and "4417" in hits(memory, "gym locker code")


def test_a_forgotten_sentence_a_transcript_repeats_is_kept_out_too(
    with_sessions: Callable[[], AgentMemory], sessions: Path, workspace: Path
) -> None:
    secret = "the staging database password rotates every ninety days with the vault"
    write(workspace / "memory" / "ops.md", f"# Ops\n\n- {secret}\n- backups run nightly at two\n")
    lines = [turn("user", "How often does it rotate?"), turn("assistant", f"As noted, {secret}.")]
    write(sessions / "chat.jsonl", "\n".join(lines) + "\n")
    memory = with_sessions()
    memory.sync()
    assert hits(memory, "staging database password rotates").count("ninety days") == 2
    memory.edits.forget("memory/ops.md#L3")
    assert "ninety days" not in hits(memory, "staging database password rotates")
    assert "ninety days" not in recalled(memory, "how often does the staging database password rotate?")
    assert "ninety days" not in memory.get(memory.search("rotate", mode="keyword").results[0].path)["text"]
    memory.reindex()
    assert "ninety days" not in hits(memory, "staging database password rotates")
    memory.edits.undo()  # the note's line is back, and so is the transcript's
    assert hits(memory, "staging database password rotates").count("ninety days") == 2


@pytest.mark.parametrize(
    "secret",
    [
        "the staging vault password rotates monthly",
        "mật khẩu cơ sở dữ liệu thử nghiệm đổi mỗi chín mươi ngày",
    ],
)
def test_get_of_a_transcript_masks_a_line_of_a_turn_that_repeats_a_forgotten_sentence(
    with_sessions: Callable[[], AgentMemory], sessions: Path, workspace: Path, secret: str
) -> None:
    """The turn's text is read line by line as the index reads it: a JSON line's `\\n` does not glue the sentence
    to the line above, nor `\\uXXXX` hide a non-ASCII one."""
    write(workspace / "memory" / "ops.md", f"# Ops\n\n- {secret}\n- backups run nightly at two\n")
    said = f"As noted in the ops file:\n{secret}\nAnything else?"
    write(sessions / "chat.jsonl", turn("user", "How often?") + "\n" + turn("assistant", said) + "\n")
    assert "\\n" + secret.split()[0] in (sessions / "chat.jsonl").read_text() or not secret.isascii()
    memory = with_sessions()
    memory.sync()
    path = memory.search("backups nightly", mode="keyword").results[0].path
    transcript = next(h.path for h in memory.search("anything else noted", mode="keyword").results)
    assert transcript != path
    memory.edits.forget("memory/ops.md#L3")
    shown = memory.get(transcript)["text"].split("\n")
    assert shown[1] == "[forgotten]" and shown[0].startswith("{")  # the turn repeating it, and only that one


def test_forgotten_stays_gone_through_a_restart_a_reindex_and_a_migration(
    with_sessions: Callable[[], AgentMemory], sessions: Path, workspace: Path, tmp_path: Path
) -> None:
    from memoryd.daemon.migrate import migrate, open_source, target_agent

    write(workspace / "memory" / "services.md", NOTE)
    write(sessions / "chat.jsonl", turn("user", "My bank PIN is 9921, keep it safe please.") + "\n")
    memory = with_sessions()
    memory.sync()
    memory.edits.forget("memory/services.md#L3")
    path = memory.search("bank PIN", mode="keyword").results[0].path
    memory.edits.forget(f"{path}#L1")
    agent = memory.agent
    memory.close()
    again = with_sessions()  # a restart
    again.sync(force=True)
    for query in ("billing cache Redis", "bank PIN 9921"):
        assert "Redis" not in hits(again, query) and "9921" not in hits(again, query)
    again.reindex()
    assert "9921" not in hits(again, "bank PIN 9921")
    again.close()
    source = open_source(agent)
    moved = target_agent(agent, str(tmp_path / "elsewhere" / "index.sqlite"), None, tmp_path / "data")
    try:
        migrate(source, moved, moving=agent)
    finally:
        source.close()
    with AgentMemory(moved) as there:
        assert "9921" not in hits(there, "bank PIN 9921") and "Redis" not in hits(there, "billing cache Redis")
        assert there.edits.list_changes()  # the change log went along: the forgets can still be undone


# -- update ---------------------------------------------------------------------------------------------------


def test_update_replaces_exactly_the_cited_lines(memory: AgentMemory, workspace: Path) -> None:
    note = workspace / "memory" / "services.md"
    seen = memory.get("memory/services.md", 3, 1)
    done = memory.edits.update("memory/services.md#L3", "- billing uses Memcached as the cache", seen["hash"])
    assert done["updated"] == "memory/services.md#L3-L3" and done["citation"] == "memory/services.md#L3-L3"
    assert note.read_text() == NOTE.replace("Redis as the cache for invoices", "Memcached as the cache")
    assert "Memcached" in hits(memory, "billing cache Memcached") and "Redis" not in hits(memory, "billing Redis")
    two = memory.edits.update(
        "memory/services.md#L3-L4",
        "- one line now",
        "- billing uses Memcached as the cache\n- the deploy queue is RabbitMQ with three workers",
    )
    assert two["citation"] == "memory/services.md#L3-L3"
    assert note.read_text() == "# Services\n\n- one line now\n\n- Alice drinks jasmine tea every morning at nine\n"


@pytest.mark.parametrize("stale", ["text", "hash"])
def test_a_stale_expect_writes_nothing_and_answers_the_current_text(
    memory: AgentMemory, workspace: Path, stale: str
) -> None:
    seen = memory.get("memory/services.md", 3, 1)
    note = workspace / "memory" / "services.md"
    note.write_text(NOTE.replace("Redis", "Valkey"))  # an editor changed it since
    memory.sync()
    before = state(memory)
    expect = seen["text"] if stale == "text" else seen["hash"]
    done = memory.edits.update("memory/services.md#L3", "- billing uses Memcached", expect)
    assert done["updated"] is None and "changed since" in done["conflict"]
    assert done["current"]["text"] == REDIS.replace("Redis", "Valkey").join(["- ", ""])
    assert done["current"]["hash"] == memory.get("memory/services.md", 3, 1)["hash"]
    assert state(memory) == before
    forgot = memory.edits.forget("memory/services.md#L3", expect=expect)
    assert forgot["forgotten"] is None and forgot["current"] and state(memory) == before


def _save_as_editor(note: Path, text: bytes) -> None:
    """An editor's atomic save: a temp file renamed over the note."""
    temp = note.with_name(f".{note.name}.swp")
    temp.write_bytes(text)
    os.replace(temp, note)


@pytest.mark.parametrize("exchange", [True, False], ids=["exchange", "checked rename"])
def test_an_editor_save_between_the_read_and_the_exchange_keeps_both(
    memory: AgentMemory, workspace: Path, monkeypatch: pytest.MonkeyPatch, exchange: bool
) -> None:
    note = workspace / "memory" / "services.md"
    if not exchange:  # a system without renameat2/renamex_np
        monkeypatch.setattr(notefile, "_exchange", None)
    real = notefile._write_beside
    saves = []

    def racing(target: Path, data: bytes, mode: int) -> Path:
        if not saves:  # memoryd has read the note and made its text: the editor saves now
            saves.append(1)
            _save_as_editor(note, note.read_bytes() + b"- editor: added while memoryd was writing\n")
        return real(target, data, mode)

    monkeypatch.setattr(notefile, "_write_beside", racing)
    done = memory.edits.update("memory/services.md#L4", "- the deploy queue is NATS", "sha256:" + "0" * 64)
    assert done["updated"] is None  # a wrong hash: refused before anything is written
    saves.clear()
    seen = memory.get("memory/services.md", 4, 1)["hash"]
    done = memory.edits.update("memory/services.md#L4", "- the deploy queue is NATS", seen)
    assert saves and done["updated"]
    text = note.read_text()
    assert "- the deploy queue is NATS\n" in text and "RabbitMQ" not in text
    assert text.endswith("- editor: added while memoryd was writing\n")
    assert not [p for p in note.parent.iterdir() if p.name.startswith(".")]  # no temp file left
    assert "NATS" in hits(memory, "deploy queue NATS") and "while memoryd was writing" in hits(memory, "editor added")


def test_an_editor_save_that_changed_the_cited_lines_mid_edit_wins(
    memory: AgentMemory, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The editor rewrote the very lines during the exchange: the update is not made on text it did not see."""
    note = workspace / "memory" / "services.md"
    real = notefile._write_beside
    edited = NOTE.replace("RabbitMQ", "Kafka").encode()

    def racing(target: Path, data: bytes, mode: int) -> Path:
        if note.read_bytes() != edited:
            _save_as_editor(note, edited)
        return real(target, data, mode)

    monkeypatch.setattr(notefile, "_write_beside", racing)
    seen = memory.get("memory/services.md", 4, 1)["hash"]
    done = memory.edits.update("memory/services.md#L4", "- the deploy queue is NATS", seen)
    assert done["updated"] is None and "Kafka" in done["current"]["text"]
    assert note.read_bytes() == edited  # the editor's text stands, whole
    assert not [p for p in note.parent.iterdir() if p.name.startswith(".")]
    assert [c["kind"] for c in memory.edits.list_changes()] == []


@pytest.mark.parametrize("failure", ["full disk in the next round", "rounds run out"])
def test_an_editors_save_is_put_back_when_the_next_round_fails(
    memory: AgentMemory, workspace: Path, monkeypatch: pytest.MonkeyPatch, failure: str
) -> None:
    """The exchange took the editor's save out of the note's place; the round that would put a text made from it
    in fails: the editor's text goes back, whole, and nothing of memoryd's is left in the note or beside it."""
    note = workspace / "memory" / "services.md"
    real = notefile._write_beside
    saves: list[bytes] = []

    def racing(target: Path, data: bytes, mode: int) -> Path:
        if failure == "full disk in the next round" and saves:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        saves.append(NOTE.encode() + f"- editor: save {len(saves)}\n".encode())
        _save_as_editor(note, saves[-1])  # an editor that saves before every exchange
        return real(target, data, mode)

    monkeypatch.setattr(notefile, "_write_beside", racing)
    seen = memory.get("memory/services.md", 4, 1)["hash"]
    with pytest.raises((OSError, notefile.NoteChanged)) as failed:
        memory.edits.update("memory/services.md#L4", "- the deploy queue is NATS", seen)
    assert isinstance(failed.value, notefile.NoteChanged) == (failure == "rounds run out")
    assert len(saves) == (1 if failure == "full disk in the next round" else notefile.MAX_ROUNDS)
    assert note.read_bytes() == saves[-1]  # the editor's last save, not memoryd's text made from an earlier one
    assert not [p for p in note.parent.iterdir() if p.name.startswith(".")]
    assert memory.edits.list_changes() == []


def test_a_save_landing_while_a_note_is_removed_is_never_overwritten(
    workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A save lands after the note was read, and another after it was taken aside: the newest save stands."""
    note = workspace / "memory" / "gone.md"
    write(note, "- to be removed\n")
    real_rename = os.rename
    renames: list[str] = []

    def racing(source: object, dest: object) -> None:
        renames.append(str(dest))
        if len(renames) == 1:
            _save_as_editor(note, b"- first save\n")
        real_rename(source, dest)  # type: ignore[arg-type]
        if len(renames) == 1:
            _save_as_editor(note, b"- second save\n")

    monkeypatch.setattr(os, "rename", racing)
    assert notefile.remove(note, b"- to be removed\n") is False
    monkeypatch.undo()
    assert note.read_bytes() == b"- second save\n"
    assert not [p for p in note.parent.iterdir() if p.name.startswith(".")]


def test_a_line_holding_a_byte_that_is_not_utf8_is_forgotten_and_undone_to_the_byte(
    memory: AgentMemory, workspace: Path
) -> None:
    """A note saved in Latin-1 by some editor: the line `get` shows with U+FFFD is forgotten by that text (masking
    secrets once broke on the byte), and the undo puts the very bytes back."""
    note = workspace / "memory" / "latin.md"
    original = b"# t\n\n- caf\xe9 opens at nine\n- two\n"
    note.write_bytes(original)
    memory.sync()
    seen = memory.get("memory/latin.md", 3, 1)["text"]
    assert seen == "- caf\ufffd opens at nine"
    assert memory.edits.forget("memory/latin.md#L3", expect=seen)["forgotten"] == "memory/latin.md#L3-L3"
    assert note.read_bytes() == b"# t\n\n- two\n"
    memory.edits.undo()
    assert note.read_bytes() == original


def test_an_undo_by_id_leaves_the_notes_other_edits_watched(memory: AgentMemory, workspace: Path) -> None:
    """Two lines of one note forgotten, then the first forget undone by its id: an editor's save of a copy read
    before both brings back only what the undo put back. The second forget is still watched, and made again."""
    note = workspace / "memory" / "services.md"
    stale = note.read_bytes()
    memory.journal = EntryJournal(memory.agent, memory._write_lock, memory._restored, window=0.5)
    first = memory.edits.forget("memory/services.md#L6")  # Alice's line
    memory.edits.forget("memory/services.md#L3")  # billing's cache
    assert memory.edits.undo(1, first["change"])["undone"] == [first["change"]]
    assert "jasmine" in note.read_text() and "Redis" not in note.read_text()
    _save_as_editor(note, stale + b"- editor: a line of my own\n")
    memory.journal.settle_now()
    text = note.read_text()
    assert "- editor: a line of my own" in text and "jasmine" in text
    assert "Redis" not in text


def test_an_undo_of_one_of_two_identical_forgets_is_not_undone_by_the_watch(
    memory: AgentMemory, workspace: Path
) -> None:
    """The same line twice in a note, both forgotten, the newer forget undone: the older forget's watch stays, and
    the newer's goes (they are told apart by their change, not by their lines), so no save makes the undo again."""
    note = write(
        workspace / "memory" / "dup.md",
        "# n\n\n- a first line\n- the same line twice\n- b middle line\n- the same line twice\n- c last line\n",
    )
    memory.sync()
    memory.journal = EntryJournal(memory.agent, memory._write_lock, memory._restored, window=0.5)
    memory.edits.forget("memory/dup.md#L6")
    newer = memory.edits.forget("memory/dup.md#L4")
    assert memory.edits.undo()["undone"] == [newer["change"]]
    memory.journal.settle_now()  # no editor saved anything
    assert note.read_text().count("the same line twice") == 1


def test_an_undo_that_fails_midway_leaves_the_changes_it_did_not_reach_watched(
    memory: AgentMemory, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two forgets, an undo of both that fails at the second (the disk, say): the first forget still stands, and an
    editor's save of a copy read before both gets it made again."""
    import memoryd.curation.service as service

    note = workspace / "memory" / "services.md"
    stale = note.read_bytes()
    memory.journal = EntryJournal(memory.agent, memory._write_lock, memory._restored, window=0.5)
    memory.edits.forget("memory/services.md#L6")  # Alice's line
    memory.edits.forget("memory/services.md#L3")
    real, calls = service.undo_change, []

    def failing_second(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        if len(calls) == 2:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(*args, **kwargs)

    monkeypatch.setattr(service, "undo_change", failing_second)
    with pytest.raises(RequestError, match="were undone before it"):
        memory.edits.undo(2)
    assert "Redis" in note.read_text() and "jasmine" not in note.read_text()
    _save_as_editor(note, stale + b"- editor: a line of my own\n")
    memory.journal.settle_now()
    text = note.read_text()
    assert "- editor: a line of my own" in text and "Redis" in text and "jasmine" not in text


@pytest.mark.parametrize("kind", ["update", "forget", "supersede"])
def test_a_stale_save_after_an_edit_gets_the_edit_made_again(memory: AgentMemory, workspace: Path, kind: str) -> None:
    """The editor read the note before the edit and saves its copy, with its own change, just after it."""
    note = workspace / "memory" / "services.md"
    stale = note.read_bytes()
    memory.journal = EntryJournal(memory.agent, memory._write_lock, memory._restored, window=0.5)
    if kind == "update":
        memory.edits.update("memory/services.md#L3", "- billing uses Memcached", REDIS.join(["- ", ""]))
    elif kind == "forget":
        memory.edits.forget("memory/services.md#L3")
    else:
        memory.write("billing uses Memcached as the cache for invoices now", supersedes="memory/services.md#L3")
    _save_as_editor(note, stale + b"- editor: a line of my own\n")
    memory.journal.settle_now()
    text = note.read_text()
    assert "- editor: a line of my own" in text
    if kind == "update":
        assert "- billing uses Memcached\n" in text and "Redis" not in text
    elif kind == "forget":
        assert "Redis" not in text
    else:
        assert f"~~{REDIS}~~" in text and f"- {REDIS}\n" not in text
    assert "Redis" not in hits(memory, "billing cache Redis").replace("~~", "") or kind == "supersede"


# -- supersede ------------------------------------------------------------------------------------------------


def test_write_with_supersedes_strikes_the_old_lines_and_links_the_new(memory: AgentMemory, workspace: Path) -> None:
    done = memory.write("billing uses Memcached as the cache for invoices", supersedes="memory/services.md#L3")
    assert done["written"] and done["superseded"] == "memory/services.md#L3-L3"
    new = done["citation"]
    lines = (workspace / "memory" / "services.md").read_text().split("\n")
    day, link = new.split("/")[1].split(".")[0], new.split("/", 1)[1]
    assert lines[2] == f"- ~~{REDIS}~~ *(superseded {day} by [{new}]({link}))*"
    assert lines[3] == "- the deploy queue is RabbitMQ with three workers"  # no line added: citations below hold
    assert "Memcached" in (workspace / new.split("#")[0]).read_text()
    assert memory.edits.list_changes()[0]["kind"] == "supersede"


def test_two_supersedes_from_one_searchs_citations_strike_the_lines_cited(memory: AgentMemory, workspace: Path) -> None:
    """An agent supersedes two statements of one note with the citations one search gave: the first mark adds no
    line, so the second citation still names its statement (it named the line above before)."""
    note = write(
        workspace / "memory" / "f.md",
        "# Facts\n\n- The office opens at 8.\n- It closes at 18.\n- Parking is in lot B.\n",
    )
    memory.sync()
    memory.write("The office opens at 9 now.", path="memory/f2.md", supersedes="memory/f.md#L3")
    memory.write("Parking moved to lot C.", path="memory/f2.md", supersedes="memory/f.md#L5")
    lines = note.read_text().split("\n")
    assert lines[2].startswith("- ~~The office opens at 8.~~ *(superseded ")
    assert lines[3] == "- It closes at 18."
    assert lines[4].startswith("- ~~Parking is in lot B.~~ *(superseded ") and "f2.md#L3-L3" in lines[4]


def test_a_supersede_within_one_note_cites_and_links_the_new_entry_where_it_ends_up(
    memory: AgentMemory, workspace: Path
) -> None:
    """The mark goes on the old statement's line, above the new entry appended to the same note: the answer and the
    link name the new entry's lines as they are once marked."""
    first = memory.write("the ledger runs on Postgres 14 in eu-west")
    done = memory.write("the ledger runs on Postgres 16 in eu-central now", supersedes=first["citation"])
    struck = f"{first['path']}#L{first['start_line']}-L{first['start_line']}"
    assert done["path"] == first["path"] and done["superseded"] == struck
    assert "Postgres 16" in memory.get(done["path"], done["start_line"], 1)["text"]
    assert done["end_line"] - done["start_line"] == 0
    text = (workspace / done["path"]).read_text()
    link = done["citation"].split("/", 1)[1]
    assert f"by [{done['citation']}]({link}))*" in text
    held = memory.write("The ledger runs on Postgres 16 in eu-central now.")
    assert held["duplicate_of"] == done["citation"]  # and the index agrees on where it is


def test_a_supersedes_is_checked_once_by_one_check_under_the_write_lock(
    memory: AgentMemory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The check before the write and the supersede's own are one function, run with the agent's write lock held
    (it reads what the curator is in the middle of, which only the lock keeps still)."""
    from memoryd.curation.edits import Curator

    real = Curator._supersedable
    locked: list[bool] = []

    def checked(self: Curator, *args: object) -> list[str]:
        locked.append(memory.edits._lock.locked())
        return real(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(Curator, "_supersedable", checked)
    memory.write("billing uses Memcached as the cache for invoices", supersedes="memory/services.md#L3")
    assert locked and all(locked) and len(locked) >= 2  # the check before the write, and the supersede's
    with pytest.raises(RequestError, match="superseded already"):
        memory.write("billing uses Valkey as the cache for invoices", supersedes="memory/services.md#L3")
    assert "Valkey" not in hits(memory, "billing Valkey")


@pytest.mark.parametrize(
    "bad", ["memory/services.md#L40", "memory/nothing.md#L1", "../outside.md#L1", "memory/services.md#L0-L2"]
)
def test_a_bad_supersedes_writes_nothing_at_all(memory: AgentMemory, workspace: Path, bad: str) -> None:
    write(workspace.parent / "outside.md", "- outside the workspace\n")
    before = state(memory)
    with pytest.raises(RequestError):
        memory.write("billing uses Memcached as the cache", supersedes=bad)
    assert state(memory) == before
    assert "Memcached" not in hits(memory, "billing Memcached")


# -- one copy -------------------------------------------------------------------------------------------------


def test_the_same_fact_written_twenty_times_is_held_once(memory: AgentMemory, workspace: Path) -> None:
    fact = "The billing service uses Redis for its session cache."
    first = memory.write(fact)
    forms = [
        fact,
        fact.lower(),
        fact.upper(),
        "the billing service uses redis for its session cache",
        "Note: the billing service uses Redis for its session cache!!",
        "We decided: billing service uses Redis for the session cache.",
        "- The billing service uses **Redis** for its session cache.",
        "  The   billing service, uses Redis, for its session cache...  ",
    ]
    answers = [memory.write(forms[i % len(forms)]) for i in range(17)]
    answers += [memory.write(fact, kind="semantic"), memory.write(fact, importance=0.9)]
    answers.append(memory.write(fact, kind="procedural", importance=0.2))
    assert all(a["written"] is False and a["duplicate_of"] == first["citation"] for a in answers), answers
    text = "".join(p.read_text() for p in (workspace / "memory").glob("*.md"))
    assert text.lower().count("uses redis for its session cache") == 1
    changed = memory.write("The billing service uses Memcached for its session cache.")
    assert changed["written"] and not changed.get("duplicate_of")
    forced = memory.write(fact, force=True)
    assert forced["written"] and forced["citation"] != first["citation"]


@pytest.mark.parametrize(
    "fact",
    [
        "Dịch vụ billing dùng Redis làm cache cho phiên đăng nhập.",
        "billing服务使用Redis作为会话缓存。",
        "บริการ billing ใช้ Redis เป็นแคชของเซสชัน",
        "LedgerCore keeps invoices in the `ledger_v2` table of Postgres 16.",
    ],
)
def test_the_same_fact_in_any_script_saved_again_is_held_once(memory: AgentMemory, fact: str) -> None:
    """The copy is looked for among the chunks holding the fact's rarest words, in every script: written as a list
    item, in bold or after a note-taking word, it is the same fact."""
    first = memory.write(fact)
    for form in (fact, f"- **{fact}**", f"Note: {fact}", f"  {fact}  "):
        answer = memory.write(form)
        assert answer["written"] is False and answer["duplicate_of"] == first["citation"], (form, answer)


@pytest.mark.parametrize(
    ("first", "then"),
    [
        ("Switched the billing cache from Redis to Memcached.", "Switched the billing cache from Memcached to Redis."),
        ("We will migrate the ledger to Postgres.", "We did migrate the ledger to Postgres."),
        ("The ledger should use Postgres.", "The ledger was using Postgres."),
        ("The ledger is on Postgres.", "The ledger is not on Postgres."),
        ("Billing can use Kafka.", "Billing could use Kafka."),
        ("Moved billing from Redis to Memcached.", "Moved billing to Redis from Memcached."),
    ],
)
def test_a_correction_in_the_same_words_is_no_duplicate(memory: AgentMemory, first: str, then: str) -> None:
    """Words in another order, or another modal, tense or negation, make another statement: it is written."""
    assert memory.write(first)["written"]
    answer = memory.write(then)
    assert answer["written"] and "duplicate_of" not in answer, answer
    assert memory.write(then)["duplicate_of"] == answer["citation"]  # the correction saved again is held once


@pytest.mark.parametrize("path", ["../outside.md", "memory/../../outside.md", "/etc/outside.md"])
def test_a_refused_write_of_forgotten_text_unforgets_nothing(memory: AgentMemory, path: str) -> None:
    memory.edits.forget("memory/services.md#L3")
    assert memory.edits.record.holds_forgotten(REDIS)
    before = state(memory)
    with pytest.raises(RequestError):
        memory.write(REDIS, path=path)
    assert memory.edits.record.holds_forgotten(REDIS) and state(memory) == before
    memory.write(REDIS)  # written again on purpose, and written: now it is found again
    assert not memory.edits.record.holds_forgotten(REDIS) and REDIS in hits(memory, "billing Redis invoices")


def test_a_stale_save_of_a_note_forgotten_whole_keeps_only_the_editors_change(
    memory: AgentMemory, workspace: Path
) -> None:
    note = workspace / "memory" / "services.md"
    stale = note.read_bytes()
    memory.journal = EntryJournal(memory.agent, memory._write_lock, memory._restored, window=0.5)
    memory.edits.forget("memory/services.md")
    _save_as_editor(note, stale + b"- editor: a line of my own\n")
    memory.journal.settle_now()
    assert note.read_text() == "- editor: a line of my own\n"
    assert "Redis" not in hits(memory, "billing cache Redis") and "line of my own" in hits(memory, "editor line own")


# -- undo -----------------------------------------------------------------------------------------------------

VARIANTS = {
    "lf": NOTE.encode(),
    "crlf": NOTE.replace("\n", "\r\n").encode(),
    "no final newline": NOTE.rstrip("\n").encode(),
    "crlf, no final newline": NOTE.rstrip("\n").replace("\n", "\r\n").encode(),
}


@pytest.mark.parametrize("purged", ["lines", "note"])
def test_a_purge_leaves_no_copy_of_the_text_in_earlier_change_records(
    memory: AgentMemory, workspace: Path, purged: str
) -> None:
    seen = memory.get("memory/services.md", 3, 1)["hash"]
    memory.edits.update("memory/services.md#L3", "- billing uses Memcached as the cache since the outage", seen)
    memory.write("the deploy queue is NATS with five workers now", supersedes="memory/services.md#L4")
    memory.edits.forget("memory/services.md#L6")  # Alice's line: its record keeps it
    folder = memory.agent.store.parent / "changes"
    assert b"since the outage" in b"".join(p.read_bytes() for p in folder.iterdir())
    target = "memory/services.md#L3" if purged == "lines" else "memory/services.md"
    done = memory.edits.forget(target, purge=True)
    held = b"".join(data for data in tree(memory.agent.store.parent).values() if isinstance(data, bytes))
    assert b"since the outage" not in held and b"Redis" not in held  # the update's old and new lines both
    # the supersede kept the purged line as the one above its own: its record went too
    assert b"RabbitMQ" not in (folder / "00000002.json").read_bytes()
    assert (b"jasmine" in held) == (purged == "lines")  # a record of another line keeps it, unless the note went
    assert done["scrubbed"] == ([1, 2] if purged == "lines" else [1, 2, 3]) and done["change"] == 4
    listed = {c["id"]: c for c in memory.edits.list_changes()}
    assert listed[1]["purged"] and listed[1]["purged_by"] == 4
    assert listed[3]["purged_by"] == (None if purged == "lines" else 4)
    with pytest.raises(RequestError, match="change 4 was made with purge"):
        memory.edits.undo()


@pytest.mark.parametrize("variant", VARIANTS)
@pytest.mark.parametrize("kind", ["forget", "forget last line", "update", "supersede", "forget_note"])
def test_undo_restores_the_exact_bytes(
    memory_factory: Callable[..., AgentMemory], workspace: Path, variant: str, kind: str
) -> None:
    original = VARIANTS[variant]
    note = workspace / "memory" / "services.md"
    note.write_bytes(original)
    note.chmod(0o640)
    memory = memory_factory()
    memory.sync()
    if kind == "forget":
        memory.edits.forget("memory/services.md#L3")
    elif kind == "forget last line":
        memory.edits.forget("memory/services.md#L6")
    elif kind == "update":
        memory.edits.update(
            "memory/services.md#L3-L4", "- one\n- two\n- three", memory.get("memory/services.md", 3, 2)["hash"]
        )
    elif kind == "supersede":
        memory.write(
            "billing uses Memcached as the cache for invoices", path="memory/new.md", supersedes="memory/services.md#L3"
        )
    else:
        memory.edits.forget("memory/services.md")
    assert not note.exists() or note.read_bytes() != original
    done = memory.edits.undo()
    assert done["undone"] == [1] and done["results"][0]["indexed"]
    assert note.read_bytes() == original
    assert stat.S_IMODE(note.stat().st_mode) == 0o640
    assert REDIS in hits(memory, "billing cache Redis for invoices")
    assert memory.edits.list_changes()[0]["undone"]
    assert memory.edits.undo()["undone"] == []  # nothing left to undo


def test_undo_of_a_note_forgotten_line_by_line_and_of_several(memory: AgentMemory, workspace: Path) -> None:
    note = workspace / "memory" / "services.md"
    for line in (6, 4, 3, 1):
        memory.edits.forget(f"memory/services.md#L{line}")
    assert note.read_text().strip() == ""
    assert memory.edits.undo(10)["undone"] == [4, 3, 2, 1]
    assert note.read_bytes() == NOTE.encode()


def test_undo_of_a_transcript_forget_keeps_the_lines_another_forget_holds(
    with_sessions: Callable[[], AgentMemory], sessions: Path
) -> None:
    lines = [turn("user", f"fact number {n}: the {w} is kept in drawer {n}") for n, w in enumerate("abcdef")]
    write(sessions / "chat.jsonl", "\n".join(lines) + "\n")
    memory = with_sessions()
    memory.sync()
    path = memory.search("drawer", mode="keyword").results[0].path
    memory.edits.forget(f"{path}#L3")
    memory.edits.forget(f"{path}#L2-L4")
    assert memory.edits.undo()["undone"] == [2]
    shown = memory.get(path)["text"].split("\n")
    assert shown[2] == "[forgotten]" and "drawer 1" in shown[1] and "drawer 3" in shown[3]
    assert "drawer 2" not in hits(memory, "drawer kept fact")
    assert "drawer 1" in hits(memory, "drawer kept fact")


def test_undo_is_refused_when_the_lines_were_edited_since(memory: AgentMemory, workspace: Path) -> None:
    note = workspace / "memory" / "services.md"
    memory.edits.update("memory/services.md#L3", "- billing uses Memcached", REDIS.join(["- ", ""]))
    note.write_text(note.read_text().replace("Memcached", "Valkey"))  # the user edited the new line by hand
    memory.sync()
    before = state(memory)
    with pytest.raises(RequestError, match="changed since"):
        memory.edits.undo()
    assert state(memory) == before


def test_undo_of_several_refuses_all_when_one_cannot_be_undone(memory: AgentMemory, workspace: Path) -> None:
    note = workspace / "memory" / "services.md"
    memory.edits.forget("memory/services.md#L6", purge=True)
    memory.edits.forget("memory/services.md#L3")
    before = state(memory)
    with pytest.raises(RequestError, match="purge"):
        memory.edits.undo(2)
    assert state(memory) == before and "Redis" not in note.read_text()
    assert "Redis" not in hits(memory, "billing cache Redis")
    assert memory.edits.undo(1)["undone"] == [2]  # the newest alone can be
    with pytest.raises(RequestError, match="purge"):
        memory.edits.undo()
    assert "jasmine" not in note.read_text()
    purged = json.loads((memory.agent.store.parent / "changes" / "00000001.json").read_text())
    assert "jasmine" not in json.dumps(purged)


def test_changes_lists_each_kind(memory: AgentMemory, with_sessions: Callable[[], AgentMemory], sessions: Path) -> None:
    memory.edits.update("memory/services.md#L4", "- queue: NATS", memory.get("memory/services.md", 4, 1)["hash"])
    memory.write("billing uses Memcached as the cache for invoices", supersedes="memory/services.md#L3")
    memory.edits.forget("memory/services.md#L1")
    write(memory.agent.workspace / "memory" / "gone.md", "- a note to forget whole\n")
    memory.edits.forget("memory/gone.md")
    listed = memory.edits.list_changes()
    assert [c["kind"] for c in listed] == ["forget_note", "forget", "supersede", "update"]
    assert listed[-1]["new_citation"] == "memory/services.md#L4-L4" and listed[-1]["lines"] == 1
    assert all("Redis" not in json.dumps(c) for c in listed)  # the list shows where, not what


# -- bad input changes nothing --------------------------------------------------------------------------------


@pytest.fixture
def hostile(memory: AgentMemory, workspace: Path, sessions: Path) -> AgentMemory:
    """Symlinks into and out of the memory, a transcript, a note outside the workspace."""
    outside = workspace.parent / "outside"
    write(outside / "secret.md", "- the outside note\n- second line\n")
    (workspace / "memory" / "link.md").symlink_to("services.md")
    (workspace / "memory" / "away.md").symlink_to(outside / "secret.md")
    write(workspace / "memory" / "sub" / "inner.md", "- an inner note\n- second line\n")
    (workspace / "memory" / "alias").symlink_to("sub")
    (workspace / "memory" / "outdir").symlink_to(outside)
    write(sessions / "chat.jsonl", turn("user", "a line of a transcript") + "\n")
    return memory


BAD_TARGETS = {
    "a note that does not exist": "memory/nothing.md#L1",
    "lines past the end": "memory/services.md#L7",
    "a range past the end": "memory/services.md#L5-L9",
    "line zero": "memory/services.md#L0",
    "a reversed range": "memory/services.md#L4-L3",
    "a path outside the workspace": "../outside/secret.md#L1",
    "an absolute path outside": "{outside}/secret.md#L1",
    "a dot-dot path": "memory/../../outside/secret.md#L1",
    "a note that is a symlink": "memory/link.md#L3",
    "a note that is a symlink, whole": "memory/link.md",
    "a symlink out of the workspace": "memory/away.md#L1",
    "a folder that is a symlink": "memory/alias/inner.md#L1",
    "a folder linked outside": "memory/outdir/secret.md#L1",
    "not a note": "memory/sub",
    "an empty citation": " ",
    "a NUL byte": "memory/services.md\x00#L1",
}


@pytest.mark.parametrize("case", BAD_TARGETS)
@pytest.mark.parametrize("operation", ["forget", "update", "supersede"])
def test_a_bad_target_is_a_clear_error_and_changes_nothing(
    hostile: AgentMemory, workspace: Path, case: str, operation: str
) -> None:
    citation = BAD_TARGETS[case].format(outside=workspace.parent / "outside")
    before = {**state(hostile), **tree(workspace.parent / "outside")}
    with pytest.raises(RequestError) as refused:
        if operation == "forget":
            hostile.edits.forget(citation)
        elif operation == "update":
            hostile.edits.update(citation, "- replaced", "- anything")
        else:
            hostile.write("billing uses Memcached as the cache", supersedes=citation)
    message = str(refused.value)
    assert message and "Traceback" not in message and len(message) < 400
    assert {**state(hostile), **tree(workspace.parent / "outside")} == before
    assert not hostile.edits.list_changes()


def test_a_transcript_is_never_a_target_of_update_or_supersede(
    with_sessions: Callable[[], AgentMemory], sessions: Path
) -> None:
    write(sessions / "chat.jsonl", turn("user", "a line of a transcript") + "\n")
    memory = with_sessions()
    memory.sync()
    before = state(memory)
    with pytest.raises(RequestError, match="transcript"):
        memory.edits.update("sessions/chat.jsonl#L1", "something else", "anything")
    with pytest.raises(RequestError, match="transcript"):
        memory.write("billing uses Memcached", supersedes="sessions/chat.jsonl#L1")
    assert state(memory) == before


@pytest.mark.parametrize("operation", ["forget", "forget_note", "update", "supersede", "undo"])
def test_a_read_only_note_is_refused(memory: AgentMemory, workspace: Path, operation: str) -> None:
    note = workspace / "memory" / "services.md"
    if operation == "undo":
        memory.edits.forget("memory/services.md#L3")
    note.chmod(0o444)
    before = state(memory)
    with pytest.raises(RequestError, match="read-only"):
        if operation == "forget":
            memory.edits.forget("memory/services.md#L3")
        elif operation == "forget_note":
            memory.edits.forget("memory/services.md")
        elif operation == "update":
            memory.edits.update("memory/services.md#L3", "- replaced", REDIS.join(["- ", ""]))
        elif operation == "supersede":
            memory.write("billing uses Memcached as the cache", supersedes="memory/services.md#L3")
        else:
            memory.edits.undo()
    assert state(memory) == before and stat.S_IMODE(note.stat().st_mode) == 0o444


class _FullDisk:
    """The os module as notefile sees it, with a disk that fills up after `room` bytes, or after `writes` writes."""

    def __init__(self, room: int = 1 << 30, writes: int | None = None) -> None:
        self.room, self.writes = room, writes

    def __getattr__(self, name: str) -> object:
        return getattr(os, name)

    def write(self, fd: int, data: bytes | memoryview) -> int:
        if len(data) > self.room or self.writes == 0:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        self.room -= len(data)
        self.writes = None if self.writes is None else self.writes - 1
        return os.write(fd, data)


@pytest.mark.parametrize("operation", ["forget", "update", "supersede", "undo"])
def test_a_full_disk_mid_edit_leaves_the_note_untouched(
    memory: AgentMemory, workspace: Path, monkeypatch: pytest.MonkeyPatch, operation: str
) -> None:
    note = workspace / "memory" / "services.md"
    if operation == "undo":
        memory.edits.forget("memory/services.md#L3")
    before = state(memory)
    monkeypatch.setattr(notefile, "os", _FullDisk(room=20))
    with pytest.raises((OSError, RequestError)) as full:  # a supersede says the entry was written
        if operation == "forget":
            memory.edits.forget("memory/services.md#L3")
        elif operation == "update":
            memory.edits.update("memory/services.md#L3", "- replaced", REDIS.join(["- ", ""]))
        elif operation == "supersede":
            memory.write(
                "billing uses Memcached as the cache", path="memory/new.md", supersedes="memory/services.md#L3"
            )
        else:
            memory.edits.undo()
    assert os.strerror(errno.ENOSPC) in str(full.value)
    assert isinstance(full.value, OSError) != (operation == "supersede")
    if operation == "supersede":
        assert "memory/new.md#L1-L1 was written, but memory/services.md#L3-L3 was not marked" in str(full.value)
    monkeypatch.undo()
    after = state(memory)
    if operation == "supersede":  # the new entry was written before the old lines were marked
        after.pop(str(workspace / "memory" / "new.md"))
    assert after == before
    assert sorted(p.name for p in note.parent.iterdir()) == ["new.md", "services.md"][operation != "supersede" :]


@pytest.mark.parametrize("operation", ["forget", "update", "supersede", "forget then undo"])
def test_an_edit_keeps_the_notes_mode(memory: AgentMemory, workspace: Path, operation: str) -> None:
    note = workspace / "memory" / "services.md"
    note.chmod(0o640)
    if operation.startswith("forget"):
        memory.edits.forget("memory/services.md#L3")
    elif operation == "update":
        memory.edits.update("memory/services.md#L3", "- replaced", REDIS.join(["- ", ""]))
    else:
        memory.write("billing uses Memcached as the cache", supersedes="memory/services.md#L3")
    if operation.endswith("undo"):
        memory.edits.undo()
    assert note.read_bytes() != NOTE.encode() or operation.endswith("undo")
    assert stat.S_IMODE(note.stat().st_mode) == 0o640


def test_the_data_dirs_records_are_private(
    with_sessions: Callable[[], AgentMemory], sessions: Path, workspace: Path
) -> None:
    os.umask(0o022)
    write(workspace / "memory" / "services.md", NOTE)
    write(sessions / "chat.jsonl", turn("user", "my locker code is 4417 at the gym, remember it") + "\n")
    memory = with_sessions()
    memory.sync()
    memory.edits.forget("memory/services.md#L3")
    memory.edits.forget(memory.search("locker", mode="keyword").results[0].path + "#L1")
    data = memory.agent.store.parent
    for path in [data / "forgotten.json", *(data / "changes").iterdir()]:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    for folder in (data, data / "changes"):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder
    assert "4417" not in (data / "forgotten.json").read_text() and "Redis" not in (data / "forgotten.json").read_text()


# -- more attacks ---------------------------------------------------------------------------------------------


def test_forget_by_query_of_several_entries_of_one_note(
    memory_factory: Callable[..., AgentMemory], workspace: Path
) -> None:
    note = write(
        workspace / "memory" / "tea.md",
        "# Tea\n\n- jasmine tea for Alice at nine\n\n- the kettle is in the garage\n\n- jasmine tea for Bob at ten\n",
    )
    memory = memory_factory()
    memory.sync()
    shown = memory.edits.forget(query="jasmine tea")
    assert len({m["citation"] for m in shown["matches"]}) == len(shown["matches"])
    done = memory.edits.forget(query="jasmine tea", confirm=shown["confirm"])
    assert all(r["forgotten"] for r in done["results"]), done
    assert "jasmine" not in note.read_text() and "kettle" in note.read_text()
    assert memory.edits.undo(len(done["results"]))["undone"]
    assert note.read_text().count("jasmine") == 2


def test_a_supersede_of_lines_that_changed_since_they_were_indexed_writes_nothing(
    memory: AgentMemory, workspace: Path
) -> None:
    note = workspace / "memory" / "services.md"
    note.write_text(NOTE.replace("# Services\n", "# Services\n- inserted by an editor above\n"))  # not synced yet
    before = state(memory)
    with pytest.raises(RequestError, match=r"changed since|no longer holds"):
        memory.write("billing uses Memcached as the cache", supersedes="memory/services.md#L3")
    assert state(memory) == before


def test_a_duplicate_written_with_supersedes_still_marks_the_old_statement(
    memory: AgentMemory, workspace: Path
) -> None:
    first = memory.write("billing uses Memcached as the cache for invoices", path="memory/new.md")
    again = memory.write("Billing uses Memcached as the cache for invoices.", supersedes="memory/services.md#L3")
    assert again["written"] is False and again["duplicate_of"] == first["citation"]
    assert again["superseded"] == "memory/services.md#L3-L3"
    assert f"~~{REDIS}~~" in (workspace / "memory" / "services.md").read_text()


def test_forgotten_transcript_lines_stay_out_of_a_rotated_or_copied_transcript(
    with_sessions: Callable[[], AgentMemory], sessions: Path
) -> None:
    lines = [
        turn("user", "Remember that my locker code is 4417 at the gym."),
        turn("assistant", "Sure."),
        turn("user", "We should repaint the fence in the spring."),
    ]
    transcript = write(sessions / "chat.jsonl", "\n".join(lines) + "\n")
    memory = with_sessions()
    memory.sync()
    path = memory.search("locker code", mode="keyword").results[0].path
    memory.edits.forget(f"{path}#L1")
    transcript.rename(sessions / "chat.jsonl.reset.1")  # the platform rotates it at a session reset
    write(sessions / "copy.jsonl", "\n".join([turn("user", "hello there, friend"), lines[0]]) + "\n")
    memory.sync()
    assert "4417" not in hits(memory, "gym locker code") and "repaint" in hits(memory, "repaint fence")
    copied = next(h.path for h in memory.search("hello there friend", mode="keyword").results)
    assert memory.get(copied)["text"].split("\n")[1] == "[forgotten]"
    memory.edits.undo()
    memory.sync(force=True)
    assert "4417" in hits(memory, "gym locker code")


def test_forget_a_whole_transcript_and_lines_past_its_end(
    with_sessions: Callable[[], AgentMemory], sessions: Path
) -> None:
    lines = [turn("user", f"the spare key number {n} hangs by the door") for n in range(3)]
    transcript = write(sessions / "chat.jsonl", "\n".join(lines) + "\n")
    raw = transcript.read_bytes()
    memory = with_sessions()
    memory.sync()
    path = memory.search("spare key", mode="keyword").results[0].path
    before = state(memory)
    with pytest.raises(RequestError, match="outside the transcript"):
        memory.edits.forget(f"{path}#L4")
    assert state(memory) == before
    done = memory.edits.forget(path)
    assert done["lines"] == 3 and transcript.read_bytes() == raw
    assert memory.search("spare key door", mode="keyword").results == []
    assert memory.get(path)["text"] == "\n".join(["[forgotten]"] * 3)


ODD_NOTES = {
    "mixed endings": b"# Services\r\n\n- billing uses Redis as the cache for invoices\r\n- the queue\n\n- tea\r\n",
    "lone CR": b"# Services\r\r- billing uses Redis as the cache for invoices\r- the deploy queue\r",
    "a byte that is not UTF-8": b"# Services \xff\n\n- billing uses Redis as the cache for invoices\n- caf\xe9 queue\n",
    "a BOM": b"\xef\xbb\xbf# Services\n\n- billing uses Redis as the cache for invoices\n- the deploy queue\n",
    "blank lines around": b"\n\n# Services\n\n\n- billing uses Redis as the cache for invoices\n\n\n",
}


@pytest.mark.parametrize("odd", ODD_NOTES)
@pytest.mark.parametrize("kind", ["forget", "update", "supersede"])
def test_undo_restores_the_exact_bytes_of_odd_notes(
    memory_factory: Callable[..., AgentMemory], workspace: Path, odd: str, kind: str
) -> None:
    note = workspace / "memory" / "services.md"
    note.write_bytes(ODD_NOTES[odd])
    memory = memory_factory()
    memory.sync()
    line = 1 + next(i for i, text in enumerate(memory.get("memory/services.md")["text"].split("\n")) if "Redis" in text)
    if kind == "forget":
        memory.edits.forget(f"memory/services.md#L{line}")
    elif kind == "update":
        memory.edits.update(
            f"memory/services.md#L{line}", "- Memcached", memory.get("memory/services.md", line, 1)["hash"]
        )
    else:
        memory.write(
            "billing uses Memcached as the cache", path="memory/new.md", supersedes=f"memory/services.md#L{line}"
        )
    assert b"Redis as" not in note.read_bytes().replace(b"~~billing uses Redis", b"")
    memory.edits.undo()
    assert note.read_bytes() == ODD_NOTES[odd]


def test_a_transcript_forget_checks_what_the_caller_saw(
    with_sessions: Callable[[], AgentMemory], sessions: Path
) -> None:
    write(sessions / "chat.jsonl", turn("user", "my locker code is 4417 at the gym") + "\n")
    memory = with_sessions()
    memory.sync()
    path = memory.search("locker", mode="keyword").results[0].path
    before = state(memory)
    stale = memory.edits.forget(f"{path}#L1", expect="a line that is not there")
    assert stale["forgotten"] is None and "4417" in stale["current"]["text"] and state(memory) == before
    done = memory.edits.forget(f"{path}#L1", expect=memory.get(path, 1, 1)["hash"])
    assert done["forgotten"] and "4417" not in hits(memory, "locker code")


def test_lines_superseded_already_are_not_superseded_again(memory: AgentMemory, workspace: Path) -> None:
    memory.write(
        "billing uses Memcached as the cache for invoices", path="memory/new.md", supersedes="memory/services.md#L3"
    )
    before = state(memory)
    for cited in ("memory/services.md#L3", "memory/services.md#L2-L3"):  # struck, and struck after a blank
        with pytest.raises(RequestError, match="superseded already"):
            memory.write("billing uses Valkey as the cache", path="memory/new.md", supersedes=cited)
    assert state(memory) == before


def test_an_update_never_writes_the_mask_over_a_secret(
    memory_factory: Callable[..., AgentMemory], workspace: Path
) -> None:
    secret = "sk-proj-Zq8hT3BlbkFJ9xkYw2Lm4Np6Qr8St0Uv"
    note = write(workspace / "memory" / "keys.md", f"# Keys\n\n- the billing key is {secret} for staging\n")
    memory = memory_factory()
    memory.sync()
    seen = memory.get("memory/keys.md", 3, 1)
    assert secret not in seen["text"] and "[REDACTED]" in seen["text"]
    before = state(memory)
    with pytest.raises(RequestError, match="secret"):
        memory.edits.update("memory/keys.md#L3", seen["text"].replace("staging", "production"), seen["hash"])
    assert state(memory) == before and secret in note.read_text()
    done = memory.edits.update("memory/keys.md#L3", "- the billing key moved to the vault", seen["hash"])
    assert done["updated"] and secret not in note.read_text()


def test_a_line_too_long_for_one_chunk_can_be_forgotten_by_its_citation(
    memory_factory: Callable[..., AgentMemory], workspace: Path
) -> None:
    long = "- " + " ".join(f"word{i}" for i in range(3000))
    note = write(workspace / "memory" / "long.md", f"# Long\n\n{long}\n\n- a short line about tea\n")
    memory = memory_factory()
    memory.sync()
    note.write_text(note.read_text().replace("word1500 ", "changed "))  # since it was indexed
    stale = memory.edits.forget("memory/long.md#L3")
    assert stale["forgotten"] is None and "changed" in stale["current"]["text"]
    memory.sync()
    done = memory.edits.forget("memory/long.md#L3")
    assert done["forgotten"] and note.read_text() == "# Long\n\n- a short line about tea\n"
    assert memory.search("word2999", mode="keyword").results == []


@pytest.mark.parametrize("change", ["deleted", "edited"])
def test_a_copy_the_note_no_longer_holds_is_no_duplicate(
    memory_factory: Callable[..., AgentMemory], workspace: Path, change: str
) -> None:
    memory = memory_factory()
    fact = "The billing service uses Redis for its session cache."
    first = memory.write(fact, path="memory/facts.md")
    note = workspace / "memory" / "facts.md"
    if change == "deleted":
        note.unlink()  # by hand, not synced yet
    else:
        note.write_text(note.read_text().replace("Redis", "Valkey"))
    again = memory.write(fact)
    assert again["written"] and again["citation"] != first["citation"]
    assert fact in (workspace / again["path"]).read_text()


def test_forget_by_query_takes_a_transcript_turn_and_a_note_entry_alike(
    with_sessions: Callable[[], AgentMemory], sessions: Path, workspace: Path
) -> None:
    write(workspace / "memory" / "ops.md", "# Ops\n\n- the boiler in the cellar is serviced every October\n")
    transcript = write(sessions / "chat.jsonl", turn("user", "the cellar boiler gets serviced every October") + "\n")
    raw = transcript.read_bytes()
    memory = with_sessions()
    memory.sync()
    shown = memory.edits.forget(query="cellar boiler serviced October")
    assert sorted(m["path"] for m in shown["matches"]) == ["memory/ops.md", "sessions/chat.jsonl"]
    done = memory.edits.forget(query="cellar boiler serviced October", confirm=shown["confirm"])
    assert len(done["results"]) == 2 and all(r["forgotten"] for r in done["results"])
    assert transcript.read_bytes() == raw and "boiler" not in (workspace / "memory" / "ops.md").read_text()
    assert memory.search("cellar boiler", mode="keyword").results == []


def test_undo_of_a_forgotten_note_is_refused_when_a_note_is_there_again(memory: AgentMemory, workspace: Path) -> None:
    memory.edits.forget("memory/services.md")
    write(workspace / "memory" / "services.md", "- a new note at the same path\n")
    before = state(memory)
    with pytest.raises(RequestError, match="exists again"):
        memory.edits.undo()
    assert state(memory) == before


def test_a_forget_names_one_thing_and_its_answer_reads_whole(memory: AgentMemory) -> None:
    from memoryd_client.render import forget_text

    before = state(memory)
    with pytest.raises(RequestError, match="not both"):
        memory.edits.forget("memory/services.md#L3", query="jasmine tea")
    assert state(memory) == before
    partial = {
        "forgotten": ["memory/a.md#L3-L3", None],
        "results": [{"forgotten": "memory/a.md#L3-L3"}, {"forgotten": None, "conflict": "memory/b.md#L2-L2 changed"}],
    }
    assert forget_text(partial) == "Forgotten: memory/a.md#L3-L3\nNot forgotten (1): memory/b.md#L2-L2 changed"


def test_the_same_fact_written_by_twenty_clients_at_once_is_held_once(memory: AgentMemory, workspace: Path) -> None:
    import threading

    fact = "The billing service uses Redis for its session cache."
    start = threading.Barrier(20)
    answers: list[dict] = []

    def client() -> None:
        start.wait()
        answers.append(memory.write(fact))

    threads = [threading.Thread(target=client) for _ in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    text = "".join(p.read_text() for p in (workspace / "memory").glob("*.md"))
    assert text.count("uses Redis for its session cache") == 1
    written = [a for a in answers if a["written"]]
    assert len(written) == 1 and all(a["duplicate_of"] == written[0]["citation"] for a in answers if not a["written"])


@pytest.mark.parametrize("kind", ["forget", "update", "supersede", "forget_note"])
def test_an_entry_written_a_moment_ago_stays_edited(memory: AgentMemory, workspace: Path, kind: str) -> None:
    """The journal watches a fresh write for an editor's save that drops it: memoryd's own edit of it is no such
    save, and must not bring it back."""
    note = workspace / "memory" / "log.md"
    wrong = memory.write("The deploy key lives in vault path secret/old", path="memory/log.md")
    memory.write("the deploy runs every Tuesday at noon", path="memory/log.md")
    if kind == "forget":
        memory.edits.forget(wrong["citation"])
    elif kind == "update":
        memory.edits.update(
            wrong["citation"], "Bob deploys on Fridays only", "The deploy key lives in vault path secret/old"
        )
    elif kind == "supersede":
        memory.write(
            "The deploy key lives in vault path secret/new", path="memory/new.md", supersedes=wrong["citation"]
        )
    else:
        memory.edits.forget("memory/log.md")
    for _ in range(3):
        memory.journal.settle_now()
    text = note.read_text() if note.exists() else ""
    assert "secret/old" not in text.replace("~~The deploy key lives in vault path secret/old~~", "")
    assert text.count("secret/old") <= 1 and ("Tuesday" in text) == (kind != "forget_note")


def test_undo_writes_nowhere_a_symlink_now_leads(memory: AgentMemory, workspace: Path) -> None:
    inner = write(workspace / "memory" / "sub" / "inner.md", "- an inner note to forget\n")
    memory.sync()
    memory.edits.forget("memory/sub/inner.md")
    outside = workspace.parent / "outside"
    outside.mkdir()
    inner.parent.rmdir()
    (workspace / "memory" / "sub").symlink_to(outside)  # the folder is now a link out of the workspace
    before = {**state(memory), **tree(outside)}
    with pytest.raises(RequestError, match="symlink"):
        memory.edits.undo()
    assert {**state(memory), **tree(outside)} == before and not list(outside.iterdir())


def test_undo_works_in_a_workspace_named_through_a_symlink(
    memory_factory: Callable[..., AgentMemory], workspace: Path, tmp_path: Path
) -> None:
    from dataclasses import replace

    write(workspace / "memory" / "services.md", NOTE)
    (tmp_path / "link").symlink_to(workspace)
    memory = memory_factory()
    memory.close()
    linked = AgentMemory(replace(memory.agent, workspace=tmp_path / "link"))
    try:
        linked.sync()
        linked.edits.forget("memory/services.md#L3")
        linked.edits.forget("memory/services.md")
        assert linked.edits.undo(2)["undone"] == [2, 1]
        assert (workspace / "memory" / "services.md").read_bytes() == NOTE.encode()
    finally:
        linked.close()


# an update keeps nothing out of the index, so it writes no forget record: only its change log can fill the disk
@pytest.mark.parametrize(
    ("operation", "writes"),
    [
        (op, n)
        for op in ("forget", "update", "forget note", "forget transcript")
        for n in (0, 1)
        if (op, n) != ("update", 1)
    ],
    ids=lambda value: (
        {0: "the change log", 1: "the forget record"}.get(value, value) if isinstance(value, int) else value
    ),
)
def test_a_full_disk_when_the_change_is_recorded_changes_nothing(
    with_sessions: Callable[[], AgentMemory],
    sessions: Path,
    workspace: Path,
    monkeypatch: pytest.MonkeyPatch,
    operation: str,
    writes: int,
) -> None:
    from memoryd import durable

    write(workspace / "memory" / "services.md", NOTE)
    write(sessions / "chat.jsonl", turn("user", "my locker code is 4417 at the gym") + "\n")
    memory = with_sessions()
    memory.sync()
    memory.edits.forget("memory/services.md#L6")  # the record and the log exist already
    before = state(memory)
    monkeypatch.setattr(durable, "os", _FullDisk(writes=writes))  # the disk fills at the first write, or the next
    with pytest.raises(OSError):
        if operation == "forget":
            memory.edits.forget("memory/services.md#L3")
        elif operation == "forget note":
            memory.edits.forget("memory/services.md")
        elif operation == "update":
            memory.edits.update("memory/services.md#L3", "- replaced", REDIS.join(["- ", ""]))
        else:
            memory.edits.forget("sessions/chat.jsonl#L1")
    monkeypatch.undo()
    assert state(memory) == before
    assert "4417" in hits(memory, "locker code") and REDIS in hits(memory, "billing Redis cache")


def test_a_copy_of_forgotten_text_in_another_note_can_still_be_edited(memory: AgentMemory, workspace: Path) -> None:
    copy = write(workspace / "memory" / "copy.md", NOTE)
    memory.sync()
    memory.edits.forget("memory/services.md#L3")
    seen = memory.get("memory/copy.md", 3, 2)
    assert seen["text"].split("\n")[0] == ""  # get shows the copy of forgotten text blank
    done = memory.edits.update("memory/copy.md#L3-L4", "- the queue is NATS", seen["hash"])
    assert done["updated"] and "Redis" not in copy.read_text()
    write(workspace / "memory" / "third.md", NOTE)
    memory.sync()
    assert memory.edits.forget("memory/third.md#L3")["forgotten"]  # by its citation, as the index holds it blank
    assert "Redis" not in (workspace / "memory" / "third.md").read_text()


def test_an_update_corrects_its_lines_and_hides_no_other_note(memory: AgentMemory, workspace: Path) -> None:
    """A correction replaces the cited lines; the same words in another note (a dated note's history) stay found."""
    history = write(workspace / "memory" / "2026-03-01.md", f"# 2026-03-01\n\n- {REDIS}\n")
    memory.sync()
    memory.edits.update("memory/services.md#L3", "- billing uses Memcached as the cache", REDIS.join(["- ", ""]))
    assert memory.get("memory/2026-03-01.md")["text"] == history.read_text().rstrip("\n")
    assert (
        REDIS in hits(memory, "billing Redis cache invoices")
        and "Redis" not in memory.get("memory/services.md")["text"]
    )


def test_a_forgotten_statement_written_again_on_purpose_is_found(memory: AgentMemory, workspace: Path) -> None:
    memory.edits.forget("memory/services.md#L3")
    assert "Redis" not in hits(memory, "billing Redis cache invoices")
    again = memory.write(REDIS)
    assert again["written"] and REDIS in hits(memory, "billing Redis cache invoices")
    assert REDIS in memory.get(again["path"])["text"]


class _Args(dict):  # type: ignore[type-arg]
    """memctl's parsed arguments, as `edit` reads them."""

    path = ("edit",)


@pytest.mark.parametrize("failure", ["conflict", "daemon error"])
def test_memctl_edit_keeps_what_was_typed_in_the_editor_when_nothing_is_written(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str], failure: str
) -> None:
    import sys

    from memoryd_client import edit_commands
    from memoryd_client.command_line import Exit

    typed = "- billing uses Memcached, as I carefully wrote it"
    script = f"import sys; open(sys.argv[1], 'w').write({typed!r})"
    monkeypatch.setenv("VISUAL", f"{sys.executable} -c {json.dumps(script)}")
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr(edit_commands.tempfile, "tempdir", str(tmp_path))
    current = {"citation": "memory/a.md#L3-L3", "text": "- billing uses Valkey", "hash": "sha256:1"}

    class Client:
        def get(self, *args: object, **kwargs: object) -> dict[str, object]:
            assert args[2] == 1  # one line asked for, as cited
            return {"text": f"- {REDIS}", "hash": "sha256:0"}

        def update(self, *args: object, **kwargs: object) -> dict[str, object]:
            if failure == "daemon error":
                raise Exit(3)
            return {"updated": None, "conflict": "memory/a.md#L3-L3 changed since it was read", "current": current}

    monkeypatch.setattr(edit_commands, "ask", lambda args, call: call(Client()))
    args = _Args(citation="memory/a.md#L3", agent=None, expect=None, text=None, json=False)
    if failure == "conflict":
        assert edit_commands.edit(args) == 1  # type: ignore[arg-type]
    else:
        with pytest.raises(Exit):
            edit_commands.edit(args)  # type: ignore[arg-type]
    out = capsys.readouterr()
    kept = [p for p in tmp_path.iterdir() if p.suffix == ".md"]
    assert len(kept) == 1 and kept[0].read_text() == typed and str(kept[0]) in out.err
    assert ("- billing uses Valkey" in out.out) == (failure == "conflict")  # a conflict shows the current text


def test_a_write_keeps_a_crlf_notes_line_ends_and_a_superseded_heading_stays_a_heading(
    memory: AgentMemory, workspace: Path
) -> None:
    note = workspace / "memory" / "windows.md"
    note.write_bytes(b"# Windows\r\n\r\n- typed on a Windows laptop\r\n")
    memory.sync()
    memory.write("the same note, once more", path="memory/windows.md")
    data = note.read_bytes()
    assert data.endswith(b"\r\n\r\nthe same note, once more\r\n") and data.count(b"\r\n") == data.count(b"\n"), data
    memory.write("# Payments, the new section", path="memory/new.md", supersedes="memory/windows.md#L1")
    first = note.read_text().split("\n")[0]
    assert first.startswith("# ~~Windows~~ *(superseded "), first
    with pytest.raises(RequestError, match="superseded already"):
        memory.write("# Payments again", path="memory/new.md", supersedes="memory/windows.md#L1")


def test_a_change_past_one_that_cannot_be_undone_is_undone_by_its_id(memory: AgentMemory, workspace: Path) -> None:
    note = workspace / "memory" / "services.md"
    memory.edits.forget("memory/services.md#L6")
    memory.edits.forget("memory/services.md#L3", purge=True)
    with pytest.raises(RequestError, match="undo --change"):
        memory.edits.undo()
    before = state(memory)
    for wrong, why in ((99, "no change 99"), (2, "purge")):
        with pytest.raises(RequestError, match=why):
            memory.edits.undo(1, wrong)
        assert state(memory) == before
    assert memory.edits.undo(1, 1)["undone"] == [1]
    assert "jasmine" in note.read_text() and "Redis" not in note.read_text()
    assert "jasmine" in hits(memory, "Alice jasmine tea")
    with pytest.raises(RequestError, match="undone already"):
        memory.edits.undo(1, 1)


@pytest.mark.parametrize("purge", [True, False])
def test_a_purge_leaves_no_copy_of_the_text_in_the_index_files(
    memory: AgentMemory, workspace: Path, purge: bool
) -> None:
    write(workspace / "memory" / "zoo.md", "- the 5521 ocelot purrs loudly at the zoo\n- the 7733 lynx sleeps\n")
    memory.sync()
    index = memory.agent.store

    def on_disk() -> bytes:
        return b"".join(p.read_bytes() for p in index.parent.glob(index.name + "*") if p.suffix != ".lock")

    assert b"ocelot" in on_disk()
    memory.edits.forget("memory/zoo.md#L1", purge=purge)
    assert "ocelot" not in hits(memory, "ocelot zoo") and "lynx" in hits(memory, "lynx sleeps")
    assert (b"ocelot" in on_disk()) is not purge  # without purge the freed pages keep it until they are reused


def test_a_purge_leaves_no_copy_an_earlier_edit_left_nor_a_vector_of_the_text(
    memory: AgentMemory, workspace: Path
) -> None:
    """Editors' saves made the index drop the chunks holding the ocelot several times, without a purge, and their
    old copies sat in pages the index reused or freed. A purge of the line leaves none (the file is rebuilt), and
    the embedding cache keeps no vector of the chunks that held it (a vector says something of its text)."""
    notes = [write(workspace / "memory" / f"n{i}.md", f"- note {i}: the standup is at ten\n" * 30) for i in range(10)]
    zoo = write(workspace / "memory" / "zoo.md", "- the 5521 ocelot purrs loudly at the zoo\n- the 7733 lynx sleeps\n")
    memory.sync()
    store, embedder, index = memory.store, memory.embedder, memory.agent.store
    assert embedder is not None
    for round_ in range(6):
        zoo.write_text(zoo.read_text() + f"- the 99{round_} tapir swims\n")
        for note in notes[round_ : round_ + 4]:
            note.write_text(note.read_text() + f"- round {round_} moved the standup\n")
        memory.sync()
        store.conn.wal_checkpoint(mode=3)  # type: ignore[attr-defined]  # as the daemon's writes do, now and then
    held = [row.hash for row in store.chunks_by_ids(sorted(store.chunk_ids(Filters(path="memory/zoo.md")))).values()]

    def on_disk() -> bytes:
        return b"".join(p.read_bytes() for p in index.parent.glob(index.name + "*") if p.suffix != ".lock")

    cached = store.cache_get(embedder.provider, embedder.model, embedder.key_fingerprint, held)
    assert cached and b"ocelot" in on_disk()
    memory.edits.forget("memory/zoo.md#L1", purge=True)
    assert b"ocelot" not in on_disk() and b"tapir" in on_disk()
    assert not store.cache_get(embedder.provider, embedder.model, embedder.key_fingerprint, list(cached))
    assert "tapir" in hits(memory, "tapir swims", "hybrid") and "ocelot" not in hits(memory, "ocelot zoo", "hybrid")


def test_a_purge_by_query_rebuilds_the_index_once_and_a_note_named_like_a_glob_loses_its_vectors(
    memory: AgentMemory, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Three matches are one merge and one rebuild of the index, not three; and "zoo [1].md" is the note, not a
    pattern that matches "zoo 1.md": its chunks' vectors go with the purge."""
    write(workspace / "memory" / "zoo [1].md", "- the 5521 ocelot purrs at the zoo\n- the lynx sleeps\n")
    write(workspace / "memory" / "zoo 1.md", "- the 5522 ocelot purrs at the farm\n")
    write(workspace / "memory" / "zoo 2.md", "- the 5523 ocelot purrs at the park\n")
    memory.sync()
    store, embedder = memory.store, memory.embedder
    assert embedder is not None
    rows = store.chunks_by_ids(sorted(store.chunk_ids(Filters()))).values()
    ocelots = [row.hash for row in rows if "ocelot" in row.text]
    key = (embedder.provider, embedder.model, embedder.key_fingerprint)
    assert len(store.cache_get(*key, ocelots)) == 3
    rebuilt = []
    real = type(store)._scrub  # type: ignore[attr-defined]
    monkeypatch.setattr(type(store), "_scrub", lambda self: (rebuilt.append(1), real(self)))
    shown = memory.edits.forget(query="ocelot purrs")
    assert len(shown["matches"]) == 3
    done = memory.edits.forget(query="ocelot purrs", confirm=shown["confirm"], purge=True)
    assert len(done["forgotten"]) == 3 and rebuilt == [1]
    assert not store.cache_get(*key, ocelots) and "lynx" in hits(memory, "lynx sleeps")


def test_a_write_while_a_purge_is_indexed_waits_for_nothing(
    memory: AgentMemory, workspace: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A purge's scope holds no lock of the index while the forget is indexed: a write that comes meanwhile takes
    the agent's locks and then the index's, as every write does, and goes through (they once waited on each other)."""
    import threading

    store = memory.store
    entered, release = threading.Event(), threading.Event()
    real = type(store).scrubbed

    @contextlib.contextmanager
    def paused(self: Any) -> Iterator[None]:
        with real(self):
            entered.set()
            assert release.wait(30)
            yield

    monkeypatch.setattr(type(store), "scrubbed", paused)
    purge = threading.Thread(target=lambda: memory.edits.forget("memory/services.md#L6", purge=True))
    purge.start()
    assert entered.wait(30)
    wrote: list[dict[str, Any]] = []
    writer = threading.Thread(target=lambda: wrote.append(memory.write("a write while a purge is indexed")))
    writer.start()
    writer.join(15)
    done = not writer.is_alive()
    release.set()
    purge.join(30)
    writer.join(30)
    assert done and wrote and wrote[0]["written"], "the write waited on the purge"
    assert "jasmine" not in hits(memory, "Alice jasmine tea")


def test_a_change_undone_by_its_id_never_rewrites_the_same_text_elsewhere(memory: AgentMemory, workspace: Path) -> None:
    """Change 1 made line 3 "done", change 2 made it "shipped": "done" is now only on line 5, another statement.
    Undoing change 1 alone finds its text there but not between its lines: refused, nothing changed."""
    note = write(workspace / "memory" / "status.md", "# Status\n\n- status: todo\n- other\n- status: done\n")
    memory.sync()
    memory.edits.update("memory/status.md#L3", "- status: done", "- status: todo")
    memory.edits.update("memory/status.md#L3", "- status: shipped", "- status: done")
    before = note.read_bytes()
    with pytest.raises(RequestError, match="changed since"):
        memory.edits.undo(1, 1)
    assert note.read_bytes() == before
    assert memory.edits.undo(1, 2)["undone"] == [2]  # its own lines, between the ones it was made between
    assert note.read_text() == "# Status\n\n- status: done\n- other\n- status: done\n"


def test_supersede_reads_the_older_two_line_mark_and_strikes_only_what_says_something(
    memory: AgentMemory, workspace: Path
) -> None:
    old = "- ~~billing uses Redis~~\n  *(superseded 2025-01-02 by [memory/b.md#L1-L1](b.md#L1-L1))*\n"
    note = write(workspace / "memory" / "old.md", f"# Old\n\n{old}\n~200 ms p99 for the cache\n- after it\n")
    memory.sync()
    hit = memory.search("billing Redis", mode="keyword", path="memory/old.md").results[0]
    assert hit.path == "memory/old.md" and hit.superseded == "2025-01-02 by memory/b.md#L1-L1"
    before = note.read_bytes()
    for cited, why in (("L3", "superseded already"), ("L4", "superseded already"), ("L3-L4", "superseded already")):
        with pytest.raises(RequestError, match=why):
            memory.write("billing uses Valkey", path="memory/b.md", supersedes=f"memory/old.md#{cited}")
    with pytest.raises(RequestError, match="no statement to strike"):
        memory.write("billing uses Valkey", path="memory/b.md", supersedes="memory/old.md#L5")  # a blank line
    assert note.read_bytes() == before
    memory.write("p99 is 120 ms now", path="memory/b.md", supersedes="memory/old.md#L6")
    lines = note.read_text().split("\n")
    assert lines[5].startswith("~~\\~200 ms p99 for the cache~~ *(superseded ") and lines[6] == "- after it"
    assert (6, 6) in entries(lines)  # its own entry: "~~~" would have opened a code block over the rest
