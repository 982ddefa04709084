"""setuptools' build, for what pyproject.toml cannot say: the packages (``app_pages`` has no
``__init__.py``) and the data the app opens beside them at run time (``core.model.shipped.ROOT``,
``serve.nginx.ROOT``: the checkout, or site-packages once installed). ``.streamlit`` is no package
name, so package-data cannot ship it; the build copies these trees into the wheel's root instead.
``static/`` is made at run time or by ``python -m ui.static`` (deploy/Dockerfile), never shipped.
"""

from pathlib import Path

from setuptools import find_packages, setup
from setuptools.command.build_py import build_py

HERE = Path(__file__).parent
# Beside the packages in the wheel, each a folder (every file in it) or one file.
DATA = ("assets", "frontend", ".streamlit/config.toml", "deploy/nginx.conf.template")


def data_files() -> list[str]:
    """Every file of ``DATA``, relative to the checkout."""
    files = []
    for rel in DATA:
        path = HERE / rel
        found = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
        files += [p.relative_to(HERE).as_posix() for p in found if "__pycache__" not in p.parts]
    return files


class BuildWithData(build_py):
    """The ordinary build, then ``DATA`` copied into the build folder's root."""

    def run(self) -> None:
        super().run()
        for rel in data_files():
            target = Path(self.build_lib) / rel
            self.mkpath(str(target.parent))
            self.copy_file(str(HERE / rel), str(target))

    def get_outputs(self, include_bytecode: bool = True) -> list[str]:
        return [*super().get_outputs(include_bytecode), *(str(Path(self.build_lib) / rel) for rel in data_files())]


setup(
    packages=[*find_packages(include=["core", "core.*", "ui", "ui.*", "serve", "serve.*"]), "app_pages"],
    cmdclass={"build_py": BuildWithData},
)
