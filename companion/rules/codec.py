"""JSON encoding of the engine's frozen dataclasses, driven by their type hints.

Supported field types: int, str, bool, float, None, StrEnum, nested frozen dataclasses,
``tuple[X, ...]``, ``tuple[X, Y]``, ``X | None`` and ``dict[str, X]``. Tuples become lists.
`decode(cls, encode(x)) == x` holds for every state and move of the engine.

Decoding is strict: every field is type-checked (a bool is no int, a string no number,
unknown fields are refused) and every error is a ValueError naming the field. What comes
from outside (a move from a screen or a game record) is also decoded with `Limits`, which
bound integers, strings and lists, so no value the rules or the store cannot handle gets in
(an integer of 5,000 digits cannot even be printed). `schema(tp, limits)` describes the same
checks as JSON Schema, generated from the same hints (the API lists one per move kind).

The conformance test round-trips every state of thousands of games, so each type's decoder
is built once from its hints (a closure per type, cached) instead of re-reading the hints on
every call.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from functools import cache
from typing import Any, Union

Decoder = Callable[[object, str], object]
Schema = dict[str, object]  # a JSON Schema


@dataclass(frozen=True, slots=True)
class Limits:
    """Bounds on decoded values from outside: integers within +-`integer`, strings of at
    most `string` characters, lists of at most `items` entries."""

    integer: int = 2**31 - 1
    string: int = 64
    items: int = 64


# a move from a screen or a record: seats, box numbers, dice values and names are small
MOVE_LIMITS = Limits()


def encode(value: Any) -> Any:
    if isinstance(value, bool | int | float | str) or value is None:
        return value
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, tuple | list):
        return [encode(v) for v in value]
    if isinstance(value, dict):
        return {str(k): encode(v) for k, v in value.items()}
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {name: encode(getattr(value, name)) for name in _field_names(type(value))}
    raise TypeError(f"cannot encode {type(value).__name__}")


@cache
def _field_names(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(cls) if f.init)


def decode(tp: object, data: object, where: str = "", limits: Limits | None = None) -> Any:
    """Build a value of type `tp` from JSON data; raises ValueError naming the field (and
    the bound broken, with `limits`)."""
    return _decoder(tp, limits)(data, where or getattr(tp, "__name__", str(tp)))


@cache
def _decoder(tp: object, limits: Limits | None = None) -> Decoder:
    origin = typing.get_origin(tp)
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        return _dataclass_decoder(tp, limits)
    if origin in (Union, types.UnionType):
        return _union_decoder(typing.get_args(tp), limits)
    if origin is tuple:
        args = typing.get_args(tp)
        if len(args) == 2 and args[1] is Ellipsis:
            return _var_tuple_decoder(args[0], limits)
        return _fixed_tuple_decoder(args, limits)
    if origin is dict:
        key_type, value_type = typing.get_args(tp)
        return _dict_decoder(key_type, value_type, limits)
    if isinstance(tp, type) and issubclass(tp, Enum):
        return _enum_decoder(tp)
    if tp in _SCALARS:
        return _bounded_scalar(tp, limits) if limits is not None else _SCALARS[tp]
    raise TypeError(f"cannot decode type {tp!r}")


def _dataclass_decoder(cls: type, limits: Limits | None) -> Decoder:
    hints = typing.get_type_hints(cls)
    fields = [f for f in dataclasses.fields(cls) if f.init]
    # decoders are looked up lazily: a dataclass may refer to itself or to a later class
    required = {
        f.name
        for f in fields
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    }
    names = [f.name for f in fields]
    known = set(names)

    def run(data: object, here: str) -> object:
        if not isinstance(data, dict):
            raise ValueError(f"{here}: expected an object")
        kwargs = {}
        for name in names:
            if name in data:
                kwargs[name] = _decoder(hints[name], limits)(data[name], f"{here}.{name}")
            elif name in required:
                raise ValueError(f"{here}.{name}: missing")
        if len(data) > len(kwargs):
            extra = {str(k) for k in data} - known
            if extra:
                listed = ", ".join(sorted(e[:20] for e in extra)[:5])
                raise ValueError(f"{here}: unknown field(s) {listed}")
        return cls(**kwargs)

    return run


def _union_decoder(args: tuple[object, ...], limits: Limits | None) -> Decoder:
    nullable = type(None) in args
    options = [a for a in args if a is not type(None)]

    def run(data: object, here: str) -> object:
        if data is None and nullable:
            return None
        errors = []
        for arg in options:
            try:
                return _decoder(arg, limits)(data, here)
            except ValueError as exc:
                errors.append(str(exc))
        raise ValueError(f"{here}: {'; '.join(errors) or 'not allowed to be null'}")

    return run


def _var_tuple_decoder(item: object, limits: Limits | None) -> Decoder:
    def run(data: object, here: str) -> object:
        if not isinstance(data, list | tuple):
            raise ValueError(f"{here}: expected a list")
        if limits is not None and len(data) > limits.items:
            raise ValueError(f"{here}: at most {limits.items} items")
        decode_item = _decoder(item, limits)
        return tuple(decode_item(v, f"{here}[{i}]") for i, v in enumerate(data))

    return run


def _fixed_tuple_decoder(items: tuple[object, ...], limits: Limits | None) -> Decoder:
    def run(data: object, here: str) -> object:
        if not isinstance(data, list | tuple):
            raise ValueError(f"{here}: expected a list")
        if len(items) != len(data):
            raise ValueError(f"{here}: expected {len(items)} items")
        return tuple(
            _decoder(a, limits)(v, f"{here}[{i}]")
            for i, (a, v) in enumerate(zip(items, data, strict=True))
        )

    return run


def _dict_decoder(key_t: object, val_t: object, limits: Limits | None) -> Decoder:
    def run(data: object, here: str) -> object:
        if not isinstance(data, dict):
            raise ValueError(f"{here}: expected an object")
        if limits is not None and len(data) > limits.items:
            raise ValueError(f"{here}: at most {limits.items} entries")
        key, val = _decoder(key_t, limits), _decoder(val_t, limits)
        return {key(k, here): val(v, f"{here}.{k}") for k, v in data.items()}

    return run


def _enum_decoder(tp: type[Enum]) -> Decoder:
    values = [e.value for e in tp]

    def run(data: object, here: str) -> object:
        # a list or an object is no value of any enum (and cannot be looked up: unhashable)
        if isinstance(data, list | dict) or data not in values:
            raise ValueError(f"{here}: {_shown(data)} is not one of {values}")
        return tp(data)

    return run


def _shown(data: object) -> str:
    """A short picture of a refused value for an error message."""
    text = repr(data) if not isinstance(data, int) or abs(data) < 10**20 else "a huge number"
    return text if len(text) <= 40 else f"{text[:37]}..."


def _bounded_scalar(tp: object, limits: Limits) -> Decoder:
    if tp is int:

        def bounded_int(data: object, here: str) -> int:
            value = _int(data, here)
            if abs(value) > limits.integer:
                raise ValueError(f"{here}: at most {limits.integer} either side of 0")
            return value

        return bounded_int
    if tp is float:

        def bounded_float(data: object, here: str) -> float:
            value = _float(data, here)
            if not abs(value) <= limits.integer:  # also refuses NaN and infinities
                raise ValueError(f"{here}: a finite number within {limits.integer} of 0")
            return value

        return bounded_float
    if tp is str:

        def bounded_str(data: object, here: str) -> str:
            value = _str(data, here)
            if len(value) > limits.string:
                raise ValueError(f"{here}: at most {limits.string} characters")
            return value

        return bounded_str
    return _SCALARS[tp]


def _bool(data: object, here: str) -> bool:
    if not isinstance(data, bool):
        raise ValueError(f"{here}: expected true or false")
    return data


def _int(data: object, here: str) -> int:
    if isinstance(data, bool) or not isinstance(data, int):
        raise ValueError(f"{here}: expected an integer")
    return data


def _float(data: object, here: str) -> float:
    if isinstance(data, bool) or not isinstance(data, int | float):
        raise ValueError(f"{here}: expected a number")
    try:
        return float(data)
    except OverflowError:  # an integer too large for a float
        raise ValueError(f"{here}: a number too large") from None


def _str(data: object, here: str) -> str:
    if not isinstance(data, str):
        raise ValueError(f"{here}: expected a string")
    return data


def _none(data: object, here: str) -> None:
    if data is not None:
        raise ValueError(f"{here}: expected null")


def _any(data: object, here: str) -> object:
    return data


_SCALARS: dict[object, Decoder] = {
    bool: _bool,
    int: _int,
    float: _float,
    str: _str,
    type(None): _none,
    Any: _any,
}


def schema(tp: object, limits: Limits | None = None) -> Schema:
    """The JSON Schema of what `decode(tp, data, limits=limits)` accepts, from the same type
    hints (so the two cannot drift apart)."""
    origin = typing.get_origin(tp)
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        hints = typing.get_type_hints(tp)
        fields = [f for f in dataclasses.fields(tp) if f.init]
        required = [
            f.name
            for f in fields
            if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        ]
        return {
            "type": "object",
            "properties": {f.name: schema(hints[f.name], limits) for f in fields},
            "required": required,
            "additionalProperties": False,
        }
    if origin in (Union, types.UnionType):
        return {"anyOf": [schema(a, limits) for a in typing.get_args(tp)]}
    if origin is tuple:
        return _tuple_schema(typing.get_args(tp), limits)
    if origin is dict:
        described: Schema = {
            "type": "object",
            "additionalProperties": schema(typing.get_args(tp)[1], limits),
        }
        if limits is not None:
            described["maxProperties"] = limits.items
        return described
    if isinstance(tp, type) and issubclass(tp, Enum):
        return {"enum": [e.value for e in tp]}
    return _scalar_schema(tp, limits)


def _tuple_schema(args: tuple[object, ...], limits: Limits | None) -> Schema:
    if len(args) == 2 and args[1] is Ellipsis:
        described: Schema = {"type": "array", "items": schema(args[0], limits)}
        if limits is not None:
            described["maxItems"] = limits.items
        return described
    return {
        "type": "array",
        "prefixItems": [schema(a, limits) for a in args],
        "minItems": len(args),
        "maxItems": len(args),
    }


def _scalar_schema(tp: object, limits: Limits | None) -> Schema:
    if tp is bool:
        return {"type": "boolean"}
    if tp is type(None):
        return {"type": "null"}
    if tp is Any:
        return {}
    if tp in (int, float):
        described: Schema = {"type": "integer" if tp is int else "number"}
        if limits is not None:
            described |= {"minimum": -limits.integer, "maximum": limits.integer}
        return described
    if tp is str:
        text: Schema = {"type": "string"}
        if limits is not None:
            text["maxLength"] = limits.string
        return text
    raise TypeError(f"cannot describe type {tp!r}")
