"""Training recipe helpers for models/train.py (needs the optional ``train`` extra: torch)."""
