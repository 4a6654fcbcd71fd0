"""How a refusal reaches a screen: each base.Reason maps to one HTTP status (and the same
status travels in WebSocket error frames), with the Rejection's rule and plain-words
message as the body."""

from __future__ import annotations

from typing import Any

from fastapi import HTTPException

from companion.rules.base import Reason, Rejection

STATUS_FOR_REASON: dict[Reason, int] = {
    Reason.ILLEGAL_MOVE: 409,  # well-formed, but the rules forbid it in this position
    Reason.NOT_YOUR_TURN: 409,
    Reason.GAME_OVER: 409,
    Reason.STALE_STATE: 409,
    Reason.NOTHING_TO_UNDO: 409,
    Reason.WRONG_DICE: 422,  # the roll does not describe the dice the state expects
    Reason.BAD_OPTIONS: 422,
    Reason.MALFORMED: 422,
    Reason.NOT_ALLOWED: 403,
}


def status_for(rejection: Rejection) -> int:
    return STATUS_FOR_REASON.get(rejection.reason, 400)


def rejection_body(rejection: Rejection) -> dict[str, Any]:
    return rejection.to_json()


def slow_down(rule: str, what: str, wait_s: float, not_done: str = "") -> HTTPException:
    """The 429 of a client over one of its rates: the rule, what it asked for too often
    (in words) and when to come back (Retry-After); `not_done`, what was not done for it
    (in words, said first)."""
    retry = int(wait_s) + 1
    lead = f"{not_done}: " if not_done else ""
    return HTTPException(
        status_code=429,
        detail={
            "reason": "too_many_requests",
            "rule": rule,
            "message": f"{lead}too many {what} from this device; try again in {retry} s",
            "retry_after": round(wait_s, 2),
        },
        headers={"Retry-After": str(retry)},
    )
