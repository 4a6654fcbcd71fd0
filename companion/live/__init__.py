"""The camera side of the live table: rest detection (settle), matching a settled reading to
the dice a game expects (match), the camera worker thread (camera), dice statistics (stats)
and the bundled demo clip (demo).

Dependencies point inward: this package wires vision to rules (match builds a rules `Roll`),
and imports nothing of the web layer. No module here opens a camera at import time."""
