"""How a method and its parameters are declared (memoryd_client.protocol.schema declares them): a parameter's wire
name, type, default, bounds and help, and a request as a class of typed attributes. Imports nothing, as the schema."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any, ClassVar

_REQUIRED: Any = object()


def inspect_annotations(cls: type) -> dict[str, str]:
    """The class's own annotations, as strings (inspect.get_annotations without importing inspect)."""
    return dict(cls.__dict__.get("__annotations__", {}))  # noqa: RUF063


class Param:
    """One parameter: its wire name, type (from the annotation), default, bounds, choices and help. `cli` is
    memctl's flags for it (None: not an option there; () for the default `--name`); `mcp` whether the MCP tool
    offers it. A string may have a `max_length`; a `path` has no NUL; a note's `text` no control character but tab
    and line ends; a name outside `known` is taken as OTHER_CLIENT."""

    __slots__ = (
        "choices",
        "cli",
        "default",
        "ge",
        "help",
        "known",
        "le",
        "max_length",
        "mcp",
        "name",
        "path",
        "text",
        "types",
        "wire",
    )

    def __init__(
        self,
        default: Any,
        help: str,
        *,
        ge: float | None = None,
        le: float | None = None,
        choices: tuple[str, ...] | None = None,
        cli: tuple[str, ...] | None = (),
        mcp: bool = True,
        wire: str | None = None,
        max_length: int | None = None,
        path: bool = False,
        text: bool = False,
        known: tuple[str, ...] | None = None,
    ) -> None:
        self.default, self.help, self.ge, self.le, self.choices = default, help, ge, le, choices
        self.cli, self.mcp, self.wire = cli, mcp, wire or ""  # the attribute's name unless given
        self.max_length, self.path, self.text, self.known = max_length, path, text, known
        self.name = ""
        self.types: tuple[str, ...] = ()

    @property
    def required(self) -> bool:
        return self.default is _REQUIRED

    @property
    def optional(self) -> bool:
        """None is a value it takes (the daemon's or the agent's default applies)."""
        return "None" in self.types

    @property
    def many(self) -> bool:
        return "list[str]" in self.types

    @property
    def scalar(self) -> str:
        """Its one-value type: str, int, float or bool (for a list, its element's)."""
        kinds = [t for t in self.types if t != "None"]
        return "str" if kinds == ["list[str]"] else kinds[0]

    def __repr__(self) -> str:
        return f"Param({self.wire!r}: {' | '.join(self.types)})"


def param(default: Any = _REQUIRED, help: str = "", **details: Any) -> Any:
    return Param(default, help, **details)


class Request:
    """A method's request; subclasses declare the parameters as annotated class attributes."""

    method: ClassVar[str] = ""
    summary: ClassVar[str] = ""
    returns: ClassVar[str] = ""
    idempotent: ClassVar[bool] = False  # only reads: a client may send it again after a lost connection
    lane: ClassVar[str] = "shared"  # where the daemon runs it: inline (event loop), control, bulk, jobs or shared
    params: ClassVar[tuple[Param, ...]] = ()
    _by_wire: ClassVar[dict[str, Param]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        found = []
        for name, annotation in inspect_annotations(cls).items():
            spec = cls.__dict__.get(name)
            if not isinstance(spec, Param):
                continue
            spec.name, spec.wire = name, spec.wire or name
            spec.types = tuple(t.strip() for t in str(annotation).split("|"))
            found.append(spec)
        cls.params = tuple(found)
        cls._by_wire = {p.wire: p for p in found}

    def __init__(self, **values: Any) -> None:
        names = [p.name for p in self.params]
        unknown = sorted(set(values).difference(names))
        if unknown:
            raise TypeError(f"{self.method}() got unknown parameters {', '.join(unknown)}; it takes {', '.join(names)}")
        for spec in self.params:
            if spec.name in values:
                setattr(self, spec.name, values[spec.name])
            elif spec.required:
                raise TypeError(f"{self.method}() needs {spec.wire}")
            else:
                setattr(self, spec.name, spec.default)

    @classmethod
    def by_wire(cls) -> dict[str, Param]:
        """The parameters by their wire names (worked out once, when the class was made)."""
        return cls._by_wire

    def wire_params(self) -> dict[str, Any]:
        """The values given that differ from the defaults, by their wire names (what a client sends); None is
        not given."""
        values = ((p, getattr(self, p.name)) for p in self.params)
        return {p.wire: v for p, v in values if v is not None and v != p.default}

    def items(self) -> Iterator[tuple[str, Any]]:
        return ((p.name, getattr(self, p.name)) for p in self.params)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({', '.join(f'{k}={v!r}' for k, v in self.items())})"
