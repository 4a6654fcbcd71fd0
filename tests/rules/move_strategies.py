"""Hypothesis strategies for moves, drawn from the JSON Schema the engine publishes for each
move kind (Game.move_schema, generated from the move dataclasses): well-formed moves,
near-misses (one field of the wrong type or out of bounds, a field missing or extra, the
kind of any JSON type) and JSON of any shape. Shared by the codec's agreement test and the
reliability tests that send them to a real server."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from companion.colours import DIE_COLOURS

# words the games use, so a drawn move is now and then a legal one
WORDS = st.sampled_from([*DIE_COLOURS, "sixis", "pass", "roll", "cross", ""])
EDGE_INTEGERS = st.sampled_from([0, -1, 1, 6, 2**31 - 1, 2**31, -(2**31), 2**53, 2**63, -(2**63)])


def any_json(huge: bool = True) -> st.SearchStrategy[Any]:
    """JSON of any shape and type. `huge`: integers of any size and floats that JSON
    cannot carry (NaN, infinities), which Python's json writes and reads anyway."""
    integers = st.integers() | EDGE_INTEGERS if huge else st.integers(-(2**62), 2**62)
    # integral floats are left out when the result is compared with a JSON Schema, which
    # counts 1.0 as an integer (the decoder, strictly, does not)
    floats = (
        st.floats(allow_nan=True, allow_infinity=True)
        if huge
        else st.floats(allow_nan=False, allow_infinity=False).filter(lambda f: not f.is_integer())
    )
    scalars = st.none() | st.booleans() | integers | floats | st.text(max_size=12) | WORDS
    return st.recursive(
        scalars,
        lambda inner: (
            st.lists(inner, max_size=4)
            | st.dictionaries(st.text(max_size=8) | WORDS, inner, max_size=4)
        ),
        max_leaves=10,
    )


def from_schema(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Values the schema accepts (the subset codec.schema writes)."""
    if "const" in schema:
        return st.just(schema["const"])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    if "anyOf" in schema:
        return st.one_of([from_schema(s) for s in schema["anyOf"]])
    kind = schema.get("type")
    if kind == "integer":
        low, high = schema.get("minimum", -(2**62)), schema.get("maximum", 2**62)
        return st.integers(-1, 12) | st.integers(low, high) | st.sampled_from([low, high])
    if kind == "number":
        return st.floats(schema.get("minimum"), schema.get("maximum"), allow_nan=False)
    if kind == "string":
        return WORDS | st.text(max_size=schema.get("maxLength", 12))
    if kind == "boolean":
        return st.booleans()
    if kind == "null":
        return st.none()
    if kind == "array":
        if "prefixItems" in schema:
            return st.tuples(*[from_schema(s) for s in schema["prefixItems"]]).map(list)
        return st.lists(from_schema(schema["items"]), max_size=min(schema.get("maxItems", 6), 6))
    if kind == "object":
        return st.fixed_dictionaries(
            {name: from_schema(s) for name, s in schema["properties"].items()}
        )
    raise ValueError(f"no strategy for {schema!r}")


def near(schema: dict[str, Any], huge: bool = True) -> st.SearchStrategy[Any]:
    """Mostly well-formed values with some part wrong: a field of another type or out of
    bounds, a field dropped or added, a list too long."""
    wrong = any_json(huge)
    if schema.get("type") == "object":
        fields = {name: near(s, huge) | wrong for name, s in schema["properties"].items()}
        return st.fixed_dictionaries(
            {}, optional={**fields, **{"extra": wrong}}
        ) | st.fixed_dictionaries(fields)
    if schema.get("type") == "array" and "items" in schema:
        return st.lists(near(schema["items"], huge), max_size=70 if huge else 8)
    if schema.get("type") == "integer" and huge:
        return from_schema(schema) | EDGE_INTEGERS
    return from_schema(schema) | wrong


def moves(schemas: dict[str, dict[str, Any]], huge: bool = True) -> st.SearchStrategy[Any]:
    """For the move kinds of one game: well-formed moves, near-misses, and JSON of any
    shape in the place of a move or of its kind."""
    kinds = sorted(schemas)
    well_formed = st.one_of([from_schema(schemas[k]) for k in kinds])
    near_misses = st.one_of([near(schemas[k], huge) for k in kinds])
    any_kind = st.builds(
        lambda move, kind: {**move, "kind": kind}, near_misses.filter(_is_dict), any_json(huge)
    )
    return well_formed | near_misses | any_kind | any_json(huge)


def _is_dict(value: Any) -> bool:
    return isinstance(value, dict)
