"""The house rules of docs/ARCHITECTURE.md, checked on the source files with `ast`:

- the import contract, module by module: rules import nothing of vision, live, table, web
  or synth (the renderer); vision nothing of rules, live, table, web or synth; live
  nothing of table or web; synth nothing of rules, live, table or web; the table's service
  (companion/table/) nothing of web, FastAPI, Starlette, Jinja2 or MarkupSafe; inside the
  service, the table's core knows no camera, nothing calls back into the camera hub, and
  the camera's decision applies nothing (MODULE_RULES); the views import no framework;
  and no import cycle anywhere among companion's modules, not even through imports made
  for type checking only;
- no function in companion/ longer than MAX_FUNCTION_LINES, except those in
  LONG_FUNCTIONS (a list that only shrinks: an entry that is no longer needed fails too);
- no new `Any`: each package of companion/ uses it at most as often as ANY_BUDGET says
  (and the budget is lowered when a package needs fewer).

Ruff's C90 (max-complexity 12, pyproject.toml) and mypy complete the gates in .ci/run.
Imports inside functions count (they run too); imports under `if TYPE_CHECKING:` do not
run, but they count for the rules and for cycles (a type-only import from the service into
the web layer still ties the two together: the fragments <-> tables cycle was one); only
`imports_of` leaves them out."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "companion"

# the web frameworks: only companion/web/ translates between them and the service
FRAMEWORKS = ("fastapi", "starlette", "jinja2", "markupsafe", "uvicorn")

# (layer, the layers it must not import); a name is one of our modules or packages (the
# module and everything below it) or a third-party package
FORBIDDEN_IMPORTS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "companion.rules",
        (
            "companion.vision",
            "companion.live",
            "companion.table",
            "companion.web",
            "companion.synth",
        ),
    ),
    (
        "companion.vision",
        (
            "companion.rules",
            "companion.live",
            "companion.table",
            "companion.web",
            "companion.synth",
        ),
    ),
    ("companion.live", ("companion.table", "companion.web")),
    # the live table's service: usable without a server, it never imports a renderer
    ("companion.table", ("companion.web", *FRAMEWORKS)),
    # the renderer (training, tests, benches, the demo clip) stands beside vision
    ("companion.synth", ("companion.rules", "companion.live", "companion.table", "companion.web")),
    # the packaged files (models, web pages, calibrations): found by everyone, imports no one
    (
        "companion.assets",
        (
            "companion.rules",
            "companion.vision",
            "companion.live",
            "companion.table",
            "companion.web",
            "companion.synth",
        ),
    ),
)

# The camera's modules in the service, in the order a roll passes them
CAMERA_FLOW = (
    "companion.table.camera_runtime",
    "companion.table.camera_feed",
    "companion.table.camera_decision",
    "companion.table.held_reading",
    "companion.table.camera_pictures",
    "companion.table.roll_intake",
    "companion.table.learning",
)
TABLE_CORE = (
    "companion.table.access",
    "companion.table.dice",
    "companion.table.records",
    "companion.table.snapshot",
    "companion.table.store",
    "companion.table.tables",
    "companion.table.text",
    "companion.table.words",
    "companion.table.worker_life",
)

# (modules, the modules they must not import): the contract inside the packages
MODULE_RULES: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...] = (
    # the tables, their store and records know no camera: the camera feeds them rolls
    (TABLE_CORE, (*CAMERA_FLOW, "companion.table.camera_hub")),
    # one pass: the hub hands a throw along and nothing it hands to calls back into it
    (CAMERA_FLOW, ("companion.table.camera_hub",)),
    # the decision is a function of the throw: it applies, stores and learns nothing
    (
        ("companion.table.camera_decision", "companion.table.held_reading"),
        ("companion.table.roll_intake", "companion.table.learning", "companion.table.store"),
    ),
    # the views are presentation: no framework, no routes, no camera
    (("companion.web.views",), (*FRAMEWORKS, "companion.web.routes", *CAMERA_FLOW)),
)

MAX_FUNCTION_LINES = 60

# Functions allowed over MAX_FUNCTION_LINES ("path::qualified name": lines): none are left
# (the last two, the WebSocket's, were split into routes/ws.py's steps); never add one.
LONG_FUNCTIONS: dict[str, int] = {}

# How often each package may name `typing.Any` (annotations, casts, aliases; imports not
# counted). Lower a budget when a package needs fewer; never raise one.
ANY_BUDGET: dict[str, int] = {
    "companion": 9,  # the modules directly in companion/
    "companion.rules": 23,
    "companion.vision": 6,
    "companion.live": 0,
    "companion.synth": 0,
    "companion.assets": 0,
    "companion.table": 29,
    "companion.web": 84,
}


@dataclass(frozen=True, slots=True)
class Module:
    name: str  # dotted, e.g. "companion.table.tables"
    path: Path
    is_package: bool  # an __init__.py

    @property
    def relative(self) -> str:
        return self.path.relative_to(ROOT).as_posix()


@cache
def modules() -> dict[str, Module]:
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        if is_package:
            parts.pop()
        name = ".".join(parts)
        found[name] = Module(name, path, is_package)
    return found


@cache
def tree_of(module: Module) -> ast.Module:
    return ast.parse(module.path.read_text(encoding="utf-8"), filename=str(module.path))


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _import_nodes(node: ast.AST, type_only: bool = False) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import under `node` that can run (not the body of `if TYPE_CHECKING:`), and
    with `type_only` those made for type checking too."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, ast.Import | ast.ImportFrom):
            yield child
        elif isinstance(child, ast.If) and _is_type_checking(child) and not type_only:
            for other in child.orelse:
                yield from _import_nodes(ast.Module(body=[other], type_ignores=[]))
        else:
            yield from _import_nodes(child, type_only)


def _ours(name: str) -> str | None:
    """The deepest module of companion/ that `name` names (a.b.c -> a.b when c is a name
    inside a.b), or None when it is not ours."""
    known = modules()
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def imported_names(module: Module, type_only: bool = False) -> set[str]:
    """Every name `module` imports, absolute and dotted ("fastapi.templating",
    "companion.table.tables.Table"), with `type_only` those for type checking too."""
    found: set[str] = set()
    for node in _import_nodes(tree_of(module), type_only):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        else:
            if node.level:
                package = module.name.split(".")
                if not module.is_package:
                    package.pop()
                package = package[: len(package) - (node.level - 1)]
                base = ".".join([*package, *([node.module] if node.module else [])])
            else:
                base = node.module or ""
            targets = [f"{base}.{alias.name}" for alias in node.names]
        found.update(targets)
    return found


def imports_of(module: Module, type_only: bool = False) -> set[str]:
    """The modules of companion/ that `module` imports (with `type_only`: for type
    checking too)."""
    found: set[str] = set()
    for target in imported_names(module, type_only):
        ours = _ours(target)
        if ours is not None and ours != module.name:
            found.add(ours)
    return found


def targets_of(module: Module) -> set[str]:
    """What the rules judge: our modules it imports, and the third-party names, type-only
    imports included."""
    others = {
        name for name in imported_names(module, type_only=True) if not _in_layer(name, "companion")
    }
    return imports_of(module, type_only=True) | others


def _in_layer(name: str, layer: str) -> bool:
    return name == layer or name.startswith(layer + ".")


def broken_rules(
    rules: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...],
) -> list[str]:
    """`module imports target` for every import against `rules` ((scopes, forbidden):
    each a module or package of ours, or a third-party package)."""
    broken = []
    for module in modules().values():
        for scopes, forbidden in rules:
            if not any(_in_layer(module.name, scope) for scope in scopes):
                continue
            for target in sorted(targets_of(module)):
                if any(_in_layer(target, other) for other in forbidden):
                    broken.append(f"{module.relative} imports {target}")
    return broken


def test_the_layers_import_only_inwards() -> None:
    rules = tuple(((layer,), forbidden) for layer, forbidden in FORBIDDEN_IMPORTS)
    broken = broken_rules(rules)
    assert not broken, "imports against the layers (docs/ARCHITECTURE.md):\n" + "\n".join(broken)


def test_the_modules_keep_their_contract() -> None:
    """Inside the packages, module by module (MODULE_RULES, docs/ARCHITECTURE.md)."""
    broken = broken_rules(MODULE_RULES)
    assert not broken, "imports against the modules' contract:\n" + "\n".join(broken)


def test_every_module_a_rule_names_exists() -> None:
    """A rule about a module that was moved or renamed would pass for nothing."""
    known = modules()
    named = {
        name
        for scopes, forbidden in MODULE_RULES
        for name in (*scopes, *forbidden)
        if _in_layer(name, "companion")
    }
    assert sorted(n for n in named if n not in known) == []


def test_the_rules_see_a_broken_import() -> None:
    """The checks can fail: the web's fragments import the framework and the tables (for
    type checking only); a rule forbidding those finds both."""
    rules = ((("companion.web.fragments",), ("jinja2", "companion.table.tables")),)
    assert broken_rules(rules) == [
        "companion/web/fragments.py imports companion.table.tables",
        "companion/web/fragments.py imports jinja2",
    ]


def import_cycles(type_only: bool = False) -> list[list[str]]:
    """The import cycles among companion's modules: Tarjan's strongly connected components
    of more than one module (or a module importing itself); with `type_only` counting the
    imports made for type checking too."""
    graph = {name: sorted(imports_of(module, type_only)) for name, module in modules().items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    cycles: list[list[str]] = []

    def visit(name: str) -> None:
        index[name] = low[name] = len(index)
        stack.append(name)
        on_stack.add(name)
        for target in graph[name]:
            if target not in index:
                visit(target)
                low[name] = min(low[name], low[target])
            elif target in on_stack:
                low[name] = min(low[name], index[target])
        if low[name] == index[name]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == name:
                    break
            if len(component) > 1:
                cycles.append(sorted(component))

    for name in graph:
        if name not in index:
            visit(name)
    return cycles


def test_no_import_cycle_in_companion() -> None:
    assert import_cycles() == []


def test_no_import_cycle_even_through_type_only_imports() -> None:
    """A cycle kept alive by `if TYPE_CHECKING:` is still two modules that need each other
    (tables cached what fragments drew; fragments imported tables for its types)."""
    assert import_cycles(type_only=True) == []


def test_the_import_checks_see_imports_inside_functions_and_skip_type_checking() -> None:
    """The checks above can fail: the views' import of the tables' snapshot (at module
    level) and render's import of the tables under TYPE_CHECKING are told apart."""
    render = modules()["companion.web.fragments"]
    assert "companion.web.views" in imports_of(render)
    assert "companion.table.tables" not in imports_of(render)  # only for type checking
    assert "companion.table.tables" in imports_of(render, type_only=True)
    camera = modules()["companion.live.worker"]
    assert "companion.vision.annotate" in imports_of(camera)  # inside a function


# The camera side: it asks the engine what a throw means (Turn.on_throw) and which dice a
# game throws (Game.dice_colours); it never tells games apart by name.
CAMERA_SIDE = (
    "companion.live",
    "companion.table.camera_feed",
    "companion.table.camera_hub",
    "companion.table.camera_pictures",
    "companion.table.camera_runtime",
    "companion.table.held_reading",
    "companion.table.roll_intake",
)


def test_the_camera_side_never_branches_on_a_game_name() -> None:
    from companion.rules.registry import GAME_NAMES

    found = []
    for module in modules().values():
        if not any(_in_layer(module.name, part) for part in CAMERA_SIDE):
            continue
        for node in ast.walk(tree_of(module)):
            if not isinstance(node, ast.Compare):
                continue
            for side in (node.left, *node.comparators):
                if isinstance(side, ast.Constant) and side.value in GAME_NAMES:
                    found.append(f"{module.relative}:{node.lineno} compares with {side.value!r}")
    assert not found, found


def functions(tree: ast.AST, prefix: str = "") -> Iterator[tuple[str, ast.AST, int]]:
    """(qualified name, node, lines) of every function, nested ones too."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            name = prefix + node.name
            assert node.end_lineno is not None
            yield name, node, node.end_lineno - node.lineno + 1
            yield from functions(node, name + ".")
        elif isinstance(node, ast.ClassDef):
            yield from functions(node, prefix + node.name + ".")


def function_lengths() -> dict[str, int]:
    return {
        f"{module.relative}::{name}": lines
        for module in modules().values()
        for name, _node, lines in functions(tree_of(module))
    }


def test_no_function_is_longer_than_a_screen() -> None:
    lengths = function_lengths()
    too_long = {
        name: lines
        for name, lines in lengths.items()
        if lines > MAX_FUNCTION_LINES and lines > LONG_FUNCTIONS.get(name, 0)
    }
    assert not too_long, (
        f"functions over {MAX_FUNCTION_LINES} lines (split them into named steps): {too_long}"
    )


def test_the_long_function_list_only_shrinks() -> None:
    lengths = function_lengths()
    stale = {
        name: lengths.get(name)
        for name, allowed in LONG_FUNCTIONS.items()
        if lengths.get(name, 0) <= MAX_FUNCTION_LINES or lengths[name] < allowed
    }
    assert not stale, (
        f"LONG_FUNCTIONS entries to remove or lower (now the length shown, None: gone): {stale}"
    )


def any_count(module: Module) -> int:
    return sum(
        1
        for node in ast.walk(tree_of(module))
        if (isinstance(node, ast.Name) and node.id == "Any")
        or (isinstance(node, ast.Attribute) and node.attr == "Any")
    )


def package_of(module: Module) -> str:
    """The budget a module counts against: its package below companion/ (companion.web for
    companion.web.views.sixis), or "companion" for the modules directly in companion/."""
    parts = module.name.split(".")
    depth = len(parts) if module.is_package else len(parts) - 1
    return ".".join(parts[: min(depth, 2)])


def test_no_new_any() -> None:
    counts: dict[str, int] = dict.fromkeys(ANY_BUDGET, 0)
    for module in modules().values():
        package = package_of(module)
        counts[package] = counts.get(package, 0) + any_count(module)
    over = {p: n for p, n in counts.items() if n > ANY_BUDGET.get(p, 0)}
    assert not over, f"more `Any` than the budget allows (type it instead): {over}"
    under = {p: n for p, n in counts.items() if n < ANY_BUDGET[p]}
    assert not under, f"fewer `Any` than the budget: lower ANY_BUDGET to {under}"
