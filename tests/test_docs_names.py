"""The docs name what exists: every dotted name of the project (``core.decode.share.url_limits``) and every repo
path (``core/decode/share.py``) written in README.md, docs/*.md and the modules' docstrings resolves.

Checked like the imports in tests/test_layers.py: the source is parsed with ``ast``, nothing is imported. A
failure names every offending file and line.

The matching rules (each chosen so that prose which is not a claim about this repository is left alone):

Dotted names (``NAME``)
  - start with one of the project's packages, ``core.``, ``ui.``, ``serve.`` or ``bench.``, followed by
    identifiers joined by dots: ``ui.classroom.follow``, ``core.viz.table.figure_table``;
  - not preceded by a letter, digit, ``_``, ``.``, ``/`` or ``-``: ``st.ui.x``, ``my_core.x``,
    ``https://x.org/core.y`` or ``--core.x`` are other things' attributes or text;
  - not ending in a file suffix (``FILE_SUFFIXES``): ``core.py`` or ``ui.py`` in prose is a file's name;
  - a name ends at the first character that cannot continue an identifier: ``ui.refuse(err)`` is
    ``ui.refuse``; a sentence's last dot is not part of the name.
  A name resolves when its longest leading part is a module (``x/y.py``) or a package (a folder of .py files),
  and what follows names, in that module's own source, a top-level def, class or assignment (also under a
  top-level ``if``, ``try``, ``with`` or ``for``), and after a class one more part: a def, class or
  assignment in its body, or an attribute its methods set on ``self``. A name a module only imports does not
  count: a doc names the module where a thing lives (as ``test_names_are_imported_from_where_they_live``).

Repo paths (``PATH``)
  - a slash-separated path whose first part is a folder at the repo's root (``core/``, ``docs/``, ``tests/``,
    ``assets/``, ``.ci/``, …), anywhere in the text (backticks, prose, code blocks), not preceded by a
    letter, digit, ``_``, ``.``, ``/``, ``~`` or ``-`` (so not inside a URL, ``../x``, ``/tmp/x`` or
    ``~/x``), resolved from the repo's root;
  - a trailing ``#anchor``, ``…`` or ``...`` (an elision: ``assets/…``) is dropped and the rest checked;
  - placeholders are skipped: a path holding ``<``, ``{`` or ``*`` (``tests/core/<package>/``, globs);
  - a path under a folder .gitignore names (``.ci/node/``, ``test-artifacts/``) is made by a run, not kept
    in the repo: skipped.
  Markdown links ``[text](target)`` in README.md and docs/ resolve from the file's own folder; ``http(s)``,
  ``mailto:`` and in-page ``#anchor`` targets are skipped.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DOCS = ("README.md", "docs")  # README.md and every docs/*.md
DOCSTRINGS = ("app.py", "main.py", "app_pages", "ui", "core", "serve", "bench")  # each .py file's module docstring
PACKAGES = ("core", "ui", "serve", "bench")  # a dotted name starting with one of these is a claim about the repo

# A file's suffix: ``core.py``, ``ui.md`` in prose name a file, not a module's attribute.
FILE_SUFFIXES = {
    "py", "md", "txt", "toml", "json", "yaml", "yml", "html", "js", "css", "png", "svg", "csv", "log", "sh",
    "gguf", "bin", "pt", "safetensors", "cfg", "ini",
}  # fmt: skip

NAME = re.compile(r"(?<![\w./-])(?:" + "|".join(PACKAGES) + r")(?:\.[A-Za-z_]\w*)+")
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")  # [text](target) or ![alt](target)


@dataclass(frozen=True)
class Line:
    where: str  # "file:line", relative to ROOT
    text: str
    folder: Path  # a markdown link's target resolves from here
    markdown: bool  # README.md or docs/*.md (links are read there only)


def _rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def _py_files(tops) -> list[Path]:
    out = []
    for top in tops:
        p = ROOT / top
        out += [p] if p.is_file() else sorted(p.rglob("*.py"))
    return out


def _doc_files() -> list[Path]:
    out = []
    for top in DOCS:
        p = ROOT / top
        out += [p] if p.is_file() else sorted(p.glob("*.md"))
    return out


def _docstring_lines(path: Path) -> list[Line]:
    """The source lines of a module's docstring (its first statement, a string), with their line numbers."""
    source = path.read_text(encoding="utf-8")
    body = ast.parse(source, filename=str(path)).body
    if not (body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)):
        return []
    node = body[0].value
    if not isinstance(node.value, str):
        return []
    lines = source.splitlines()[node.lineno - 1 : node.end_lineno]
    return [Line(f"{_rel(path)}:{node.lineno + i}", text, path.parent, False) for i, text in enumerate(lines)]


@cache
def _lines() -> tuple[Line, ...]:
    """Every line the rules read: README.md and docs/*.md whole, and each module's docstring."""
    out = []
    for path in _doc_files():
        lines = path.read_text(encoding="utf-8").splitlines()
        out += [Line(f"{_rel(path)}:{i}", text, path.parent, True) for i, text in enumerate(lines, 1)]
    for path in _py_files(DOCSTRINGS):
        out += _docstring_lines(path)
    return tuple(out)


# --- dotted names -------------------------------------------------------------------------------------------


@cache
def _modules() -> dict[str, Path]:
    """Every module and package under PACKAGES by dotted name: a .py file, or a folder holding .py files (its
    ``__init__.py`` if it has one, else the folder itself: a namespace package with only submodules)."""
    out: dict[str, Path] = {}
    for path in _py_files(PACKAGES):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
        for i in range(1, len(parts)):
            out.setdefault(".".join(parts[:i]), ROOT.joinpath(*parts[:i]))
    return out


def _targets(node: ast.AST) -> set[str]:
    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
    return {n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)}


def _defined(body: list[ast.stmt]) -> dict[str, ast.AST]:
    """The names a block of statements defines itself: defs, classes and assignments, also those nested in
    ``if``/``try``/``with``/``for`` blocks, never inside a def's or class's body; imports do not count."""
    out: dict[str, ast.AST] = {}
    for stmt in body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out[stmt.name] = stmt
        elif isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            out.update(dict.fromkeys(_targets(stmt), stmt))
        elif isinstance(stmt, (ast.If, ast.Try, ast.With, ast.For)):
            for block in ("body", "orelse", "finalbody", "handlers"):
                for child in getattr(stmt, block, []):
                    out.update(_defined(child.body if isinstance(child, ast.ExceptHandler) else [child]))
    return out


def _class_members(cls: ast.ClassDef) -> set[str]:
    """A class's own defs, classes and assignments (dataclass fields, enum members), and every ``self.x`` its
    methods assign."""
    out = set(_defined(cls.body))
    for node in ast.walk(cls):
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            for t in node.targets if isinstance(node, ast.Assign) else [node.target]:
                if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id == "self":
                    out.add(t.attr)
    return out


@cache
def _module_names(path: Path) -> dict[str, ast.AST]:
    if path.is_dir():
        return {}
    return _defined(ast.parse(path.read_text(encoding="utf-8"), filename=str(path)).body)


def name_problem(name: str) -> str | None:
    """Why a dotted name resolves to nothing, or None when it names a module, or a definition in one."""
    parts = name.split(".")
    modules = _modules()
    n = max(i for i in range(1, len(parts) + 1) if ".".join(parts[:i]) in modules)
    module, rest = ".".join(parts[:n]), parts[n:]
    if not rest:
        return None
    found = _module_names(modules[module]).get(rest[0])
    if found is None:
        kind = "package" if modules[module].is_dir() or modules[module].name == "__init__.py" else "module"
        return f"{kind} {module} has no {'submodule or ' if kind == 'package' else ''}definition {rest[0]!r}"
    if len(rest) == 1:
        return None
    if not isinstance(found, ast.ClassDef):
        return f"{module}.{rest[0]} is not a class: nothing to look up {rest[1]!r} in"
    if rest[1] not in _class_members(found):
        return f"class {module}.{rest[0]} has no member {rest[1]!r}"
    if len(rest) > 2:
        return f"{module}.{rest[0]}.{rest[1]}: nothing is looked up past a class's member"
    return None


def names_in(text: str) -> list[str]:
    """The dotted names of NAME in a line, file names (``core.py``) left out."""
    return [m for m in NAME.findall(text) if m.rsplit(".", 1)[1] not in FILE_SUFFIXES]


# --- repo paths ---------------------------------------------------------------------------------------------


@cache
def _ignored() -> tuple[str, ...]:
    """The folders .gitignore names by a plain path (``.ci/node/``, ``test-artifacts/``): what a run makes."""
    lines = (ROOT / ".gitignore").read_text(encoding="utf-8").splitlines()
    return tuple(x.strip().rstrip("/") for x in lines if x.strip() and not x.startswith("#") and "*" not in x)


@cache
def _path_pattern() -> re.Pattern[str]:
    """A path starting at one of the repo root's folders (not .git, not an ignored one)."""
    folders = sorted(p.name for p in ROOT.iterdir() if p.is_dir() and p.name != ".git" and p.name not in _ignored())
    return re.compile(r"(?<![\w./~-])(?:" + "|".join(map(re.escape, folders)) + r")/[\w./\-@+*<>{}…#]*")


def paths_in(text: str) -> list[str]:
    """The repo paths of PATH in a line, anchors and trailing elisions dropped, placeholders left out."""
    out = []
    for raw in _path_pattern().findall(text):
        if any(c in raw for c in "<{*"):
            continue
        path = raw.split("#", 1)[0].rstrip(".").removesuffix("…")
        if any(path == d or path.startswith(d + "/") for d in _ignored()):
            continue
        out.append(path)
    return out


def links_in(text: str) -> list[str]:
    """A markdown line's link targets that are paths in this repository (not URLs, not in-page anchors)."""
    return [t.split("#", 1)[0] for t in LINK.findall(text) if not t.startswith(("#", "http://", "https://", "mailto:"))]


# --- the checks ---------------------------------------------------------------------------------------------


def _report(problems: list[str], rule: str) -> None:
    assert not problems, f"{rule}: {len(problems)}\n" + "\n".join(problems)


def test_dotted_names_resolve():
    """Every ``core.``/``ui.``/``serve.``/``bench.`` name in README.md, docs/*.md and the module docstrings names
    a module, package, submodule, or a definition (or a class's member) in the module named."""
    problems = [
        f"{line.where}: {name} ({why})"
        for line in _lines()
        for name in names_in(line.text)
        if (why := name_problem(name)) is not None
    ]
    _report(problems, "dotted names that resolve to nothing")


def test_repo_paths_exist():
    """Every repo path (``core/decode/share.py``, ``tests/browser/``) in README.md, docs/*.md and the module
    docstrings exists, from the repo's root; every relative markdown link, from its file's folder."""
    problems = [
        f"{line.where}: {path}" for line in _lines() for path in paths_in(line.text) if not (ROOT / path).exists()
    ]
    problems += [
        f"{line.where}: link {target}"
        for line in _lines()
        if line.markdown
        for target in links_in(line.text)
        if not (line.folder / target).exists()
    ]
    _report(problems, "repo paths that do not exist")


def test_the_checker_flags_what_does_not_exist():
    """The rules find a made-up name and path (so the checks above can fail), and leave alone what is not a
    claim about the repo: file names, other objects' attributes, URLs, placeholders."""
    sample = (
        "see `core.decode.nonexistent_thing` and core.decode.session.no_such_member, not core.py, "
        "st.session_state.core, https://x.org/core.y or version 1.2.3; `docs/no-such-page.md`, "
        "`tests/core/<package>/`, `core/*.py`, https://github.com/ggml-org/ggml/blob/master/docs/gguf.md"
    )
    names = names_in(sample)
    assert names == ["core.decode.nonexistent_thing", "core.decode.session.no_such_member"]
    assert name_problem("core.decode.nonexistent_thing") is not None
    assert name_problem("core.decode.session.no_such_member") is not None
    assert paths_in(sample) == ["docs/no-such-page.md"]
    assert not (ROOT / "docs/no-such-page.md").exists()
    # and what exists resolves: a package, a module, a definition, a submodule, a path
    for real in ("core", "core.decode", "core.decode.session", "ui.classroom.follow", "serve.cli"):
        assert name_problem(real) is None, real
    assert (ROOT / paths_in("`tests/browser/`")[0]).exists()
