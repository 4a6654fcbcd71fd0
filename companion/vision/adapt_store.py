"""A setup's confirmed dice, kept in the data directory: one SQLite file for the records
(``setups.sqlite3``) and one small PNG per die (``setups/<setup>/<id>.png``, 64 px).

A setup is a camera with a dice set, what a calibration file names (companion.vision
.calibration), so the name is a calibration name and a second evening at the same table
starts where the first ended. Each record holds what the heads of companion.vision.adapt
need (value, embedding, the shipped head's probabilities when the camera read it, body
colour, set die) and where the die came from (table, photo, throw, and how it was
confirmed: read as shown, corrected by a tap, added by the host, or taught in a teaching
round). The embedding is stored with the classifier it came from (its sha256), beside the
embeddings and shipped probabilities of the crop's eight symmetric views that the value
head learns from: after a model update, or for a record made before the views were kept,
they are made again from the crop (`SetupLearner.refresh`).

The store is synchronous and thread-safe (one connection behind a lock); callers in the
server run it off the event loop. A crop file is written before its record and removed
after it, so a record never names a missing file; `delete_setup` removes the records and
the setup's folder, `delete_table` one table's dice and the photos of its rolls (a café's
tables may share a setup: one host forgets what that table taught, the others' stay).

For the finder's head (companion.vision.adapt_finder) the store also keeps each confirmed
photo whole (``setups/<setup>/photos/<id>.jpg``, its long side at most PHOTO_LONG_SIDE,
JPEG quality PHOTO_QUALITY) with its confirmed dice (centre, side, value, in that JPEG's
pixels, and each die's stored record: deleting the die takes it off the photo), at most
MAX_PHOTOS per setup (the oldest go first); the false dice the host
removed need no record of their own, since a peak of the shipped finder away from every
confirmed die of its photo is one (`AdaptedFinder.photo_rows`). A die deleted later stays on
its photo as a spot set aside (value DELETED, `StoredPhoto.aside`): learnt neither as a die
nor as a false one."""

from __future__ import annotations

import json
import shutil
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from companion.vision.adapt import CLASSES, Example, Lab
from companion.vision.adapt_files import atomic_write
from companion.vision.calibration import NAME_PATTERN

STORE_FILE = "setups.sqlite3"
CROPS_DIR = "setups"
CROP_SIZE = 64
SOURCES = ("read", "corrected", "added", "taught")
DELETED = 0  # a stored photo's spot of a die the host deleted (StoredPhoto.aside)

SCHEMA = """
CREATE TABLE IF NOT EXISTS examples (
    example_id    INTEGER PRIMARY KEY AUTOINCREMENT,
    setup         TEXT NOT NULL,
    value         INTEGER NOT NULL CHECK (value BETWEEN 1 AND 6),
    colour        TEXT,
    set_index     INTEGER,
    lab_l         REAL,
    lab_a         REAL,
    lab_b         REAL,
    embedding     BLOB NOT NULL,
    probabilities BLOB,
    model         TEXT NOT NULL,
    table_id      TEXT,
    photo         TEXT,
    throw         INTEGER,
    source        TEXT NOT NULL CHECK (source IN ('read', 'corrected', 'added', 'taught')),
    kept_by_host  INTEGER NOT NULL DEFAULT 0,
    created_at    REAL NOT NULL,
    views         BLOB,
    view_probabilities BLOB
);
CREATE INDEX IF NOT EXISTS examples_by_setup ON examples(setup, example_id);
-- which setup a game taught (SetupStore.setup_of_table), asked at every camera-status poll of
-- a host page the camera left
CREATE INDEX IF NOT EXISTS examples_by_table ON examples(table_id, setup);
CREATE TABLE IF NOT EXISTS photos (
    photo_id      INTEGER PRIMARY KEY AUTOINCREMENT,
    setup         TEXT NOT NULL,
    photo         TEXT NOT NULL,
    width         INTEGER NOT NULL,
    height        INTEGER NOT NULL,
    dice          TEXT NOT NULL,
    created_at    REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS photos_by_setup ON photos(setup, photo_id);
CREATE TABLE IF NOT EXISTS outcomes (
    setup         TEXT NOT NULL,
    at            REAL NOT NULL,
    without_tap   INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS outcomes_by_setup ON outcomes(setup, at);
"""
OUTCOMES_KEPT_S = 86400.0  # applied camera rolls are counted for an hour; a day is kept
PHOTOS_DIR = "photos"
# a 1920x1080 webcam frame as it is (the finder reads a frame by its own size: shrunk, the
# photo would be read at another scale than the camera's); bigger frames shrunk
PHOTO_LONG_SIDE = 1920
PHOTO_QUALITY = 90
MAX_PHOTOS = 50  # per setup: the finder check judges the latest 25; the rest is history
# columns added since the first schema: (name, type), added to an older file when opened
ADDED_COLUMNS = (("views", "BLOB"), ("view_probabilities", "BLOB"))


class SetupError(ValueError):
    """A setup name that is not a calibration name, or a die that cannot be stored."""


def check_setup(name: str) -> str:
    """`name` when it is a valid calibration name (it names a folder), else SetupError."""
    if not isinstance(name, str) or not NAME_PATTERN.match(name):
        raise SetupError(f"setup {name!r}: use 1-48 letters, digits, '-' or '_'")
    return name


@dataclass(frozen=True)
class NewExample:
    """A confirmed die to store: its 64 px BGR crop (companion.vision.classifier's framing)
    with the fields of a record."""

    crop: np.ndarray = field(repr=False)
    value: int
    embedding: np.ndarray = field(repr=False)
    model: str
    source: str
    probabilities: np.ndarray | None = field(default=None, repr=False)
    lab: Lab | None = None
    colour: str | None = None
    set_index: int | None = None
    table_id: str | None = None
    photo: str | None = None
    throw: int | None = None
    views: np.ndarray | None = field(default=None, repr=False)  # V x D, the first as cut
    view_probabilities: np.ndarray | None = field(default=None, repr=False)  # V x 7


@dataclass(frozen=True)
class ViewUpdate:
    """Features made again for one stored die (`SetupStore.set_features`): its embedding,
    its views' embeddings and shipped probabilities, and (None: leave them) the shipped
    probabilities of its reading."""

    example_id: int
    embedding: np.ndarray = field(repr=False)
    views: np.ndarray = field(repr=False)
    view_probabilities: np.ndarray = field(repr=False)
    probabilities: np.ndarray | None = field(default=None, repr=False)


@dataclass(frozen=True)
class StoredExample:
    """One stored die: its id, record fields and the heads' `Example`."""

    example_id: int
    setup: str
    example: Example
    model: str
    source: str
    table_id: str | None
    photo: str | None
    throw: int | None
    created_at: float

    def to_json(self) -> dict[str, object]:
        e = self.example
        return {
            "id": self.example_id,
            "value": e.value,
            "colour": e.colour,
            "set_index": e.set_index,
            "source": self.source,
            "kept_by_host": e.kept_by_host,
            "table_id": self.table_id,
            "photo": self.photo,
            "throw": self.throw,
            "created_at": self.created_at,
        }


@dataclass(frozen=True)
class PhotoDie:
    """A confirmed die of a stored photo, in the stored JPEG's pixels, and the stored die
    (crop and record) it is (None: none; deleting that die takes it off the photo too)."""

    cx: float
    cy: float
    side: float
    value: int
    example_id: int | None = None


@dataclass(frozen=True)
class StoredPhoto:
    """A confirmed photo of a setup: its id, its photo key (the fold key its dice carry),
    the JPEG's size, its confirmed dice, when it was stored, and where the dice the host
    deleted lay (`aside`: real dice all the same, so learnt neither as dice nor as false
    ones; their value is DELETED)."""

    photo_id: int
    setup: str
    photo: str
    width: int
    height: int
    dice: tuple[PhotoDie, ...]
    created_at: float
    aside: tuple[PhotoDie, ...] = ()

    @property
    def spots(self) -> tuple[PhotoDie, ...]:
        """Every die that lay on it, confirmed or set aside: where nothing is a false die."""
        return self.dice + self.aside


def _blob(array: np.ndarray | None) -> bytes | None:
    return None if array is None else np.asarray(array, np.float32).tobytes()


def _array(blob: bytes | None) -> np.ndarray | None:
    return None if blob is None else np.frombuffer(blob, np.float32).copy()


class SetupStore:
    """See the module docstring. `SetupStore(data_dir)`; `close()` when done."""

    def __init__(self, data_dir: Path) -> None:
        self.data_dir = Path(data_dir)
        self.data_dir.mkdir(parents=True, exist_ok=True)
        self.crops_dir = self.data_dir / CROPS_DIR
        self._lock = threading.Lock()
        self._db = sqlite3.connect(
            self.data_dir / STORE_FILE, check_same_thread=False, isolation_level=None
        )
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(SCHEMA)
        present = {row[1] for row in self._db.execute("PRAGMA table_info(examples)")}
        for name, kind in ADDED_COLUMNS:
            if name not in present:
                self._db.execute(f"ALTER TABLE examples ADD COLUMN {name} {kind}")

    def close(self) -> None:
        with self._lock:
            self._db.close()

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    def crop_path(self, setup: str, example_id: int) -> Path:
        return self.crops_dir / check_setup(setup) / f"{int(example_id)}.png"

    # -- writing --------------------------------------------------------------------------
    def add(self, setup: str, examples: Sequence[NewExample]) -> list[int]:
        """Store dice of one roll (crops first, then the records in one transaction);
        returns their ids."""
        check_setup(setup)
        for new in examples:
            _check_new(new)
        encoded = [_png(new.crop) for new in examples]
        folder = self.crops_dir / setup
        folder.mkdir(parents=True, exist_ok=True)
        ids: list[int] = []
        with self._transaction() as db:
            for new, png in zip(examples, encoded, strict=True):
                cursor = db.execute(
                    "INSERT INTO examples (setup, value, colour, set_index, lab_l, lab_a, lab_b,"
                    " embedding, probabilities, model, table_id, photo, throw, source,"
                    " created_at, views, view_probabilities)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    _row(setup, new),
                )
                example_id = int(cursor.lastrowid or 0)
                # the file (synced) before the commit: a committed record always has its crop
                atomic_write(folder / f"{example_id}.png", png)
                ids.append(example_id)
        return ids

    def photo_path(self, setup: str, photo_id: int) -> Path:
        return self.crops_dir / check_setup(setup) / PHOTOS_DIR / f"{int(photo_id)}.jpg"

    def add_photo(self, setup: str, photo: str, image: np.ndarray, dice: Sequence[PhotoDie]) -> int:
        """Store one confirmed photo (shrunk to PHOTO_LONG_SIDE, the dice with it) and
        drop the setup's oldest beyond MAX_PHOTOS; returns its id. The JPEG is written
        and synced before its record is committed, so a record never names a missing or
        half-written file, not even after a power cut."""
        check_setup(setup)
        height, width = image.shape[:2]
        factor = min(1.0, PHOTO_LONG_SIDE / max(height, width))
        if factor < 1.0:
            size = (max(1, round(width * factor)), max(1, round(height * factor)))
            image = cv2.resize(image, size, interpolation=cv2.INTER_AREA)
            height, width = image.shape[:2]
        ok, jpeg = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, PHOTO_QUALITY])
        if not ok:
            raise SetupError("a photo that cannot be encoded as JPEG")
        for die in dice:
            if not 1 <= int(die.value) <= 6:
                raise SetupError(f"a die's value is 1-6, not {die.value}")
        rows = [[round(d.cx * factor, 2), round(d.cy * factor, 2), round(d.side * factor, 2),
                 int(d.value), d.example_id] for d in dice]  # fmt: skip
        folder = self.crops_dir / setup / PHOTOS_DIR
        folder.mkdir(parents=True, exist_ok=True)
        with self._transaction() as db:
            cursor = db.execute(
                "INSERT INTO photos (setup, photo, width, height, dice, created_at)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (setup, str(photo), int(width), int(height), json.dumps(rows), time.time()),
            )
            photo_id = int(cursor.lastrowid or 0)
            atomic_write(folder / f"{photo_id}.jpg", jpeg.tobytes())
            old = [
                int(row[0])
                for row in db.execute(
                    "SELECT photo_id FROM photos WHERE setup = ? ORDER BY photo_id DESC"
                    " LIMIT -1 OFFSET ?",
                    (setup, MAX_PHOTOS),
                )
            ]
            db.executemany("DELETE FROM photos WHERE photo_id = ?", [(k,) for k in old])
        for k in old:  # after the commit: a committed record always has its file
            (folder / f"{k}.jpg").unlink(missing_ok=True)
        return photo_id

    def photos(self, setup: str) -> list[StoredPhoto]:
        """Every stored photo of a setup, oldest first."""
        with self._lock:
            rows = self._db.execute(
                "SELECT photo_id, setup, photo, width, height, dice, created_at FROM photos"
                " WHERE setup = ? ORDER BY photo_id",
                (check_setup(setup),),
            ).fetchall()
        out = []
        for photo_id, name, key, width, height, dice, created in rows:
            spots = [PhotoDie(float(x), float(y), float(s), int(v), _whole(e))
                     for x, y, s, v, e in json.loads(dice)]  # fmt: skip
            confirmed = tuple(d for d in spots if d.value != DELETED)
            aside = tuple(d for d in spots if d.value == DELETED)
            out.append(StoredPhoto(int(photo_id), str(name), str(key), int(width),
                                   int(height), confirmed, float(created), aside))  # fmt: skip
        return out

    def latest_photos(self, setup: str) -> list[StoredPhoto]:
        """One stored photo per photo key (a roll taught again counts once, the latest),
        only those that still hold a confirmed die (the host may have deleted them all),
        oldest first."""
        latest = {p.photo: p for p in self.photos(setup) if p.dice}
        return sorted(latest.values(), key=lambda p: p.photo_id)

    def photo_image(self, setup: str, photo_id: int) -> np.ndarray | None:
        """A stored photo's BGR pixels, None when its file is gone or damaged."""
        image = cv2.imread(str(self.photo_path(setup, photo_id)), cv2.IMREAD_COLOR)
        return None if image is None else np.asarray(image)

    def set_features(self, updates: Sequence[ViewUpdate], model: str) -> None:
        """Replace features made by another classifier, or add the views to a record made
        without them (`SetupLearner.refresh`)."""
        with self._transaction() as db:
            for u in updates:
                db.execute(
                    "UPDATE examples SET embedding = ?, views = ?, view_probabilities = ?,"
                    " model = ? WHERE example_id = ?",
                    (_blob(u.embedding), _blob(u.views), _blob(u.view_probabilities), model,
                     int(u.example_id)),
                )  # fmt: skip
                if u.probabilities is not None:
                    db.execute(
                        "UPDATE examples SET probabilities = ? WHERE example_id = ?"
                        " AND probabilities IS NOT NULL",
                        (_blob(u.probabilities), int(u.example_id)),
                    )

    def keep(self, setup: str, example_id: int) -> bool:
        """The host looked at a held-back die and keeps it; False when there is none."""
        with self._transaction() as db:
            cursor = db.execute(
                "UPDATE examples SET kept_by_host = 1 WHERE setup = ? AND example_id = ?",
                (check_setup(setup), int(example_id)),
            )
            return cursor.rowcount > 0

    def delete_example(self, setup: str, example_id: int) -> bool:
        """Delete one die (record, then crop), and take it off its kept photo's dice (the
        finder no longer learns it as a die), kept there as a spot set aside (value
        DELETED: a die the host deleted is mostly a real die with a wrong value, not a
        false die to learn as one); False when the setup has no such die."""
        with self._transaction() as db:
            cursor = db.execute(
                "DELETE FROM examples WHERE setup = ? AND example_id = ?",
                (check_setup(setup), int(example_id)),
            )
            found = cursor.rowcount > 0
            photos = db.execute(
                "SELECT photo_id, dice FROM photos WHERE setup = ?", (setup,)
            ).fetchall()
            for photo_id, dice in photos:
                rows = json.loads(dice)
                kept = [
                    row if row[4] != int(example_id) else [*row[:3], DELETED, None] for row in rows
                ]
                if kept != rows:
                    db.execute(
                        "UPDATE photos SET dice = ? WHERE photo_id = ?",
                        (json.dumps(kept), int(photo_id)),
                    )
        self.crop_path(setup, example_id).unlink(missing_ok=True)
        return found

    def delete_setup(self, setup: str) -> int:
        """Delete every die and photo of a setup, records and files; returns how many
        dice."""
        with self._transaction() as db:
            cursor = db.execute("DELETE FROM examples WHERE setup = ?", (check_setup(setup),))
            count = cursor.rowcount
            db.execute("DELETE FROM photos WHERE setup = ?", (setup,))
            db.execute("DELETE FROM outcomes WHERE setup = ?", (setup,))
        shutil.rmtree(self.crops_dir / setup, ignore_errors=True)
        return count

    def delete_table(self, setup: str, table_id: str) -> int:
        """Delete the dice one table confirmed (records, then crops) and the photos of its
        rolls (those keyed `roll_photo` for it, or holding one of its dice); the dice other
        tables confirmed and those taught on the server machine stay. Returns how many
        dice."""
        check_setup(setup)
        with self._transaction() as db:
            ids = {
                int(row[0])
                for row in db.execute(
                    "SELECT example_id FROM examples WHERE setup = ? AND table_id = ?",
                    (setup, str(table_id)),
                )
            }
            db.execute(
                "DELETE FROM examples WHERE setup = ? AND table_id = ?", (setup, str(table_id))
            )
            photos = db.execute(
                "SELECT photo_id, photo, dice FROM photos WHERE setup = ?", (setup,)
            ).fetchall()
            gone = [
                int(photo_id)
                for photo_id, key, dice in photos
                if is_table_photo(str(key), table_id)
                or any(row[4] in ids for row in json.loads(dice))
            ]
            db.executemany("DELETE FROM photos WHERE photo_id = ?", [(k,) for k in gone])
        for k in ids:  # after the commit: a committed record always has its file
            self.crop_path(setup, k).unlink(missing_ok=True)
        for k in gone:
            self.photo_path(setup, k).unlink(missing_ok=True)
        return len(ids)

    def add_outcome(self, setup: str, at: float, without_tap: bool) -> None:
        """Note an applied camera roll of the setup (whether it went in without a tap), for
        the camera panel's share of the last hour after a restart; older than
        OUTCOMES_KEPT_S goes."""
        with self._transaction() as db:
            db.execute(
                "INSERT INTO outcomes (setup, at, without_tap) VALUES (?, ?, ?)",
                (check_setup(setup), float(at), int(bool(without_tap))),
            )
            db.execute("DELETE FROM outcomes WHERE at < ?", (float(at) - OUTCOMES_KEPT_S,))

    def outcomes_since(self, since: float) -> dict[str, list[tuple[float, bool]]]:
        """Every setup's applied camera rolls since `since`, oldest first: (at, without_tap)."""
        with self._lock:
            rows = self._db.execute(
                "SELECT setup, at, without_tap FROM outcomes WHERE at >= ? ORDER BY at, rowid",
                (float(since),),
            ).fetchall()
        out: dict[str, list[tuple[float, bool]]] = {}
        for setup, at, without_tap in rows:
            out.setdefault(str(setup), []).append((float(at), bool(without_tap)))
        return out

    # -- reading --------------------------------------------------------------------------
    def examples(self, setup: str) -> list[StoredExample]:
        """Every stored die of a setup, oldest first."""
        with self._lock:
            rows = self._db.execute(
                "SELECT example_id, setup, value, colour, set_index, lab_l, lab_a, lab_b,"
                " embedding, probabilities, model, table_id, photo, throw, source,"
                " kept_by_host, created_at, views, view_probabilities"
                " FROM examples WHERE setup = ? ORDER BY example_id",
                (check_setup(setup),),
            ).fetchall()
        return [_stored(row) for row in rows]

    def example_table(self, setup: str, example_id: int) -> tuple[bool, str | None]:
        """(whether the setup has the die, the table it was confirmed at: None for a
        teaching round's)."""
        with self._lock:
            row = self._db.execute(
                "SELECT table_id FROM examples WHERE setup = ? AND example_id = ?",
                (check_setup(setup), int(example_id)),
            ).fetchone()
        return (False, None) if row is None else (True, _text(row[0]))

    def count(self, setup: str) -> int:
        with self._lock:
            (n,) = self._db.execute(
                "SELECT COUNT(*) FROM examples WHERE setup = ?", (check_setup(setup),)
            ).fetchone()
        return int(n)

    def setup_of_table(self, table_id: str) -> str | None:
        """The setup `table_id`'s game taught most dice (None: it taught none)."""
        with self._lock:
            row = self._db.execute(
                "SELECT setup FROM examples WHERE table_id = ? GROUP BY setup"
                " ORDER BY COUNT(*) DESC, setup LIMIT 1",
                (str(table_id),),
            ).fetchone()
        return None if row is None else str(row[0])

    def setups(self) -> dict[str, int]:
        """Every setup with stored dice and how many."""
        with self._lock:
            rows = self._db.execute(
                "SELECT setup, COUNT(*) FROM examples GROUP BY setup ORDER BY setup"
            ).fetchall()
        return {str(name): int(n) for name, n in rows}

    def crop_png(self, setup: str, example_id: int) -> bytes | None:
        """The die's crop as PNG bytes, None when the setup has no such die."""
        path = self.crop_path(setup, example_id)
        try:
            return path.read_bytes()
        except FileNotFoundError:
            return None

    def crop(self, setup: str, example_id: int) -> np.ndarray | None:
        """The die's 64 px BGR crop, None when missing."""
        png = self.crop_png(setup, example_id)
        if png is None:
            return None
        image = cv2.imdecode(np.frombuffer(png, np.uint8), cv2.IMREAD_COLOR)
        return None if image is None else np.asarray(image)


def _check_new(new: NewExample) -> None:
    if not 1 <= int(new.value) <= 6:
        raise SetupError(f"a die's value is 1-6, not {new.value}")
    if new.source not in SOURCES:
        raise SetupError(f"source {new.source!r} is not one of {', '.join(SOURCES)}")
    crop = np.asarray(new.crop)
    if crop.ndim != 3 or crop.shape[2] != 3 or crop.dtype != np.uint8:
        raise SetupError(f"a crop is H x W x 3 uint8, not {crop.shape} {crop.dtype}")


def _png(crop: np.ndarray) -> bytes:
    if crop.shape[:2] != (CROP_SIZE, CROP_SIZE):
        crop = cv2.resize(crop, (CROP_SIZE, CROP_SIZE), interpolation=cv2.INTER_AREA)
    ok, buffer = cv2.imencode(".png", crop)
    if not ok:
        raise SetupError("PNG encoding of a crop failed")
    return bytes(buffer.tobytes())


def _row(setup: str, new: NewExample) -> tuple[object, ...]:
    lab = new.lab if new.lab is not None else (None, None, None)
    return (
        setup,
        int(new.value),
        new.colour,
        new.set_index,
        *lab,
        _blob(new.embedding),
        _blob(new.probabilities),
        new.model,
        new.table_id,
        new.photo,
        new.throw,
        new.source,
        time.time(),
        _blob(new.views),
        _blob(new.view_probabilities),
    )


def _number(value: object) -> float:
    if not isinstance(value, int | float):
        raise SetupError(f"a stored number is {value!r}")
    return float(value)


def _whole(value: object) -> int | None:
    return None if value is None else int(_number(value))


def _text(value: object) -> str | None:
    return None if value is None else str(value)


def _floats(value: object) -> np.ndarray | None:
    if value is not None and not isinstance(value, bytes):
        raise SetupError("a stored vector is not a blob")
    return _array(value)


def _matrix(value: object, width: int) -> np.ndarray | None:
    """A stored V x width matrix (None: not stored, or not a whole number of rows)."""
    flat = _floats(value)
    if flat is None or width == 0 or len(flat) % width or not len(flat):
        return None
    return flat.reshape(-1, width)


def roll_photo(table_id: str, throw: int) -> str:
    """The photo key of a table's applied camera roll (one photo per table and throw)."""
    return f"table {table_id} roll {throw}"


def is_table_photo(key: str, table_id: str) -> bool:
    """Whether a stored photo's key is one of `table_id`'s rolls (`roll_photo`)."""
    return key.startswith(f"table {table_id} roll ")


def photo_key(photo: str | None, table_id: str | None, example_id: int) -> str:
    """The photo a stored die counts in for the fold check: its stored key; a die stored
    without one is a photo of its own; a roll stored by an older version as ``roll N``
    (without its table) is the roll of its table (`roll_photo`), so throws of different
    tables with the same number are not one photo."""
    if photo is None:
        return f"example {example_id}"
    if table_id is not None and photo.startswith("roll "):
        return f"table {table_id} {photo}"
    return photo


def _stored(row: tuple[object, ...]) -> StoredExample:
    (example_id, setup, value, colour, set_index, lab_l, lab_a, lab_b, embedding,
     probabilities, model, table_id, photo, throw, source, kept, created, views,
     view_probabilities) = row  # fmt: skip
    lab = None if lab_l is None else (_number(lab_l), _number(lab_a), _number(lab_b))
    vector = _floats(embedding)
    if vector is None:
        raise SetupError(f"example {example_id}: no embedding")
    view_vectors, view_shipped = _matrix(views, len(vector)), _matrix(view_probabilities, CLASSES)
    example = Example(
        value=int(_number(value)),
        embedding=vector,
        probabilities=_floats(probabilities),
        lab=lab,
        colour=_text(colour),
        set_index=_whole(set_index),
        kept_by_host=bool(kept),
        photo=photo_key(_text(photo), _text(table_id), int(_number(example_id))),
        views=view_vectors if view_shipped is not None else None,
        view_probabilities=view_shipped if view_vectors is not None else None,
    )
    return StoredExample(
        int(_number(example_id)),
        str(setup),
        example,
        str(model),
        str(source),
        _text(table_id),
        _text(photo),
        _whole(throw),
        _number(created),
    )
