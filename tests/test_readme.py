"""README's two set-up commands are the ones the project actually runs."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _readme_commands() -> list[str]:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").splitlines()
    block = lines.index("```bash")
    return [line for line in lines[block + 1 : lines.index("```", block + 1)] if line and not line.startswith("#")]


def test_readme_starts_with_two_commands():
    """The first code block holds exactly two commands: run the app, run the tests."""
    app_cmd, test_cmd = _readme_commands()
    assert "streamlit run app.py" in app_cmd and "requirements.txt" in app_cmd
    assert "pytest" in test_cmd and "requirements-test.txt" in test_cmd


def test_ci_runs_the_readme_test_command_verbatim():
    """.ci/run's last command is the README's test command, character for character."""
    test_cmd = _readme_commands()[1]
    ci_lines = [x for x in (ROOT / ".ci/run").read_text(encoding="utf-8").splitlines() if x.strip()]
    assert ci_lines[-1] == test_cmd


def test_requirements_pin_exact_versions():
    """Runtime requirements are pinned with ==, torch to the CPU build 2.13.0."""
    reqs = [x for x in (ROOT / "requirements.txt").read_text().splitlines() if x and not x.startswith("#")]
    assert all("==" in r for r in reqs) and "torch==2.13.0" in reqs
