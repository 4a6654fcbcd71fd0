"""Who may do what at a table: device tokens, join codes, the device's rights, limiters.

- A device gets access to a table only through its join code (or by creating the table):
  it is given a random device token (the web layer keeps it in a cookie named after the
  table, companion.web.deps.cookie_name), and only the token's SHA-256 hash is kept.
- The host's device (the one that created or imported the table) carries the host flag;
  a player's device is bound to one seat and marks only that seat's sheet (the session is
  told `by=str(seat)`; Session.act refuses anything else).
- Guessing join codes is slowed by a limiter of wrong codes per client and of every
  client's together (JoinLimiter); a flooding device by a per-device rate limiter.
(Refusing a foreign page by its Origin is HTTP's, companion.web.deps.is_same_origin.)
"""

from __future__ import annotations

import base64
import hashlib
import ipaddress
import secrets
import time
from collections import deque
from dataclasses import dataclass

from companion.rules.base import Move, Reason, Rejection, Roll, Throw, Turn
from companion.rules.session import HOST

CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O, 1/I: read aloud, typed on phones
CODE_LENGTH = 6


def new_token() -> str:
    return secrets.token_urlsafe(24)


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def carried_token(token: str, table_id: str) -> str:
    """The token a device holding `token` at a finished game gets at `table_id`, the game
    played again (Table.carry_over): derived from its own, so that asking again (a double
    tap, a cookie lost on the way) gets the same device there, never one more. Only the
    holder of `token` can work it out, as only it could ask for it."""
    digest = hashlib.sha256(f"next game {table_id} {token}".encode()).digest()
    return base64.urlsafe_b64encode(digest[:24]).decode("ascii")


def new_join_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def normalise_code(text: str) -> str:
    """The code as typed, upper-cased, without spaces or dashes."""
    return "".join(ch for ch in text.upper() if ch not in " -")


@dataclass(frozen=True, slots=True)
class Viewer:
    """The device looking at a table: its seat (None for a table view) and host rights;
    `joined_after_next_game`: it joined this finished game only after the host started
    the next one, which it is not carried to (Table.carry_over); `next_place_freed`: it
    took its place at that next game once, and the next game no longer has it there
    (Tables.with_next_place: a carry again is refused `carried_once`)."""

    seat: int | None
    host: bool
    joined_after_next_game: bool = False
    next_place_freed: bool = False

    @property
    def by(self) -> str:
        """What Session calls this device when it acts for its own seat or as host."""
        if self.seat is not None:
            return str(self.seat)
        return HOST if self.host else "viewer"

    def may_mark(self, seat: int) -> bool:
        """Whether this device may tap boxes on `seat`'s sheet."""
        return self.seat == seat or (self.host and self.seat is None)

    def may_roll(self, turn: Turn, throw: Throw | None = None) -> bool:
        """Rolls are entered on the active player's device or by the host; the next throw
        while a step is open (`throw`, e.g. one that closes the white sum) on its roller's
        (the next player's) or by the host."""
        if self.host or self.seat is None:
            return self.host
        if not turn.chance and throw is not None:
            return self.seat == throw.roller
        return self.seat == turn.active


def actor_for(viewer: Viewer, move: Move, turn: Turn, throw: Throw | None = None) -> str:
    """The `by` the session is told for `move` from this device (`throw`: what a throw
    means now, whose roller may enter it); raises NOT_ALLOWED when the device may not send
    it. Session.act still checks seat against `by`."""
    if isinstance(move, Roll):
        if not viewer.may_roll(turn, throw):
            raise Rejection(
                Reason.NOT_ALLOWED,
                "roll_by_active_or_host",
                "only the active player's device or the host's table view enters the dice",
            )
        return viewer.by if viewer.seat is not None else HOST
    if viewer.seat is not None and move.player == viewer.seat:
        return str(viewer.seat)
    if viewer.host:
        return HOST
    if viewer.seat is None:
        raise Rejection(Reason.NOT_ALLOWED, "viewer_only", "this screen only watches the game")
    return str(viewer.seat)  # Session refuses: "you may only mark your own sheet"


class AttemptLimiter:
    """At most `limit` failed attempts per client within `window_s` seconds; `retry_after`
    says how long a blocked client has to wait.

    An attempt is counted when it begins (`begin`, which checks and records in one step,
    with no await between) and forgiven when it turns out right (`forgive`): checking first
    and recording a failure only after the code was looked up (an await) let 100
    simultaneous wrong codes through where 10 may be tried."""

    def __init__(self, limit: int, window_s: float) -> None:
        self._limit = limit
        self._window = window_s
        self._failures: dict[str, deque[float]] = {}

    def _recent(self, client: str, now: float) -> deque[float]:
        failures = self._failures.setdefault(client, deque())
        while failures and failures[0] <= now - self._window:
            failures.popleft()
        return failures

    def retry_after(self, client: str) -> float:
        """0 when the client may try now, else seconds to wait."""
        now = time.monotonic()
        failures = self._recent(client, now)
        if len(failures) < self._limit:
            return 0.0
        return max(0.0, failures[0] + self._window - now)

    def begin(self, client: str) -> tuple[float, float]:
        """Count an attempt that is about to be checked: (0, its stamp for `forgive`) when
        the client may try, else (seconds to wait, 0) and nothing is counted."""
        wait = self.retry_after(client)
        if wait > 0:
            return wait, 0.0
        stamp = time.monotonic()
        self._recent(client, stamp).append(stamp)
        self._forget_idle()
        return 0.0, stamp

    def record(self, client: str, stamp: float) -> None:
        """Count an attempt at `stamp`, whatever the limit (JoinLimiter checked first)."""
        self._recent(client, stamp).append(stamp)
        self._forget_idle()

    def clear_in(self, client: str) -> float:
        """Seconds until none of the client's attempts is within the window."""
        now = time.monotonic()
        failures = self._recent(client, now)
        return max(0.0, failures[-1] + self._window - now) if failures else 0.0

    def forgive(self, client: str, stamp: float) -> None:
        """The attempt begun at `stamp` was right: it does not count."""
        failures = self._failures.get(client)
        if failures is not None and stamp in failures:
            failures.remove(stamp)

    def _forget_idle(self) -> None:
        if len(self._failures) > 10_000:  # forget idle clients so memory stays bounded
            for key in [k for k, v in self._failures.items() if not v]:
                del self._failures[key]

    def count(self, client: str) -> int:
        """The client's attempts within the window."""
        return len(self._recent(client, time.monotonic()))


EVERYONE = ""  # JoinLimiter's key for every client's wrong codes together


@dataclass(frozen=True, slots=True)
class JoinAttempt:
    """A join code about to be checked (`wait_s` 0, `stamp` for JoinLimiter.forgive), or
    refused: `wait_s` until the client may try, `crowded` when it is the server-wide
    ceiling that refuses it."""

    wait_s: float
    stamp: float = 0.0
    crowded: bool = False


class JoinLimiter:
    """Wrong join codes, counted three ways: per client address within a minute (a burst
    of typos) and within an hour, and every client's together within an hour.

    With the per-address limit alone, 30 addresses on one machine (a café's LAN lets a
    device take many) had 300 codes looked up in seconds, and one address 14,400 a day,
    without end: at 2,500 a minute from 250 addresses, a code among 50 open tables (32**6
    codes) is found in a day one time in six. Once every client's wrong codes of the hour
    reach the ceiling, an address may try only while it has tried no wrong code itself
    within the hour: a player typing the code for the first time still joins, an address
    that guesses gets one try an hour. An IPv6 address counts there by its /64 network
    (`crowd_key`): one device picks as many addresses of its network as it likes."""

    def __init__(
        self, per_minute: int, window_s: float, per_hour: int, everyone_per_hour: int
    ) -> None:
        self._minute = AttemptLimiter(per_minute, window_s)
        self._hour = AttemptLimiter(per_hour, 3600.0)
        self._everyone = AttemptLimiter(everyone_per_hour, 3600.0)
        self._crowd = AttemptLimiter(1, 3600.0)  # every attempt, by crowd_key

    def begin(self, client: str) -> JoinAttempt:
        """Count an attempt that is about to be checked (no await between the check and
        the count), or refuse it and count nothing."""
        wait = max(self._minute.retry_after(client), self._hour.retry_after(client))
        if wait > 0:
            return JoinAttempt(wait)
        crowded = self._everyone.retry_after(EVERYONE)
        crowd = crowd_key(client)
        if crowded > 0 and self._crowd.count(crowd) > 0:
            # until its own last wrong code leaves the hour, or the ceiling frees a place
            return JoinAttempt(min(crowded, self._crowd.clear_in(crowd)), crowded=True)
        stamp = time.monotonic()
        for limiter, key in self._keys(client):
            limiter.record(key, stamp)
        return JoinAttempt(0.0, stamp)

    def forgive(self, client: str, stamp: float) -> None:
        """The attempt begun at `stamp` was right: it counts nowhere."""
        for limiter, key in self._keys(client):
            limiter.forgive(key, stamp)

    def _keys(self, client: str) -> tuple[tuple[AttemptLimiter, str], ...]:
        return (
            (self._minute, client),
            (self._hour, client),
            (self._everyone, EVERYONE),
            (self._crowd, crowd_key(client)),
        )


def crowd_key(client: str) -> str:
    """The key an address is counted by once many guess (JoinLimiter): an IPv4 address
    itself (an IPv4-mapped one too), an IPv6 address's /64 network."""
    try:
        address = ipaddress.ip_address(client)
    except ValueError:
        return client
    if not isinstance(address, ipaddress.IPv6Address):
        return client
    if address.ipv4_mapped is not None:
        return str(address.ipv4_mapped)
    return str(ipaddress.ip_network(f"{address}/64", strict=False))


class DeviceRateLimiter:
    """A token bucket per device (keyed by its token hash): on average `rate` actions or
    WebSocket messages per second, bursts of up to `burst`. A flooding device is refused
    (429) without slowing the other devices."""

    def __init__(self, rate: float, burst: int) -> None:
        self._rate = rate
        self._burst = float(burst)
        self._buckets: dict[str, tuple[float, float]] = {}  # key -> (tokens, last time)

    def take(self, key: str) -> float:
        """Spend one token: 0 when allowed, else the seconds until one is available."""
        now = time.monotonic()
        tokens, last = self._buckets.get(key, (self._burst, now))
        tokens = min(self._burst, tokens + (now - last) * self._rate)
        if tokens < 1.0:
            self._buckets[key] = (tokens, now)
            return (1.0 - tokens) / self._rate
        self._buckets[key] = (tokens - 1.0, now)
        if len(self._buckets) > 10_000:  # forget idle devices so memory stays bounded
            idle = [k for k, (_, at) in self._buckets.items() if now - at > 60]
            for k in idle:
                del self._buckets[k]
        return 0.0


class ActionBudget:
    """At most `limit` units (imported actions) per client within any `window_s` seconds:
    what each client spent, kept in a sliding window. Counting requests alone let one
    address fill the store with legal records (47 imports of 8,600 actions in a minute
    grew it 4.7 -> 90 MB) and swell every later start-up."""

    def __init__(self, limit: int, window_s: float) -> None:
        self.limit = limit
        self.window_s = window_s
        self._spent: dict[str, deque[tuple[float, int]]] = {}  # client -> (stamp, units)

    def _recent(self, client: str, now: float) -> deque[tuple[float, int]]:
        spent = self._spent.setdefault(client, deque())
        while spent and spent[0][0] <= now - self.window_s:
            spent.popleft()
        return spent

    def left(self, client: str) -> int:
        """The units the client may still spend now."""
        spent = self._recent(client, time.monotonic())
        return max(0, self.limit - sum(units for _, units in spent))

    def wait(self, client: str, amount: int) -> float:
        """0 when `amount` more units fit in the client's window now, else the seconds
        until they do (the whole window for an amount over the limit on its own)."""
        if amount > self.limit:
            return self.window_s
        now = time.monotonic()
        spent = self._recent(client, now)
        over = sum(units for _, units in spent) + amount - self.limit
        wait = 0.0
        for stamp, units in spent:
            if over <= 0:
                break
            over -= units
            wait = stamp + self.window_s - now
        return max(0.0, wait)

    def spend(self, client: str, amount: int) -> None:
        """Count `amount` units spent by `client` now (the caller checked `wait` first)."""
        now = time.monotonic()
        self._recent(client, now).append((now, amount))
        if len(self._spent) > 10_000:  # forget idle clients so memory stays bounded
            for key in [k for k in self._spent if not self._recent(k, now)]:
                del self._spent[key]
