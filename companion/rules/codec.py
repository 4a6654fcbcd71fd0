"""JSON encoding of the engine's frozen dataclasses, driven by their type hints.

Supported field types: int, str, bool, float, None, StrEnum, nested frozen dataclasses,
``tuple[X, ...]``, ``tuple[X, Y]``, ``X | None`` and ``dict[str, X]``. Tuples become lists.
`decode(cls, encode(x)) == x` holds for every state and move of the engine.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from enum import Enum
from functools import cache
from typing import Any, Union


def encode(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: encode(getattr(value, f.name)) for f in _fields(type(value))}
    if isinstance(value, Enum):
        return value.value
    if isinstance(value, tuple | list):
        return [encode(v) for v in value]
    if isinstance(value, dict):
        return {str(k): encode(v) for k, v in value.items()}
    if value is None or isinstance(value, bool | int | float | str):
        return value
    raise TypeError(f"cannot encode {type(value).__name__}")


@cache
def _fields(cls: type) -> tuple[dataclasses.Field[Any], ...]:
    return tuple(f for f in dataclasses.fields(cls) if f.init)


@cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def decode(tp: Any, data: Any, where: str = "") -> Any:
    """Build a value of type `tp` from JSON data; raises ValueError naming the field."""
    here = where or getattr(tp, "__name__", str(tp))
    origin = typing.get_origin(tp)
    if dataclasses.is_dataclass(tp) and isinstance(tp, type):
        if not isinstance(data, dict):
            raise ValueError(f"{here}: expected an object")
        hints = _hints(tp)
        kwargs = {}
        known = set()
        for f in _fields(tp):
            known.add(f.name)
            if f.name in data:
                kwargs[f.name] = decode(hints[f.name], data[f.name], f"{here}.{f.name}")
            elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise ValueError(f"{here}.{f.name}: missing")
        extra = set(data) - known
        if extra:
            raise ValueError(f"{here}: unknown field(s) {', '.join(sorted(extra))}")
        return tp(**kwargs)
    if origin in (Union, types.UnionType):
        args = typing.get_args(tp)
        if data is None and type(None) in args:
            return None
        errors = []
        for arg in args:
            if arg is type(None):
                continue
            try:
                return decode(arg, data, where)
            except ValueError as exc:
                errors.append(str(exc))
        raise ValueError(f"{here}: {'; '.join(errors) or 'not allowed to be null'}")
    if origin is tuple:
        args = typing.get_args(tp)
        if not isinstance(data, list | tuple):
            raise ValueError(f"{here}: expected a list")
        if len(args) == 2 and args[1] is Ellipsis:
            return tuple(decode(args[0], v, f"{here}[{i}]") for i, v in enumerate(data))
        if len(args) != len(data):
            raise ValueError(f"{here}: expected {len(args)} items")
        return tuple(decode(a, v, f"{here}[{i}]") for i, (a, v) in enumerate(zip(args, data)))
    if origin is dict:
        key_t, val_t = typing.get_args(tp)
        if not isinstance(data, dict):
            raise ValueError(f"{here}: expected an object")
        return {decode(key_t, k, here): decode(val_t, v, f"{here}.{k}") for k, v in data.items()}
    if isinstance(tp, type) and issubclass(tp, Enum):
        try:
            return tp(data)
        except ValueError:
            raise ValueError(f"{here}: {data!r} is not one of {[e.value for e in tp]}") from None
    if tp is bool:
        if not isinstance(data, bool):
            raise ValueError(f"{here}: expected true or false")
        return data
    if tp is int:
        if isinstance(data, bool) or not isinstance(data, int):
            raise ValueError(f"{here}: expected an integer")
        return data
    if tp is float:
        if isinstance(data, bool) or not isinstance(data, int | float):
            raise ValueError(f"{here}: expected a number")
        return float(data)
    if tp is str:
        if not isinstance(data, str):
            raise ValueError(f"{here}: expected a string")
        return data
    if tp is Any:
        return data
    if tp is type(None):
        if data is not None:
            raise ValueError(f"{here}: expected null")
        return None
    raise TypeError(f"cannot decode type {tp!r}")
