"""JSON (and JSONC: comments, trailing commas) read with where each value sits, so that memoryd's entries go in and
come out as text and every other byte of the file stays as it was."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Any

from memoryd_client.integrations.files import IntegrationError

Keys = list[str | int]

WHITESPACE = re.compile(r"[ \t\r\n]*")
INDENT = re.compile(r"[ \t]*")
LINE_INDENT = re.compile(r"\n([ \t]+)\S")
STRING = re.compile(r'"(?:[^"\\\x00-\x1f]|\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4}))*"')
NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")
LITERALS = {"true": True, "false": False, "null": None}
MAX_DEPTH = 200


@dataclass
class Node:
    start: int
    end: int
    value: Any = None  # a string, number, true, false or null
    children: list[Child] | None = None  # an object's members or a list's items
    is_object: bool = False

    @property
    def kind(self) -> str:
        if self.children is not None:
            return "an object" if self.is_object else "a list"
        return {str: "a string", bool: "a boolean", type(None): "null"}.get(type(self.value), "a number")


@dataclass
class Child:
    key: str | None  # None in a list
    start: int  # the key's start in an object
    node: Node
    comma: int | None = None  # the comma after it

    @property
    def end(self) -> int:
        return self.node.end


def plain(node: Node) -> Any:
    if node.children is None:
        return node.value
    if node.is_object:
        return {c.key: plain(c.node) for c in node.children}
    return [plain(c.node) for c in node.children]


class _Parser:
    def __init__(self, text: str, comments: bool) -> None:
        self.text, self.comments, self.pos = text, comments, 0

    def fail(self, what: str) -> ValueError:
        line = self.text.count("\n", 0, self.pos) + 1
        column = self.pos - self.text.rfind("\n", 0, self.pos)
        return ValueError(f"line {line}, column {column}: {what}")

    def skip(self) -> None:
        while True:
            self.pos = WHITESPACE.match(self.text, self.pos).end()  # type: ignore[union-attr]
            if not self.comments or not self.text.startswith(("//", "/*"), self.pos):
                return
            if self.text.startswith("//", self.pos):
                end = self.text.find("\n", self.pos)
                self.pos = len(self.text) if end < 0 else end
            else:
                end = self.text.find("*/", self.pos + 2)
                if end < 0:
                    raise self.fail("a comment that does not end")
                self.pos = end + 2

    def document(self) -> Node:
        if self.text.startswith("\ufeff"):
            self.pos = 1
        node = self.value(0)
        self.skip()
        if self.pos != len(self.text):
            raise self.fail("more text after the value")
        return node

    def value(self, depth: int) -> Node:
        if depth > MAX_DEPTH:
            raise self.fail("nested too deep")
        self.skip()
        start = self.pos
        if self.text.startswith(("{", "["), start):
            return self.container(depth)
        for pattern in (STRING, NUMBER):
            found = pattern.match(self.text, start)
            if found:
                self.pos = found.end()
                return Node(start, self.pos, json.loads(found.group()))
        for word, value in LITERALS.items():
            if self.text.startswith(word, start):
                self.pos = start + len(word)
                return Node(start, self.pos, value)
        raise self.fail("a value was expected")

    def container(self, depth: int) -> Node:
        start, is_object = self.pos, self.text[self.pos] == "{"
        close = "}" if is_object else "]"
        children: list[Child] = []
        self.pos += 1
        while True:
            self.skip()
            if self.text.startswith(close, self.pos) and (not children or self.comments):
                self.pos += 1
                return Node(start, self.pos, children=children, is_object=is_object)
            key, child_start = None, self.pos
            if is_object:
                found = STRING.match(self.text, self.pos)
                if not found:
                    raise self.fail("a key in double quotes was expected")
                key = json.loads(found.group())
                self.pos = found.end()
                self.skip()
                if not self.text.startswith(":", self.pos):
                    raise self.fail("':' was expected")
                self.pos += 1
            child = Child(key, child_start, self.value(depth + 1))
            children.append(child)
            self.skip()
            if self.text.startswith(",", self.pos):
                child.comma = self.pos
                self.pos += 1
            elif self.text.startswith(close, self.pos):
                self.pos += 1
                return Node(start, self.pos, children=children, is_object=is_object)
            else:
                raise self.fail(f"',' or '{close}' was expected")


def parse(text: str, comments: bool = False) -> Node:
    """The document's tree; ValueError saying where it is not JSON (or JSONC, with comments)."""
    return _Parser(text, comments).document()


def _line_indent(text: str, pos: int) -> str | None:
    """The whitespace before pos when pos starts its line."""
    before = text[text.rfind("\n", 0, pos) + 1 : pos]
    return before if not before.strip() else None


def _outer_indent(text: str, pos: int) -> str:
    return INDENT.match(text, text.rfind("\n", 0, pos) + 1).group()  # type: ignore[union-attr]


def _render(key: str | None, value: Any, indent: str | None, unit: str = "  ", newline: str = "\n") -> str:
    """value as JSON text that starts at indent (on one line when indent is None), nested by unit."""
    body = json.dumps(value, ensure_ascii=False, indent=None if indent is None else unit)
    body = body.replace("\n", newline + (indent or ""))
    return body if key is None else f"{json.dumps(key, ensure_ascii=False)}: {body}"


def insert(text: str, container: Node, value: Any, key: str | None = None) -> str:
    """text with value added as container's last member (key) or item, in the style of the ones before it."""
    children = container.children or []
    newline = "\r\n" if "\r\n" in text else "\n"
    outer = _outer_indent(text, container.start)
    if children:
        last = children[-1]
        indent = _line_indent(text, last.start)
        unit = indent[len(outer) :] if indent and indent.startswith(outer) and indent != outer else "  "
        gap = newline + indent if indent is not None else " "
        return text[: last.end] + "," + gap + _render(key, value, indent, unit, newline) + text[last.end :]
    inside = container.start + 1
    line_end = text.find("\n", container.end)
    on_one_line = text[container.end : None if line_end < 0 else line_end].replace(",", "").strip()
    if text[inside : container.end - 1] or on_one_line:
        return text[:inside] + _render(key, value, None) + text[inside:]
    indents = [found.group(1) for found in LINE_INDENT.finditer(text)]
    unit = min(indents, key=len) if indents else "  "
    entry = _render(key, value, outer + unit, unit, newline)
    return text[:inside] + newline + outer + unit + entry + newline + outer + text[inside:]


def remove(text: str, container: Node, index: int) -> str:
    """text without container's child at index: the exact inverse of insert, and valid whatever surrounds it."""
    children = container.children or []
    child = children[index]
    after = child.comma + 1 if child.comma is not None else child.end
    if len(children) == 1:
        before, rest = text[container.start + 1 : child.start], text[after : container.end - 1]
        if "\n" in before and not before.strip() and not rest.strip():
            return text[: container.start + 1] + text[container.end - 1 :]
        return text[: child.start] + text[after:]
    if index == 0:
        following = children[1].start
        if _has_comment(text[child.end : following]):
            return text[: child.start] + text[after:]
        return text[: child.start] + text[following:]
    previous = children[index - 1]
    assert previous.comma is not None
    if _has_comment(text[previous.end : child.start]):
        if child.comma is not None:
            return text[: child.start] + text[after:]
        return text[: previous.comma] + text[previous.comma + 1 : child.start] + text[child.end :]
    return text[: previous.end] + text[child.end :]


def _has_comment(gap: str) -> bool:
    """Whether the gap between two values holds more than whitespace and their comma: a comment, which stays."""
    return bool(gap.replace(",", "", 1).strip())


def dotted(keys: Keys) -> str:
    shown = "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in keys).lstrip(".")
    return shown or "the top level"


class Document:
    """One JSON file's text, edited one entry at a time; every error names the file and the key."""

    def __init__(self, path: str, text: str, comments: bool = False) -> None:
        self.path, self.text, self.comments = path, text, comments
        self.root = self._parse(text)

    def _parse(self, text: str) -> Node:
        try:
            return parse(text, self.comments)
        except ValueError as exc:
            kind = "JSONC" if self.comments else "JSON"
            raise IntegrationError(f"{self.path} is not valid {kind} ({exc}): fix it, then run this again") from None

    def find(self, keys: Keys) -> Node | None:
        """The value at keys; None when a key is missing; an error when a key is there twice."""
        node: Node | None = self.root
        for depth, key in enumerate(keys):
            children = None if node is None else node.children
            if node is None or children is None:
                return None
            if isinstance(key, int):
                node = children[key].node if not node.is_object and key < len(children) else None
                continue
            found = [c for c in children if c.key == key] if node.is_object else []
            if len(found) > 1:
                raise self.error(keys[: depth + 1], "is there twice")
            node = found[0].node if found else None
        return node

    def container(self, keys: Keys, is_object: bool) -> Node | None:
        """The object (or list) at keys, None when missing; an error when something else is there."""
        node = self.find(keys)
        if node is not None and (node.children is None or node.is_object != is_object):
            raise self.error(keys, f"is {node.kind}, not {'an object' if is_object else 'a list'}")
        return node

    def error(self, keys: Keys, what: str) -> IntegrationError:
        return IntegrationError(f"{self.path}: {dotted(keys)} {what}, which memoryd does not know how to edit")

    def add(self, keys: Keys, value: Any, key: str | None = None) -> None:
        container = self.find(keys)
        assert container is not None
        self._replace(insert(self.text, container, value, key))

    def drop(self, keys: Keys, index: int) -> None:
        container = self.find(keys)
        assert container is not None
        self._replace(remove(self.text, container, index))

    def drop_if_empty(self, keys: Keys) -> None:
        """Take out the member at keys when it holds nothing (an empty object or list)."""
        parent = self.find(keys[:-1])
        if parent is None or not parent.is_object or parent.children is None:
            return
        for index, child in enumerate(parent.children):
            if child.key == keys[-1] and child.node.children == []:
                self.drop(keys[:-1], index)
                return

    def _replace(self, text: str) -> None:
        try:
            self.root = parse(text, self.comments)
        except ValueError as exc:
            raise IntegrationError(f"{self.path}: memoryd's edit of it would not parse ({exc})") from None
        self.text = text
