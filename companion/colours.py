"""The basic colour names of die bodies, shared by the rules (the colours a game's dice may
have) and the vision stages (the names the camera gives a die): one vocabulary, so that a
die the camera calls "teal" is a die the rules know. They are the names of the colour
labels in shared/data/byler-d6-train/colours.csv."""

DIE_COLOURS: tuple[str, ...] = (
    "white", "black", "grey", "red", "orange", "yellow",
    "green", "blue", "teal", "purple", "pink", "brown",
)  # fmt: skip
