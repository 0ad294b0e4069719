"""Requests checked against memoryd_client.protocol.schema with pydantic: the daemon checks every call with it, the
library every search, and the MCP bridge takes its tool schemas from the same types.

Strict: a string is not a number, 0 is not false, a map is not a list, numbers are finite, a string keeps to its
length, a path holds no NUL and a note's text no control character but tab and line ends."""

from __future__ import annotations

import math
import re
from functools import partial
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, ConfigDict, Field, StrictBool, StrictFloat, StrictInt, StrictStr, ValidationError
from pydantic import create_model as _create_model

from memoryd_client.protocol.request import Param, Request
from memoryd_client.protocol.schema import METHODS, OTHER_CLIENT


class InvalidParams(ValueError):
    """The request's parameters do not fit the method's schema; the message names each bad one."""


def _finite(value: float) -> float:
    if not math.isfinite(value):
        raise ValueError("must be a finite number")
    return value


def _no_nul(value: str) -> str:
    """A NUL cannot be in a path: the OS refuses it (ValueError: embedded null byte)."""
    if "\0" in value:
        raise ValueError("a path cannot contain a NUL character")
    return value


# what a note may hold: a NUL makes the note binary to every reader (the index skips it); the others are terminal
# escapes and page breaks no one types into a memory
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def _plain_text(value: str) -> str:
    found = _CONTROL.search(value)
    if found is not None:
        raise ValueError(
            f"a note's text cannot hold the control character U+{ord(found.group()):04X} (at character "
            f"{found.start() + 1}): only tabs and line ends"
        )
    return value


def _known(names: tuple[str, ...], value: str) -> str:
    """A name outside `names` as OTHER_CLIENT: what clients call themselves cannot grow the daemon's tables."""
    return value if value in names else OTHER_CLIENT


def _string(spec: Param, typ: Any) -> Any:
    """The string type with the parameter's length cap and checks, if it has any."""
    checks: list[Any] = []
    if spec.max_length is not None:
        checks.append(Field(max_length=spec.max_length))
    if spec.path:
        checks.append(AfterValidator(_no_nul))
    if spec.text:
        checks.append(AfterValidator(_plain_text))
    if spec.known:
        checks.append(AfterValidator(partial(_known, spec.known)))
    for check in checks:  # Annotated[Annotated[t, a], b] is Annotated[t, a, b]
        typ = Annotated[typ, check]
    return typ


Number = Annotated[StrictInt | StrictFloat, AfterValidator(_finite)]
_STRICT: dict[str, Any] = {"str": StrictStr, "int": StrictInt, "float": Number, "bool": StrictBool}
_LAX: dict[str, Any] = {"str": str, "int": int, "float": float, "bool": bool}


def annotation(spec: Param, *, strict: bool = True) -> Any:
    """The parameter's type for pydantic: its choices as a Literal, its bounds and help as a Field."""
    base = _STRICT if strict else _LAX
    one = Literal[spec.choices] if spec.choices else base[spec.scalar]
    if spec.scalar == "str" and not spec.choices:
        one = _string(spec, one)
    options: list[Any] = []
    for kind in spec.types:
        if kind == "list[str]":
            options.append(list[one])  # type: ignore[valid-type]  # a type built at run time, for pydantic
        elif kind != "None":
            options.append(one if kind == spec.scalar else base[kind])
    typ: Any = options[0]
    for other in options[1:]:
        typ = typ | other
    bounded = spec.ge is not None or spec.le is not None
    typ = Annotated[typ, Field(description=spec.help, ge=spec.ge, le=spec.le)] if bounded or not strict else typ
    return typ | None if spec.optional else typ


_MODELS: dict[str, Any] = {}


def model(method: type[Request]) -> Any:
    """The pydantic model of a method's parameters, made once."""
    if method.method in _MODELS:
        return _MODELS[method.method]
    fields: dict[str, Any] = {
        spec.name: (annotation(spec), ... if spec.required else spec.default) for spec in method.params
    }
    config = ConfigDict(strict=True, extra="forbid")
    made = _MODELS[method.method] = _create_model(f"{method.__name__}Params", __config__=config, **fields)
    return made


def _explain(exc: ValidationError, method: type[Request]) -> str:
    """One clause per bad parameter, named as the protocol names it. Of a union's complaints, the ones about the
    value are kept over the ones about the other branches' types ("should be a valid list")."""
    wire = {p.name: p.wire for p in method.params}
    found: dict[str, list[tuple[str, str]]] = {}
    for error in exc.errors():
        head, *rest = error["loc"] or ("params",)
        name = ".".join([wire.get(str(head), str(head)), *(str(i) for i in rest if isinstance(i, int))])
        message = error["msg"].lower()
        if error["type"] == "extra_forbidden":
            message = f"unknown parameter; {method.method} takes {', '.join(wire.values()) or 'none'}"
        found.setdefault(name, []).append((error["type"], message))
    problems = []
    for name, errors in found.items():
        about_value = [m for kind, m in errors if not kind.endswith("_type")] or [m for _, m in errors]
        problems += [f"'{name}': {m}" for m in dict.fromkeys(about_value)]
    return "; ".join(problems)


def validate(method: type[Request], args: list[Any] | None = None, named: dict[str, Any] | None = None) -> Request:
    """A request from positional arguments (in the schema's order) or named ones (by wire name)."""
    params = method.params
    if args and len(args) > len(params):
        raise InvalidParams(f"{method.method} takes at most {len(params)} arguments, got {len(args)}")
    values: dict[str, Any] = {spec.name: value for spec, value in zip(params, args or [], strict=False)}
    by_wire = method.by_wire()
    for key, value in (named or {}).items():
        spec = by_wire.get(key)
        values[spec.name if spec else key] = value
    try:
        checked = model(method).model_validate(values)
    except ValidationError as exc:
        raise InvalidParams(f"{method.method}: {_explain(exc, method)}") from None
    return method(**{spec.name: getattr(checked, spec.name) for spec in params})


def request(method: str, **values: Any) -> Request:
    """A checked request by Python names (`from_`), as a program builds one."""
    cls = METHODS[method]
    names = {p.name: p for p in cls.params}
    return validate(cls, named={names[k].wire if k in names else k: v for k, v in values.items()})
