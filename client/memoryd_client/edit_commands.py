"""memctl's commands that change what memory holds: forget, edit, undo, and the changes they made."""

from __future__ import annotations

import datetime as dt
import os
import re
import shlex
import subprocess
import sys
import tempfile
from typing import Any

from memoryd_client.command_line import Parsed, UsageError
from memoryd_client.commands import ask, emit
from memoryd_client.render import forget_text

CLI_AGAIN = "run again with --confirm {token}"

_CITATION = re.compile(r"^(?P<path>.+?)#L(?P<start>\d+)(?:-L?(?P<end>\d+))?$")


def forget(args: Parsed) -> int:
    target = " ".join(args["target"] or []).strip() or None
    query = args["query"]
    if (target is None) == (query is None):
        raise UsageError("name one thing to forget: a CITATION (or a note's path), or --query", args.path)
    if args["confirm"] is not None and query is None:
        raise UsageError("--confirm goes with --query: the token its first call gave", args.path)
    options = {"expect": args["expect"], "purge": args["purge"], "agent": args["agent"]}
    if query is None:
        done = ask(args, lambda client: client.forget(target, **options))
        emit(args, done, forget_text(done, CLI_AGAIN))
        return 1 if done.get("conflict") else 0
    if args["confirm"] is not None:  # the matches that token stands for, or (they changed since) none
        return _forgot(args, ask(args, lambda client: client.forget(query=query, confirm=args["confirm"], **options)))
    shown = ask(args, lambda client: client.forget(query=query, **options))
    if not shown["matches"]:
        return emit(args, shown, "Nothing matched; nothing forgotten.")
    if not args["yes"]:
        if args["json"] or not sys.stdin.isatty():
            emit(args, shown, forget_text(shown, CLI_AGAIN))
            print("(nothing forgotten: run again with its --confirm, or --yes, or at a terminal)", file=sys.stderr)
            return 1
        for match in shown["matches"]:
            print(f"{match['citation']}\n    {match['snippet'].strip()[:300].replace(chr(10), chr(10) + '    ')}")
        answer = input(f"Forget these {len(shown['matches'])}? [y/N] ").strip().lower()
        if answer not in ("y", "yes"):
            print("nothing forgotten")
            return 1
    return _forgot(args, ask(args, lambda client: client.forget(query=query, confirm=shown["confirm"], **options)))


def _forgot(args: Parsed, done: dict[str, Any]) -> int:
    """A confirmed query forget's answer, and its exit status: 1 when the matches changed between the two calls
    (nothing forgotten) or some lines did (not those)."""
    emit(args, done, forget_text(done, CLI_AGAIN))
    return 1 if done.get("matches") is not None or any(r.get("conflict") for r in done.get("results", [])) else 0


def edit(args: Parsed) -> int:
    """Replace a citation's lines: with --text (or '-' for stdin), else in $EDITOR. What was typed in the editor
    stays in its file until it is written: on a conflict or any failure memctl says where it is."""
    citation = args["citation"]
    cited = _CITATION.match(citation)  # as the daemon reads it: a path may hold "#L" itself
    if cited is None:
        raise UsageError(f"{citation!r} is not a citation such as memory/notes.md#L3-L5", args.path)
    path, first, last = cited["path"], cited["start"], cited["end"]
    count = int(last or first) - int(first) + 1
    if count < 1:
        raise UsageError(f"{citation!r} ends before it starts", args.path)
    seen = ask(args, lambda client: client.get(path, int(first), count, agent=args["agent"]))
    expect = str(args["expect"] or seen.get("hash") or seen["text"])
    text, typed = args["text"], None
    if text is None:
        edited = _in_editor(seen["text"])
        if edited is None:
            print("unchanged; nothing written")
            return 0
        text, typed = edited
    elif text == "-":
        text = sys.stdin.read()
    try:
        done = ask(args, lambda client: client.update(citation, text, expect, agent=args["agent"]))
    except BaseException:
        _kept(typed)
        raise
    if done.get("conflict"):
        current = done["current"]
        emit(
            args,
            done,
            f"nothing written: {done['conflict']}\ncurrent text of {current['citation']}:\n{current['text']}",
        )
        _kept(typed)
        return 1
    if typed is not None:
        os.unlink(typed)
    return emit(args, done, f"updated; now {done.get('citation') or 'removed'} (undo: memctl undo)")


def _kept(typed: str | None) -> None:
    if typed is not None:
        print(f"nothing written; what you typed is kept in {typed}", file=sys.stderr)


def _in_editor(text: str) -> tuple[str, str] | None:
    """The text after the user edited it in $VISUAL / $EDITOR and the file holding it (None: left unchanged, and
    the file gone). The file stays when the editor fails: what was typed may be in it."""
    editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
    with tempfile.NamedTemporaryFile("w+", suffix=".md", encoding="utf-8", delete=False) as handle:
        handle.write(text + "\n")
        name = handle.name
    try:
        subprocess.run([*shlex.split(editor), name], check=True)
        with open(name, encoding="utf-8") as edited:
            new = edited.read().rstrip("\n")
    except BaseException:
        _kept(name)
        raise
    if new == text.rstrip("\n"):
        os.unlink(name)
        return None
    return new, name


def undo(args: Parsed) -> int:
    if args["change"] is not None and args["count"] not in (None, 1):
        raise UsageError("--change undoes one change: leave -n out", args.path)
    done = ask(args, lambda client: client.undo(args["count"], change=args["change"], agent=args["agent"]))
    lines = [f"undid change {r['undone']} ({r['kind']} of {r['path']})" for r in done["results"]]
    return emit(args, done, "\n".join(lines) or "nothing to undo")


def changes(args: Parsed) -> int:
    found = ask(args, lambda client: client.changes(args["limit"], agent=args["agent"]))
    return emit(args, found, "\n".join(_change_line(c) for c in found["changes"]) or "no changes yet")


def _change_line(change: dict[str, Any]) -> str:
    when = dt.datetime.fromtimestamp(change["time"]).strftime("%Y-%m-%d %H:%M")
    state = " (undone)" if change.get("undone") else ""
    if not state and change.get("purged_by"):
        state = f" (text purged by change {change['purged_by']}: cannot be undone)"
    elif not state and change.get("purged"):
        state = " (purged: cannot be undone)"
    now = f" -> {change['new_citation']}" if change.get("new_citation") else ""
    return f"{change['id']:>5}  {when}  {change['kind']:<17} {change['citation']}{now}{state}"
