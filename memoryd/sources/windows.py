"""Windows: a chunk cut again into parts of a few sentences, each embedded on its own. One vector for a 400-token
chunk blurs the sentence a question is about; search scores a chunk by its own vector and its best window's
(docs/design.md, "Vectors for parts of a chunk")."""

from __future__ import annotations

from memoryd.sources.markdown import chunk_markdown, embed_input

WINDOW_TOKENS = 64  # python -m bench.window_study: 64 against 400-token chunks


def window_inputs(heading: str, text: str) -> list[str]:
    """What the embedder sees of each window of a chunk (its heading path, then the window's text), cached by
    its hash as a chunk's is; none for a chunk that is a single window already, whose own vector says it all."""
    parts = chunk_markdown(text, WINDOW_TOKENS, 0)
    if len(parts) < 2:
        return []
    return [embed_input("" if part.text.lstrip().startswith("#") else heading, part.text) for part in parts]
