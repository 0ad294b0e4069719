"""Conversations as memory: dialogue notes and transcripts find the turn that answers, and cite it."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from memoryd.memory import AgentMemory

from .conftest import write
from .test_recall import transcript_memory

SMALL_TALK = [
    "Hey! Good to see you again, how was the week?",
    "Busy as always, the kids had a school play and I helped with the costumes all evening.",
    "That sounds lovely, I bet they were proud to be on stage in front of everyone.",
    "They were! Afterwards we went for ice cream and talked about the songs for an hour.",
    "I have been reading a lot lately, mostly novels about the sea and old sailing ships.",
    "Nice, any favourite so far? I could use a recommendation for the holidays this winter.",
]
ANSWER = "I went to the LGBTQ support group yesterday and it was so powerful to hear everyone's stories."
MORE_TALK = [
    "That is wonderful, I am really glad you found people who understand what you are going through.",
    "Me too. By the way, did you finish painting the living room walls in that blue colour?",
    "Almost, one wall left. The colour turned out darker than on the sample card though.",
    "Darker can be cosy in winter, I would keep it and add a warm lamp in the corner.",
]


def dialogue(speakers: tuple[str, str]) -> list[tuple[str, str]]:
    turns = [*SMALL_TALK, ANSWER, *MORE_TALK]
    return [(speakers[i % 2], text) for i, text in enumerate(turns)]


def test_a_dialogue_note_cites_the_turn_that_answers(
    workspace: Path, memory_factory: Callable[..., AgentMemory]
) -> None:
    turns = dialogue(("Caroline", "Melanie"))
    lines = ["# Caroline and Melanie", "", *(f"{who}: {text}" for who, text in turns)]
    write(workspace / "memory" / "2023-05-08.md", "\n".join(lines) + "\n")
    write(workspace / "memory" / "2023-06-01.md", "# Other day\n\nMelanie: We went camping by the lake in June.\n")
    memory = memory_factory()
    memory.sync()
    answer_line = lines.index(f"Caroline: {ANSWER}") + 1
    hit = memory.search("When did Caroline go to the LGBTQ support group?", mode="keyword").results[0]
    assert hit.path == "memory/2023-05-08.md"
    assert hit.start_line <= answer_line <= hit.end_line  # the citation holds the answering turn
    assert hit.end_line - hit.start_line < hit.chunk_end_line - hit.chunk_start_line  # and is narrower than its chunk
    assert hit.citation == f"memory/2023-05-08.md#L{hit.start_line}-L{hit.end_line}"
    # the note's date answers "when" questions by keyword too
    dated = memory.search("what happened on 8 May 2023", mode="keyword").results
    assert dated and dated[0].path == "memory/2023-05-08.md"


def test_a_transcript_with_speaker_names_cites_the_answering_line(workspace: Path, data_dir: Path) -> None:
    sessions = workspace / "sessions"
    records = [json.dumps({"type": "session", "id": "s1", "timestamp": "2023-05-08T13:56:00"})]
    answer_line = 0
    for i, (who, text) in enumerate(dialogue(("Caroline", "Melanie"))):
        message = {"role": "user" if who == "Caroline" else "assistant", "name": who, "content": text}
        records.append(json.dumps({"type": "message", "timestamp": f"2023-05-08T14:{i:02d}:00Z", "message": message}))
        if text == ANSWER:
            answer_line = len(records)
        tool = {"role": "toolResult", "content": [{"type": "text", "text": "ok"}]}
        records.append(json.dumps({"type": "message", "message": tool}))  # skipped, yet it numbers a line
    write(sessions / "chat.jsonl", "\n".join(records) + "\n")
    with transcript_memory(workspace, data_dir, sessions) as memory:
        memory.sync()
        hit = memory.search("When did Caroline go to the LGBTQ support group?", mode="keyword").results[0]
        assert hit.source == "sessions"
        assert hit.start_line <= answer_line <= hit.end_line
        assert hit.end_line - hit.start_line < hit.chunk_end_line - hit.chunk_start_line
        assert "Caroline (user): I went to the LGBTQ support group" in hit.snippet
        by_date = memory.search("8 May 2023 support group", mode="keyword").results
        assert by_date and by_date[0].source == "sessions"
