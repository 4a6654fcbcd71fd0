"""Text from outside is valid Unicode or refused, at the boundary.

JSON may spell a lone surrogate (`"\\ud800"`): Python's parser turns it into a str that
cannot be written as UTF-8, so it passes every check of length and type and then breaks
every page and answer that shows it (a player name made the server's start page answer
500 for good). Every string and every key of a request body, an imported record and a
WebSocket message is checked here, once parsed, before anything else reads it; the
refusal names the field by its path, written in ASCII (the bad text itself cannot be
shown)."""

from __future__ import annotations

import json

from companion.rules.base import Reason, Rejection

INVALID_UNICODE = "invalid_unicode"
_MAX_DEPTH = 64  # deeper JSON is refused elsewhere (sizes, schemas); stop walking here


def is_valid_text(text: str) -> bool:
    """Whether `text` can be written as UTF-8 (holds no lone surrogate)."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _field(path: str, key: object) -> str:
    """The path of an item, in ASCII: `body.players[0]`, `body.options["\\ud800"]`."""
    if isinstance(key, int):
        return f"{path}[{key}]"
    if isinstance(key, str) and key.isascii() and key.isidentifier():
        return f"{path}.{key}"
    return f"{path}[{json.dumps(key)}]"  # json.dumps writes ASCII: a bad key shows escaped


def invalid_text_at(value: object, path: str = "body", depth: int = 0) -> str | None:
    """The path of the first string or key in `value` (parsed JSON) that is not valid
    Unicode, or None when every one is."""
    if isinstance(value, str):
        return None if is_valid_text(value) else path
    if depth > _MAX_DEPTH:
        return None
    if isinstance(value, dict):
        for key, item in value.items():
            if isinstance(key, str) and not is_valid_text(key):
                return f"{_field(path, key)} (its key)"
            found = invalid_text_at(item, _field(path, key), depth + 1)
            if found is not None:
                return found
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found = invalid_text_at(item, _field(path, index), depth + 1)
            if found is not None:
                return found
    return None


def invalid_text(path: str) -> Rejection:
    return Rejection(
        Reason.MALFORMED,
        INVALID_UNICODE,
        f"{path}: text must be valid Unicode (a lone surrogate such as \\ud800 is not)",
    )


def check_text(value: object, path: str = "body") -> None:
    """Raise Rejection(MALFORMED, invalid_unicode) naming the first string or key of
    `value` that is not valid Unicode."""
    found = invalid_text_at(value, path)
    if found is not None:
        raise invalid_text(found)


def printable(text: str) -> str:
    """`text` with any lone surrogate written as its escape (`\\ud800`): for messages that
    quote what a store or an older server holds, so showing them cannot fail."""
    if is_valid_text(text):
        return text
    return text.encode("utf-8", "backslashreplace").decode("utf-8")
