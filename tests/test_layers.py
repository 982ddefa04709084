"""The layering of docs/ARCHITECTURE.md (and ../shared/LAYOUT.md), checked on the source's AST.

Each rule is its own test; a failure names every offending file and line. Nothing is imported:
the files are parsed, so a rule holds even for a module no test happens to import."""

from __future__ import annotations

import ast
from collections import defaultdict
from dataclasses import dataclass
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
APP = ("app.py", "main.py", "app_pages", "ui", "core", "serve")  # the app's code: every rule applies
CHECKED = (*APP, "bench")  # plus bench: layering, aliases, circles
PROJECT_TOP = {"app", "main", "app_pages", "ui", "core", "serve", "bench", "tests"}

# core's packages, lowest first; a module may import its own level or any lower one.
CORE_ORDER = (
    {"", "text", "typed_numbers"},  # "" is core/__init__
    {"model"},
    {"gguf"},
    {"quant"},
    {"cost"},
    {"checkpoints", "decode"},
    {"serving"},
    {"evaluate", "practice"},
    {"viz"},
    {"lesson"},
    {"classroom"},  # a class's plan carries pages' settings (core.decode.settings, core.lesson.pages)
)
CORE_LEVEL = {name: level for level, names in enumerate(CORE_ORDER) for name in names}

# ui's layers, lowest first: base helpers < page sections < the guided lesson < class mode (on top: it may use
# everything, nothing in ui uses it; the pages and app.py, above ui, may). "" is ui/__init__.
UI_ORDER = (
    {"", "models", "present", "tables", "static", "figures", "references", "picker", "frame", "page"},
    {
        "errors",
        "decode",
        "batching",
        "cache_demo",
        "context",
        "cost",
        "gguf",
        "latency_figure",
        "memory_reference",
        "memory_sections",
        "memory_terms",
        "paged",
        "practice",
        "practice_saved",
        "summary",
        "quant",
        "quant_model",
        "runs",
        "see_it_move",
        "serve_class",
        "speculative",
        "speed",
        "weights",
        "worked",
    },
    {"lesson", "session", "handout"},  # session: every owner's defaults and show(settings)
    {"classroom", "modes"},  # modes: the frame's ordered modes (presenter, lesson, class)
)
UI_LEVEL = {name: level for level, names in enumerate(UI_ORDER) for name in names}

# plotly outside core/viz/, each with why: the figure cache copies a viz figure's dict into a
# ``go.Figure`` without validating it again (it builds none); the static files are plotly's own JS,
# read from the package's folder and served to the browser.
PLOTLY_ALLOWED = {"ui/figures.py", "serve/frontend.py"}

# Third-party packages the app's code imports inside a function, each with why: a cost paid only by
# the pages that use it (never to dodge a circle; a project module is always imported at the top).
FUNCTION_IMPORT_ALLOWED = {
    "gguf": "~65 ms to import (python -X importtime); only the GGUF reader, writer, header and the table of "
    "ggml type sizes (core.gguf.layout.ggml_type_sizes, for a card naming a type LAYOUTS does not draw) use it",
    "pint": "~0.3 s to import and ~0.7 s to build its registry; only typed quantities with units use it",
    "redis": "~0.2 s to import; only a class store at a redis:// URL uses it (core/classroom/redis_store.py)",
    "transformers": "optional at run time (requirements-test.txt only) and ~2 s to import; only the memory page's "
    "check of a config.json against transformers' own cache uses it (core/cost/kv_reference.py)",
}


@dataclass(frozen=True)
class Import:
    path: str  # relative to ROOT, posix
    line: int
    target: str  # the dotted module imported (for ``from m import n``: ``m.n`` if that is a module, else ``m``)
    alias: str | None  # the local name when ``as`` was written
    in_function: bool
    type_checking: bool  # under ``if TYPE_CHECKING:``: never runs


def _files(tops) -> list[Path]:
    out = []
    for top in tops:
        p = ROOT / top
        out += [p] if p.is_file() else sorted(p.rglob("*.py"))
    return out


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


@cache
def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


@cache
def _all_modules() -> frozenset[str]:
    return frozenset(_module_name(p) for p in _files((*CHECKED, "tests")))


def _is_module(name: str) -> bool:
    return name in _all_modules()


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imports(path: Path) -> list[Import]:
    rel, here = _rel(path), _module_name(path)
    package = here if path.name == "__init__.py" else here.rpartition(".")[0]
    out: list[Import] = []

    def visit(node: ast.AST, in_function: bool, type_checking: bool) -> None:
        if isinstance(node, ast.Import):
            for a in node.names:
                out.append(Import(rel, node.lineno, a.name, a.asname, in_function, type_checking))
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                up = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                base = ".".join([*up, base] if base else up)
            for a in node.names:
                sub = f"{base}.{a.name}"
                target = sub if _is_module(sub) else base
                out.append(Import(rel, node.lineno, target, a.asname, in_function, type_checking))
        for child in ast.iter_child_nodes(node):
            visit(
                child,
                in_function or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)),
                type_checking or (isinstance(node, ast.If) and _is_type_checking(node.test)),
            )

    visit(_tree(path), False, False)
    return out


def _report(problems: list[str], rule: str) -> None:
    assert not problems, f"{rule}: {len(problems)}\n" + "\n".join(problems)


def _project(target: str) -> bool:
    return target.split(".")[0] in PROJECT_TOP


def _core_level(module: str) -> int | None:
    parts = module.split(".")
    if parts[0] != "core":
        return None
    return CORE_LEVEL.get(parts[1] if len(parts) > 1 else "")


def test_core_imports_only_its_own_level_or_lower():
    """A module of ``core/`` imports only from its own package's level of the order or a lower one."""
    problems = []
    for path in _files(("core",)):
        mine = _core_level(_module_name(path))
        assert mine is not None, f"{_rel(path)}: a core package missing from CORE_ORDER"
        for imp in _imports(path):
            theirs = _core_level(imp.target)
            if theirs is not None and theirs > mine:
                problems.append(f"{imp.path}:{imp.line}: imports {imp.target} (runs up the layering)")
    _report(problems, "core imports running up the layering")


def _ui_level(module: str) -> int | None:
    parts = module.split(".")
    if parts[0] != "ui":
        return None
    return UI_LEVEL.get(parts[1] if len(parts) > 1 else "")


def test_every_ui_module_has_a_layer():
    """Every module of ui/ belongs to one of UI_ORDER's layers (a new one is placed, not forgotten)."""
    problems = [f"{_rel(p)}: not in UI_ORDER" for p in _files(("ui",)) if _ui_level(_module_name(p)) is None]
    _report(problems, "ui modules without a layer")


def test_ui_imports_only_its_own_layer_or_lower():
    """ui's layering: base helpers < page sections (decode/, quant, …) < lesson/ < classroom/; no arrow from a
    page section (the decode stage) or the lesson back up to class mode."""
    problems = []
    for path in _files(("ui",)):
        here = _ui_level(_module_name(path))
        for imp in _imports(path):
            there = _ui_level(imp.target)
            if there is not None and here is not None and there > here and not imp.type_checking:
                problems.append(
                    f"{imp.path}:{imp.line}: {_module_name(path)} (layer {here}) imports {imp.target} (layer {there})"
                )
    _report(problems, "ui layering")


def test_no_streamlit_internals():
    """The app's code uses streamlit's public API only: ``import streamlit as st`` and its attributes, never a
    ``streamlit.*`` module (``streamlit.runtime`` and the like are internals an upgrade may change) nor a private
    attribute of a streamlit object."""
    problems = []
    for path in _files(APP):
        for imp in _imports(path):
            if imp.target.startswith("streamlit."):
                problems.append(f"{imp.path}:{imp.line}: imports {imp.target}")
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.Attribute) and node.attr.startswith("_") and not node.attr.startswith("__"):
                base = node.value
                while isinstance(base, ast.Attribute):
                    base = base.value
                if isinstance(base, ast.Name) and base.id in ("st", "streamlit"):
                    problems.append(f"{_rel(path)}:{node.lineno}: private attribute .{node.attr}")
    _report(problems, "streamlit internals")


def test_no_streamlit_in_core_or_serve():
    """``core/`` computes and ``serve/`` serves: neither imports streamlit."""
    problems = [
        f"{imp.path}:{imp.line}: imports {imp.target}"
        for path in _files(("core", "serve"))
        for imp in _imports(path)
        if imp.target.split(".")[0] == "streamlit"
    ]
    _report(problems, "streamlit imports in core/ or serve/")


def test_plotly_only_in_core_viz():
    """Figures are built in ``core/viz/`` alone (and ``PLOTLY_ALLOWED``'s files, each with a reason)."""
    problems = [
        f"{imp.path}:{imp.line}: imports {imp.target}"
        for path in _files(CHECKED)
        if not _rel(path).startswith("core/viz/") and _rel(path) not in PLOTLY_ALLOWED
        for imp in _imports(path)
        if imp.target.split(".")[0] == "plotly"
    ]
    _report(problems, "plotly imports outside core/viz/")


def test_bench_imports_nothing_from_tests():
    """``bench/`` stands alone: tests may import bench, never the other way round."""
    problems = [
        f"{imp.path}:{imp.line}: imports {imp.target}"
        for path in _files(("bench",))
        for imp in _imports(path)
        if imp.target.split(".")[0] == "tests"
    ]
    _report(problems, "bench imports from tests/")


def _strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's components of more than one module (or one importing itself), iteratively."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    out: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    comp = []
                    while True:
                        top = stack.pop()
                        on_stack.discard(top)
                        comp.append(top)
                        if top == node:
                            break
                    if len(comp) > 1 or node in graph.get(node, ()):
                        out.append(sorted(comp))
    return out


def test_no_import_circles():
    """No circle among the project's modules, counting imports at module level and inside functions."""
    graph: dict[str, set[str]] = defaultdict(set)
    where: dict[tuple[str, str], str] = {}
    for path in _files((*CHECKED, "tests")):
        here = _module_name(path)
        graph[here]
        for imp in _imports(path):
            if _project(imp.target) and not imp.type_checking and _is_module(imp.target) and imp.target != here:
                graph[here].add(imp.target)
                where.setdefault((here, imp.target), f"{imp.path}:{imp.line}")
    problems = []
    for comp in _strongly_connected(graph):
        members = set(comp)
        edges = [f"  {where[(a, b)]}: {a} -> {b}" for a in comp for b in sorted(graph[a] & members)]
        problems.append(" <-> ".join(comp) + "\n" + "\n".join(edges))
    _report(problems, "import circles")


def test_no_imports_inside_functions():
    """The app's code imports at the top of a module: an import inside a function hides a circle (or a
    cost) from the reader; the exceptions, third-party packages each with its reason, are
    ``FUNCTION_IMPORT_ALLOWED``."""
    problems = [
        f"{imp.path}:{imp.line}: imports {imp.target} inside a function"
        for path in _files(APP)
        for imp in _imports(path)
        if imp.in_function and imp.target.split(".")[0] not in FUNCTION_IMPORT_ALLOWED
    ]
    _report(problems, "imports inside functions")


def test_no_short_aliases_of_project_modules():
    """``import x as D`` / ``from core import state as K`` hide what a name is: spell the module."""
    problems = [
        f"{imp.path}:{imp.line}: {imp.target} as {imp.alias}"
        for path in _files(CHECKED)
        for imp in _imports(path)
        if imp.alias is not None and len(imp.alias) <= 2 and _project(imp.target) and _is_module(imp.target)
    ]
    _report(problems, "one- or two-letter aliases of project modules")


def test_figures_are_passed_not_named():
    """``figure(viz.fig_x, ...)``, not ``figure("fig_x", ...)``: go-to-definition and the import graph follow a
    function, not a string."""
    problems = []
    for path in _files(APP):
        for node in ast.walk(_tree(path)):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            first = node.args[0]
            if name == "figure" and isinstance(first, ast.Constant) and str(first.value).startswith("fig_"):
                problems.append(f"{_rel(path)}:{node.lineno}: figure({first.value!r}, ...)")
    _report(problems, "figures called by name")


def _session_aliases(tree: ast.Module) -> set[str]:
    """Names a module gives ``st.session_state`` (``ss = st.session_state``), and parameters named ``ss``."""
    out = {"ss"}
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Assign)
            and isinstance(node.value, ast.Attribute)
            and node.value.attr == "session_state"
        ):
            out.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return out


def _key_places(tree: ast.Module) -> list[ast.expr]:
    """Every expression used as a key: ``st.session_state[k]`` (or through a name for it, ``ss[k]``), its
    ``.get(k)``, ``.pop(k)``, ``.setdefault(k)``, ``k in st.session_state``, and any call's ``key=k`` (a widget's,
    a chart's, a component's or a container's key)."""
    aliases = _session_aliases(tree)
    project = {  # names this module imported from the project (modules and functions)
        (alias.asname or alias.name).split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom) and _project((getattr(node, "module", None) or "") or "x")
        for alias in node.names
    } | {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}

    def _is_session_state(node: ast.expr) -> bool:
        return (isinstance(node, ast.Attribute) and node.attr == "session_state") or (
            isinstance(node, ast.Name) and node.id in aliases
        )

    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript) and _is_session_state(node.value):
            out.append(node.slice)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in {"get", "pop", "setdefault"}
            and _is_session_state(node.func.value)
            and node.args
        ):
            out.append(node.args[0])
        elif isinstance(node, ast.Compare) and any(_is_session_state(c) for c in node.comparators):
            out.append(node.left)
        elif isinstance(node, ast.keyword) and node.arg == "key":
            out.append(node.value)
        elif isinstance(node, ast.Call) and (pos := _key_params().get(_called(node, project))) is not None:
            if len(node.args) > pos:  # a project function's key given by position: handout.download_button(k)
                out.append(node.args[pos])
    return out


def _called(call: ast.Call, project: set[str]) -> str | None:
    """The name of the project function a call names, ``f(…)`` or ``module.f(…)`` with ``f`` or ``module`` one of
    ``project`` (the module's own functions and what it imported from the project); None for any other call."""
    func = call.func
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in project:
        return func.attr
    return func.id if isinstance(func, ast.Name) and func.id in project else None


@cache
def _key_params() -> dict[str, int]:
    """The app's functions that pass their ``key`` parameter on as an element's ``key=key`` (``chart``,
    ``handout.download_button``): name -> the parameter's position."""
    out = {}
    for path in _files(APP):
        for node in ast.walk(_tree(path)):
            names = [a.arg for a in node.args.args] if isinstance(node, ast.FunctionDef) else []
            passes_on = any(
                isinstance(k, ast.keyword) and k.arg == "key" and isinstance(k.value, ast.Name) and k.value.id == "key"
                for k in ast.walk(node)
            )
            if "key" in names and passes_on:
                out[node.name] = names.index("key")
    return out


def _module_strings(tree: ast.Module) -> dict[str, str]:
    """A module's top-level ``NAME = "text"`` constants."""
    return {
        t.id: node.value.value
        for node in tree.body
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)
        for t in node.targets
        if isinstance(t, ast.Name)
    }


def _spelled_key(key: ast.expr, constants: dict[str, str]) -> str | None:
    """The key's text when it is spelled in this file: a string literal, an f-string that starts with one, or a
    name for one of this module's own string constants. ``None`` for a name read from another module."""
    if isinstance(key, ast.Constant) and isinstance(key.value, str):
        return key.value
    if isinstance(key, ast.JoinedStr) and key.values and isinstance(key.values[0], ast.Constant):
        return ast.unparse(key)
    if isinstance(key, ast.Name) and key.id in constants:
        return f"{key.id} = {constants[key.id]!r}"
    return None


# A page script writes the keys of its feature's owner (its widgets are that feature's): script -> owner package.
PAGE_OWNERS = {
    "app_pages/decode.py": "ui/decode",
    "app_pages/worked.py": "ui/worked.py",
    "app_pages/context.py": "ui/context.py",
    "app_pages/cache.py": "ui/cache_demo.py",
    "app_pages/see_it_move.py": "ui/see_it_move.py",
    "app_pages/latency.py": "ui/latency_figure.py",
    "app_pages/batching.py": "ui/batching.py",
    "app_pages/speculative.py": "ui/speculative.py",
    "app_pages/paged.py": "ui/paged.py",
    "app_pages/serve_class.py": "ui/serve_class",
    "app_pages/cost.py": "ui/cost.py",
    "app_pages/memory.py": "ui/memory_terms.py",
    "app_pages/weights.py": "ui/weights.py",
    "app_pages/speed.py": "ui/speed.py",
    "app_pages/quantize.py": "ui/quant.py",
    "app_pages/quant_model.py": "ui/quant_model.py",
    "app_pages/practice.py": "ui/practice.py",
    "app_pages/summary.py": "ui/summary.py",
}


# Modules directly under ui/ that are one feature with another: the model picker is the model choice's widget.
SAME_FEATURE = {"ui/picker.py": "ui/models.py"}


def _owner_package(module: str) -> str:
    """The package a key's owner module belongs to: ``ui/decode`` for ``ui.decode.keys``, the file itself for a
    module directly under ``ui/`` (``ui/quant.py``)."""
    parts = module.split(".")
    path = "/".join(parts[:2]) if len(parts) > 2 else "/".join(parts) + ".py"
    return SAME_FEATURE.get(path, path)


def _imported_modules(tree: ast.Module) -> dict[str, str]:
    """Local name -> the project module it names (``from ui.decode import keys as decode_keys``)."""
    out = {}
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module and _project(node.module):
            for a in node.names:
                if _is_module(f"{node.module}.{a.name}"):
                    out[a.asname or a.name] = f"{node.module}.{a.name}"
    return out


def _key_owner(key: ast.expr, modules: dict[str, str], here: str) -> tuple[str, str] | None:
    """(owner module, constant) of a key written ``module.CONSTANT`` or a bare constant of this module."""
    if isinstance(key, ast.Attribute) and isinstance(key.value, ast.Name) and key.value.id in modules:
        return modules[key.value.id], key.attr
    if isinstance(key, ast.Name) and key.id.isupper():
        return here, key.id
    return None


def _writes(tree: ast.Module) -> list[ast.expr]:
    """Keys this module writes: ``ss[k] = …``, ``del ss[k]``, ``ss.update({k: …})``, ``ss.pop(k)``,
    ``ss.setdefault(k, …)`` and a widget's ``key=k`` (a widget writes its value under its key)."""
    aliases = _session_aliases(tree)

    def _is_ss(node):
        return (isinstance(node, ast.Attribute) and node.attr == "session_state") or (
            isinstance(node, ast.Name) and node.id in aliases
        )

    out = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.Delete)):
            targets = node.targets if isinstance(node, (ast.Assign, ast.Delete)) else [node.target]
            for t in targets:
                for e in t.elts if isinstance(t, ast.Tuple) else [t]:
                    if isinstance(e, ast.Subscript) and _is_ss(e.value):
                        out.append(e.slice)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and _is_ss(node.func.value):
            if node.func.attr in {"pop", "setdefault"} and node.args:
                out.append(node.args[0])
            elif node.func.attr == "update" and node.args and isinstance(node.args[0], ast.Dict):
                out += [k for k in node.args[0].keys if k is not None]
        elif isinstance(node, ast.Call) and not _names_a_layout(node.func):
            out += [k.value for k in node.keywords if k.arg == "key"]
    return out


def _names_a_layout(func: ast.expr) -> bool:
    """A container's key names an element to find (a style rule, a scroll target), not a value it writes."""
    return isinstance(func, ast.Attribute) and func.attr in {"container", "empty"}


def test_session_keys_are_constants_of_their_owner():
    """Every session-state key and every element's ``key=`` is a module constant of the ui module that owns it: no
    literal key (or f-string starting with one) in the app's code, and none in ``core/`` (core knows no key)."""
    problems = []
    for path in _files(APP):
        tree = _tree(path)
        constants = _module_strings(tree)
        for key in _key_places(tree):
            text = _spelled_key(key, constants)
            if text is None:
                continue
            if _rel(path).startswith("core/"):
                problems.append(f"{_rel(path)}:{key.lineno}: key {text} in core (core knows no session key)")
            elif not (isinstance(key, ast.Name) and key.id in constants):
                problems.append(f"{_rel(path)}:{key.lineno}: key {text} spelled in place (a constant of its owner)")
    _report(problems, "keys spelled outside their owner's constants")


def test_a_key_is_written_only_inside_its_owner_package():
    """A key is written (assigned, deleted, updated, popped, or given to a widget) only inside the package of the
    module that defines it, or by that feature's page script: another feature calls the owner's ``show(settings)``
    or one of its functions instead."""
    problems = []
    for path in _files(APP):
        rel, tree = _rel(path), _tree(path)
        modules, here = _imported_modules(tree), _module_name(path)
        mine = {PAGE_OWNERS.get(rel), _owner_package(here) if rel.startswith("ui/") else None}
        for key in _writes(tree):
            owned = _key_owner(key, modules, here)
            if owned is None or not owned[0].startswith("ui."):
                continue
            if _owner_package(owned[0]) not in mine:
                problems.append(f"{rel}:{key.lineno}: writes {owned[0]}.{owned[1]}")
    _report(problems, "keys written outside their owner")


def test_no_session_key_is_spelled_again():
    """A key's text is spelled once: no two owners' constants hold the same key, and no other string in the app's
    code equals a key (written out again, in a dict, a tuple or a lesson's settings, it would drift)."""
    defined: dict[str, str] = {}
    problems = []
    for path in _files(("ui",)):
        tree = _tree(path)
        used = {k.id for k in _key_places(tree) if isinstance(k, ast.Name)}
        modules = _imported_modules(tree)
        for other in _files(APP):
            for k in _key_places(_tree(other)):
                owned = _key_owner(k, _imported_modules(_tree(other)), _module_name(other))
                if owned and owned[0] == _module_name(path):
                    used.add(owned[1])
        del modules
        for name, text in _module_strings(tree).items():
            if name in used:
                if text in defined:
                    problems.append(f"{_rel(path)}: {text!r} is also a key of {defined[text]}")
                defined[text] = _rel(path)
    assert len(defined) > 150, "the key scan found too few keys to be reading the code"
    problems += [
        f"{_rel(path)}:{node.lineno}: {node.value!r} is a key of {defined[node.value]}"
        for path in _files(APP)
        for node in ast.walk(_tree(path))
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and node.value in defined
        and not (defined[node.value] == _rel(path) and _is_constant_definition(_tree(path), node))
    ]
    _report(problems, "keys spelled again")


def _is_constant_definition(tree: ast.Module, node: ast.Constant) -> bool:
    return any(isinstance(s, ast.Assign) and s.value is node for s in tree.body)


def _defined_names(tree: ast.Module) -> set[str]:
    """The names a module defines itself (functions, classes, assignments, also under a top-level ``if`` or
    ``try``), not the names it imports."""
    out = set()
    for stmt in tree.body:
        for node in [stmt, *ast.walk(stmt)] if isinstance(stmt, (ast.If, ast.Try)) else [stmt]:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                out.add(node.name)
            elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                out.update(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
    return out


def test_names_are_imported_from_where_they_live():
    """``from m import name`` names the module that defines ``name``: no module or package ``__init__`` passes on
    a name it imported (a re-export keeps an old import path alive after a move)."""
    paths = {_module_name(p): p for p in _files((*CHECKED, "tests"))}
    problems = []
    for path in paths.values():
        for node in ast.walk(_tree(path)):
            if not (isinstance(node, ast.ImportFrom) and node.level == 0 and node.module in paths):
                continue
            defined = _defined_names(_tree(paths[node.module]))
            for a in node.names:
                if f"{node.module}.{a.name}" not in paths and a.name not in defined:
                    problems.append(f"{_rel(path)}:{node.lineno}: {a.name} is not defined in {node.module}")
    _report(problems, "names imported through a module that does not define them")


def test_package_inits_use_what_they_import():
    """A package's ``__init__.py`` imports only what its own code uses: no list of names for others to import from
    it (``__all__`` included)."""
    problems = []
    for p in _files(CHECKED):
        if p.name != "__init__.py":
            continue
        tree = _tree(p)
        used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        used |= {n.value.id for n in ast.walk(tree) if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)}
        for node in tree.body:
            if isinstance(node, (ast.Import, ast.ImportFrom)) and getattr(node, "module", None) != "__future__":
                for a in node.names:
                    name = (a.asname or a.name).split(".")[0]
                    if name not in used:
                        problems.append(f"{_rel(p)}:{node.lineno}: imports {name}, which it does not use")
            if isinstance(node, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
            ):
                problems.append(f"{_rel(p)}:{node.lineno}: __all__")
    _report(problems, "package __init__ files passing on names")
