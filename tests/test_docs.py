"""What the README and the docs point a reader to is there: every relative link (and its
#anchor), every test named as `tests/...py::name`, every section quoted after a file
(`docs/live-table.md, "Which table gets camera rolls"`) and every repository path the
guides name. The dated logs (docs/BENCHMARKS.md, docs/benchmarks/, models/README.md) name
files as they were on the day, so only their links and test names are checked."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GUIDES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
GUIDES = [path for path in GUIDES if path.name != "BENCHMARKS.md"]
EVERY_DOC = [
    ROOT / "README.md",
    *sorted((ROOT / "docs").rglob("*.md")),
    ROOT / "models" / "README.md",
    ROOT / "models" / "training" / "README.md",
]

MARKDOWN_LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
TEST_NAME = re.compile(r"(tests/[\w/]+\.py)::(\w+)(?:::(\w+))?")
SECTION = re.compile(r"((?:docs|models)/[\w/.-]+\.md|\b[A-Z][\w-]*\.md)`?,\s+\"([^\"]+)\"")
TOP_FOLDERS = "companion|bench|scripts|tests|models|web|calibration|docs"
REPO_PATH = re.compile(rf"(?<![\w/.-])((?:{TOP_FOLDERS})/[\w./*-]*\w)")
PLACEHOLDER = re.compile(r"NAME|<|test_$")
# the guides write a package's modules from inside companion/ (`table/tables.py`)
PATH_ROOTS = (ROOT, ROOT / "companion")


def line_of(text: str, index: int) -> int:
    return text.count("\n", 0, index) + 1


def anchors(markdown: Path) -> set[str]:
    """GitHub's ids of a file's headings: lower case, punctuation dropped, spaces to '-'."""
    ids: set[str] = set()
    for heading in re.findall(r"^#{1,6}\s+(.+)$", markdown.read_text(encoding="utf-8"), re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")
        ids.add(slug)
    return ids


def broken_link(doc: Path, target: str) -> str | None:
    if re.match(r"[a-z]+:", target):  # http:, mailto: ...: not ours to check here
        return None
    path, _, anchor = target.partition("#")
    linked = (doc.parent / path).resolve() if path else doc
    if not linked.exists():
        return f"no file {target}"
    if anchor and linked.suffix == ".md" and anchor not in anchors(linked):
        return f"no heading #{anchor} in {linked.relative_to(ROOT)}"
    return None


def test_every_relative_link_reaches_its_file_and_heading() -> None:
    broken = []
    for doc in EVERY_DOC:
        text = doc.read_text(encoding="utf-8")
        for match in MARKDOWN_LINK.finditer(text):
            problem = broken_link(doc, match.group(1))
            if problem:
                broken.append(f"{doc.relative_to(ROOT)}:{line_of(text, match.start())}: {problem}")
    assert not broken, "\n".join(broken)


def test_every_test_a_doc_names_exists() -> None:
    missing = []
    for doc in EVERY_DOC:
        text = doc.read_text(encoding="utf-8")
        for match in TEST_NAME.finditer(text):
            path, name, method = match.groups()
            source = ROOT / path
            wanted = method or name
            if not source.exists() or not re.search(
                rf"\b(def|class)\s+{wanted}\b", source.read_text(encoding="utf-8")
            ):
                missing.append(
                    f"{doc.relative_to(ROOT)}:{line_of(text, match.start())}: {match[0]}"
                )
    assert not missing, "\n".join(missing)


def test_every_quoted_section_is_in_its_file() -> None:
    """A section is quoted by its heading or by the bold words that open its paragraph."""
    missing = []
    for doc in EVERY_DOC:
        text = doc.read_text(encoding="utf-8")
        for match in SECTION.finditer(" ".join(text.split())):
            name, section = match.groups()
            target = ROOT / name if "/" in name else ROOT / "docs" / name
            words = " ".join(target.read_text(encoding="utf-8").split()) if target.exists() else ""
            if section.lower() not in words.lower():
                missing.append(f'{doc.relative_to(ROOT)}: {name}, "{section}"')
    assert not missing, "\n".join(missing)


def test_every_path_the_guides_name_exists() -> None:
    missing = []
    for doc in GUIDES:
        text = doc.read_text(encoding="utf-8")
        for match in REPO_PATH.finditer(text):
            path = match.group(1)
            if PLACEHOLDER.search(path):
                continue
            if not any(list(root.glob(path)) or (root / path).exists() for root in PATH_ROOTS):
                missing.append(f"{doc.relative_to(ROOT)}:{line_of(text, match.start())}: {path}")
    assert not missing, "\n".join(missing)
