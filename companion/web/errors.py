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


def refusal_body(
    reason: Reason | str, rule: str, message: str, **more: object
) -> dict[str, object]:
    """The body every refusal has: its reason (base.Reason, or a web-only word such as
    too_many_requests), the rule it names and the message in plain words; `more` adds
    fields (retry_after, index) after those three."""
    return {"reason": str(reason), "rule": rule, "message": message, **more}


def refusal(
    status: int,
    reason: Reason | str,
    rule: str,
    message: str,
    headers: dict[str, str] | None = None,
    **more: object,
) -> HTTPException:
    """The HTTPException of a named refusal: `status` with refusal_body as its body."""
    return HTTPException(
        status_code=status, detail=refusal_body(reason, rule, message, **more), headers=headers
    )


def refused(status: int, rejection: Rejection) -> HTTPException:
    """The HTTPException of a Rejection answered with another status than status_for's."""
    return refusal(status, rejection.reason, rejection.rule, rejection.message)


def slow_down(rule: str, what: str, wait_s: float, not_done: str = "") -> HTTPException:
    """The 429 of a client over one of its rates: the rule, what it asked for too often
    (in words) and when to come back (Retry-After); `not_done`, what was not done for it
    (in words, said first)."""
    retry = int(wait_s) + 1
    lead = f"{not_done}: " if not_done else ""
    message = f"{lead}too many {what} from this device; try again in {retry} s"
    headers = {"Retry-After": str(retry)}
    return refusal(429, "too_many_requests", rule, message, headers, retry_after=round(wait_s, 2))
