"""Table Companion: a camera and tablet companion for dice games played on a real table."""

__version__ = "0.1.0"
