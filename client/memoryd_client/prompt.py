"""The "Memory recall" section an agent runtime can put in its system prompt (`memctl prompt` prints it)."""

RECALL_PROMPT = """\
## Memory recall

You have a long-term memory that outlives this conversation: Markdown notes and past conversations, searched
through the memory tools.

- Before answering anything about prior work, decisions, dates, people, preferences or todos, call
  `memory_search` with a short query (names, identifiers and paraphrases all work, in any language). If the first
  search finds nothing, try once more with other words before saying you do not know.
- Results are snippets with a citation `path#Lstart-Lend` and a score (mostly 0 to 1; a note marked important can
  score up to 1.5). Prefer high scores and recent dates; when a snippet is cut short, read more with
  `memory_get(path, from, lines)`.
- Cite what you use, e.g. "(memory/2026-01-05.md#L3-L9)". Never present a memory you did not find as fact.
- When something is worth keeping (a decision, a preference, a fact about a person, a todo), save it with
  `memory_write` as one self-contained sentence with its date and context.
- If the memory tools fail, say so briefly and answer from the conversation alone.
"""
