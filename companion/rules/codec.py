"""JSON encoding of the engine's frozen dataclasses, driven by their type hints.

Supported field types: int, str, bool, float, None, StrEnum, nested frozen dataclasses,
``tuple[X, ...]``, ``tuple[X, Y]``, ``X | None`` and ``dict[str, X]``. Tuples become lists.
`decode(cls, encode(x)) == x` holds for every state and move of the engine.

The conformance test round-trips every state of thousands of games, so each type's decoder
is built once from its hints (a closure per type, cached) instead of re-reading the hints on
every call.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Callable
from enum import Enum
from functools import cache
from typing import Any, Union

Decoder = Callable[[Any, str], Any]


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


def decode(tp: Any, data: Any, where: str = "") -> Any:
    """Build a value of type `tp` from JSON data; raises ValueError naming the field."""
    return _decoder(tp)(data, where or getattr(tp, "__name__", str(tp)))


@cache
def _decoder(tp: Any) -> Decoder:
    origin = typing.get_origin(tp)
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        return _dataclass_decoder(tp)
    if origin in (Union, types.UnionType):
        return _union_decoder(typing.get_args(tp))
    if origin is tuple:
        args = typing.get_args(tp)
        if len(args) == 2 and args[1] is Ellipsis:
            return _var_tuple_decoder(args[0])
        return _fixed_tuple_decoder(args)
    if origin is dict:
        return _dict_decoder(*typing.get_args(tp))
    if isinstance(tp, type) and issubclass(tp, Enum):
        return _enum_decoder(tp)
    if tp in _SCALARS:
        return _SCALARS[tp]
    raise TypeError(f"cannot decode type {tp!r}")


def _dataclass_decoder(cls: type) -> Decoder:
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

    def run(data: Any, here: str) -> Any:
        if not isinstance(data, dict):
            raise ValueError(f"{here}: expected an object")
        kwargs = {}
        for name in names:
            if name in data:
                kwargs[name] = _decoder(hints[name])(data[name], f"{here}.{name}")
            elif name in required:
                raise ValueError(f"{here}.{name}: missing")
        if len(data) > len(kwargs):
            extra = set(data) - known
            if extra:
                raise ValueError(f"{here}: unknown field(s) {', '.join(sorted(extra))}")
        return cls(**kwargs)

    return run


def _union_decoder(args: tuple[Any, ...]) -> Decoder:
    nullable = type(None) in args
    options = [a for a in args if a is not type(None)]

    def run(data: Any, here: str) -> Any:
        if data is None and nullable:
            return None
        errors = []
        for arg in options:
            try:
                return _decoder(arg)(data, here)
            except ValueError as exc:
                errors.append(str(exc))
        raise ValueError(f"{here}: {'; '.join(errors) or 'not allowed to be null'}")

    return run


def _var_tuple_decoder(item: Any) -> Decoder:
    def run(data: Any, here: str) -> Any:
        if not isinstance(data, list | tuple):
            raise ValueError(f"{here}: expected a list")
        decode_item = _decoder(item)
        return tuple(decode_item(v, f"{here}[{i}]") for i, v in enumerate(data))

    return run


def _fixed_tuple_decoder(items: tuple[Any, ...]) -> Decoder:
    def run(data: Any, here: str) -> Any:
        if not isinstance(data, list | tuple):
            raise ValueError(f"{here}: expected a list")
        if len(items) != len(data):
            raise ValueError(f"{here}: expected {len(items)} items")
        return tuple(
            _decoder(a)(v, f"{here}[{i}]") for i, (a, v) in enumerate(zip(items, data, strict=True))
        )

    return run


def _dict_decoder(key_t: Any, val_t: Any) -> Decoder:
    def run(data: Any, here: str) -> Any:
        if not isinstance(data, dict):
            raise ValueError(f"{here}: expected an object")
        key, val = _decoder(key_t), _decoder(val_t)
        return {key(k, here): val(v, f"{here}.{k}") for k, v in data.items()}

    return run


def _enum_decoder(tp: type[Enum]) -> Decoder:
    def run(data: Any, here: str) -> Any:
        try:
            return tp(data)
        except ValueError:
            raise ValueError(f"{here}: {data!r} is not one of {[e.value for e in tp]}") from None

    return run


def _bool(data: Any, here: str) -> bool:
    if not isinstance(data, bool):
        raise ValueError(f"{here}: expected true or false")
    return data


def _int(data: Any, here: str) -> int:
    if isinstance(data, bool) or not isinstance(data, int):
        raise ValueError(f"{here}: expected an integer")
    return data


def _float(data: Any, here: str) -> float:
    if isinstance(data, bool) or not isinstance(data, int | float):
        raise ValueError(f"{here}: expected a number")
    return float(data)


def _str(data: Any, here: str) -> str:
    if not isinstance(data, str):
        raise ValueError(f"{here}: expected a string")
    return data


def _none(data: Any, here: str) -> None:
    if data is not None:
        raise ValueError(f"{here}: expected null")


def _any(data: Any, here: str) -> Any:
    return data


_SCALARS: dict[Any, Decoder] = {
    bool: _bool,
    int: _int,
    float: _float,
    str: _str,
    type(None): _none,
    Any: _any,
}
