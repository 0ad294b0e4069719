"""Read the pieces of a SentencePiece `tokenizer.model` (a protobuf ModelProto) without the sentencepiece package.

Only field 1 of ModelProto is read: the repeated `SentencePiece {piece = 1; score = 2; type = 3}`. The wire format is
protobuf's, of which this needs varints, 32-bit floats and length-delimited fields; other fields are skipped.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from enum import IntEnum
from pathlib import Path


class PieceType(IntEnum):
    """SentencePiece's own numbering (sentencepiece_model.proto), the same as GGUF's token types."""

    NORMAL = 1
    UNKNOWN = 2
    CONTROL = 3
    USER_DEFINED = 4
    UNUSED = 5
    BYTE = 6


@dataclass(frozen=True)
class Piece:
    text: str
    score: float
    kind: PieceType


class ModelFormatError(ValueError):
    """The file is not a SentencePiece model this reader understands."""


def _varint(data: bytes | memoryview, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if at >= len(data):
            raise ModelFormatError("truncated varint")
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, at
        shift += 7
        if shift > 63:
            raise ModelFormatError("varint too long")


def _fields(data: bytes | memoryview) -> list[tuple[int, int, int | float | memoryview]]:
    """(field number, wire type, value) of one message; length-delimited values stay views."""
    out: list[tuple[int, int, int | float | memoryview]] = []
    view = memoryview(data)
    at = 0
    while at < len(view):
        key, at = _varint(view, at)
        number, wire = key >> 3, key & 7
        value: int | float | memoryview
        if wire == 0:
            value, at = _varint(view, at)
        elif wire == 1:
            value, at = struct.unpack_from("<d", view, at)[0], at + 8
        elif wire == 2:
            size, at = _varint(view, at)
            if at + size > len(view):
                raise ModelFormatError("truncated field")
            value, at = view[at : at + size], at + size
        elif wire == 5:
            value, at = struct.unpack_from("<f", view, at)[0], at + 4
        else:
            raise ModelFormatError(f"unsupported protobuf wire type {wire}")
        out.append((number, wire, value))
    return out


def read_pieces(path: Path) -> list[Piece]:
    """Every piece, in id order."""
    try:
        return _pieces(path)
    except (struct.error, UnicodeDecodeError) as exc:
        raise ModelFormatError(f"{path} is not a SentencePiece model: {exc}") from exc


def _pieces(path: Path) -> list[Piece]:
    pieces = []
    for number, _, value in _fields(path.read_bytes()):
        if number != 1 or not isinstance(value, memoryview):
            continue
        text, score, kind = "", 0.0, PieceType.NORMAL
        for field, _, item in _fields(value):
            if field == 1 and isinstance(item, memoryview):
                text = bytes(item).decode("utf-8")
            elif field == 2 and isinstance(item, float):
                score = item
            elif field == 3 and isinstance(item, int):
                try:
                    kind = PieceType(item)
                except ValueError as exc:
                    raise ModelFormatError(f"unknown piece type {item}") from exc
        pieces.append(Piece(text, score, kind))
    if not pieces:
        raise ModelFormatError(f"{path} holds no SentencePiece pieces")
    return pieces
