"""The engine's sentences with the players' names: the rules know seats, not names ("player
2 has already crossed"), and every text a screen or the camera's status line shows of them
names the players. Shared by the service (the camera's notes) and the views."""

from __future__ import annotations

import re
from collections.abc import Sequence

# the end card's sentence for a game the host ended before its rules did (and replay's)
HOST_ENDED = "The host ended this game"
# ... and for one ended on the server's own machine (its start page's "End this game"),
# by whoever runs it: not the host, who may have left with the host's device
SERVER_ENDED = "Ended on the server's machine, by its owner"

_SEAT_NUMBER = re.compile(r"\b([Pp])layer (\d+)\b")


def with_names(text: str, players: Sequence[str]) -> str:
    """`text` with the engine's "player N" (seat N - 1; the rules know no names) replaced by
    that seat's name, so a refusal or an ending reads "Cid has already crossed ...". Numbers
    outside the table are left alone."""

    def name(match: re.Match[str]) -> str:
        seat = int(match.group(2)) - 1
        return players[seat] if 0 <= seat < len(players) else match.group(0)

    return _SEAT_NUMBER.sub(name, text)


def for_display(text: str, players: Sequence[str]) -> str:
    """An engine sentence as a screen shows it: seat names put in (`with_names`) and the
    first letter a capital (the rules write "player 2 has ..." or "the white dice ...", to
    be read inside other text; a screen shows it as a sentence of its own)."""
    named = with_names(text, players)
    return named[:1].upper() + named[1:]


# a player's own device names its player so ("Your turn: ...", "waiting for you and Bob")
YOU = "you"


def names_of(
    players: tuple[str, ...], seats: tuple[int, ...] | list[int], me: int | None = None
) -> str:
    """The players of `seats` in words ("Ann, Bob and Cid"); seat `me` (the device's own
    player) as "you", named first ("you, Ann and Cid")."""
    names = [YOU] if me in seats else []
    names += [players[s] for s in seats if 0 <= s < len(players) and s != me]
    if len(names) <= 1:
        return "".join(names)
    return ", ".join(names[:-1]) + " and " + names[-1]


def score_text(points: object) -> str:
    """A score as printed: a negative one with a minus sign (U+2212), not a hyphen. Every
    negative number a screen shows is written by it (the templates' `score` filter, the
    views, the log page, the camera's notes), so all show the same character."""
    if isinstance(points, int) and not isinstance(points, bool) and points < 0:
        return f"\N{MINUS SIGN}{-points}"
    return str(points)


def signed_text(amount: int) -> str:
    """An amount won or lost as printed: "+470" for a gain, "−150" (the minus sign, as in
    `score_text`) for a loss, "0" for neither."""
    return f"+{amount}" if amount > 0 else score_text(amount)
