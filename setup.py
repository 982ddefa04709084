"""setuptools' build, for what pyproject.toml cannot say: one installed package, ``inference_explainer``, holding
the checkout's tree as it is (the design card's top level: ``app.py``, ``main.py``, ``app_pages/``, ``core/``,
``ui/``, ``serve/`` and the data they open: ``assets/``, ``frontend/``, ``.streamlit/config.toml``, the nginx
template). Inside the package the app's modules import one another by their own names (``core``, ``ui``,
``serve``): ``streamlit run …/inference_explainer/main.py`` puts that folder on ``sys.path``, and the package's
``main`` (the ``inference-explainer`` command) does the same before it imports the command line. So no other
distribution's ``core`` or ``ui`` is ever touched, and nothing is written into the install at run time.
"""

from pathlib import Path

from setuptools import find_packages, setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).parent
PACKAGE = "inference_explainer"
CODE = (*find_packages(include=["core", "core.*", "ui", "ui.*", "serve", "serve.*"]), "app_pages")
# Beside the code in the package, each a folder (every file in it) or one file.
DATA = ("app.py", "main.py", "assets", "frontend", ".streamlit/config.toml", "deploy/nginx.conf.template")

# The package's own face, written at build time: the command's entry point (pyproject.toml's [project.scripts]).
INIT = '''"""Inference, efficiently: an interactive explainer of LLM inference, installed as one package.

Its modules import one another by their own names (``core``, ``ui``, ``serve``), as in a checkout:
``streamlit run <this folder>/main.py`` puts this folder on ``sys.path`` for the app, and ``main`` (the
``inference-explainer`` command) puts it there before it reads its command line.
"""

import sys
from pathlib import Path

HOME = Path(__file__).resolve().parent


def main() -> int:
    """The ``inference-explainer`` command (``serve.cli``)."""
    if str(HOME) not in sys.path:
        sys.path.insert(0, str(HOME))
    from serve.cli import main as command_line  # after the path: the package's own ``serve``

    return command_line()
'''
MAIN = """from inference_explainer import main

raise SystemExit(main())
"""


def data_files() -> list[str]:
    """Every file of ``DATA``, relative to the checkout."""
    files = []
    for rel in DATA:
        path = HERE / rel
        found = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
        files += [p.relative_to(HERE).as_posix() for p in found if "__pycache__" not in p.parts]
    return files


class BuildPackage(build_py):
    """The code's build under ``inference_explainer/``, then ``DATA`` copied beside it and the package's
    ``__init__.py`` and ``__main__.py`` (``python -m inference_explainer``) written."""

    def run(self) -> None:
        super().run()
        root = Path(self.build_lib) / PACKAGE
        for rel in data_files():
            target = root / rel
            self.mkpath(str(target.parent))
            self.copy_file(str(HERE / rel), str(target))
        (root / "__init__.py").write_text(INIT, encoding="utf-8")
        (root / "__main__.py").write_text(MAIN, encoding="utf-8")

    def get_outputs(self, include_bytecode: bool = True) -> list[str]:
        root = Path(self.build_lib) / PACKAGE
        made = [root / rel for rel in (*data_files(), "__init__.py", "__main__.py")]
        return [*super().get_outputs(include_bytecode), *map(str, made)]


setup(
    packages=[f"{PACKAGE}.{name}" for name in CODE],
    package_dir={f"{PACKAGE}.{name}": name.replace(".", "/") for name in CODE},
    cmdclass={"build_py": BuildPackage},
)
