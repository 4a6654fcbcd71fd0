"""The rules engine: one module per game behind one registry (`registry.GAMES`)."""
