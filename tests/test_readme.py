"""README: its two set-up commands are the ones the project actually runs, it stays short, and every
relative link in it and in docs/ resolves."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _readme_commands() -> list[str]:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    block = lines.index("```bash")
    return [line for line in lines[block + 1 : lines.index("```", block + 1)] if line and not line.startswith("#")]


def test_readme_starts_with_two_commands():
    """The first code block holds exactly two commands: run the app, run the tests."""
    app_cmd, test_cmd = _readme_commands()
    assert "streamlit run main.py" in app_cmd and "requirements.txt" in app_cmd
    assert "pytest" in test_cmd and "requirements-test.txt" in test_cmd


def test_ci_runs_the_readme_test_command_verbatim():
    """.ci/run's last command is the README's test command, character for character."""
    test_cmd = _readme_commands()[1]
    ci_lines = [x for x in (ROOT / ".ci/run").read_text(encoding="utf-8").splitlines() if x.strip()]
    assert ci_lines[-1] == test_cmd


def test_requirements_pin_exact_versions():
    """Runtime requirements are pinned with ==, torch to 2.13.0 (which the CPU build satisfies)."""
    reqs = [x for x in (ROOT / "requirements.txt").read_text().splitlines() if x and not x.lstrip().startswith("#")]
    assert all("==" in r for r in reqs) and "torch==2.13.0" in reqs


# A markdown link or image: [text](target) or ![alt](target); the target up to a space or ")".
_LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)")


def _docs() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _relative_links(path: Path) -> list[str]:
    """Every link target in a markdown file that is a path in this repository (not a URL, not an
    in-page anchor), outside fenced code blocks."""
    text, in_code, targets = path.read_text(encoding="utf-8"), False, []
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            in_code = not in_code
            continue
        if in_code:
            continue
        for target in _LINK.findall(line):
            if target.startswith(("#", "http://", "https://", "mailto:")):
                continue
            targets.append(target.split("#", 1)[0])
    return targets


def test_relative_links_resolve():
    """Every relative link and image in README.md and docs/*.md names a file that exists."""
    missing = [
        f"{path.relative_to(ROOT)}: {target}"
        for path in _docs()
        for target in _relative_links(path)
        if not (path.parent / target).resolve().exists()
    ]
    assert missing == []


def test_the_readme_links_its_screenshots_and_docs():
    """The README shows at least two screenshots and links every guide in docs/."""
    targets = _relative_links(ROOT / "README.md")
    assert sum(t.startswith("docs/img/") and t.endswith(".png") for t in targets) >= 2
    assert {f"docs/{p.name}" for p in (ROOT / "docs").glob("*.md")} <= set(targets)


def test_readme_is_short():
    """The README is a front page (≤ 200 lines); the details live in docs/."""
    assert len((ROOT / "README.md").read_text(encoding="utf-8").splitlines()) <= 200
