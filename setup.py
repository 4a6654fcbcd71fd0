"""Packaging beyond what pyproject.toml can say: the top-level `web/`, `models/` and
`calibration/` folders are mapped into the package `companion.assets` (see
companion/assets/__init__.py), as data only. Everything else is in pyproject.toml."""

import warnings

from setuptools import find_packages, setup
from setuptools.command.build_py import build_py

# Data folders inside the package (companion/rules/data, companion/live/data/..., the mapped
# web/static and templates) ship as package data, not as packages: setuptools warns about
# each of them at every install, about 350 lines a new user's first `scripts/start` showed
warnings.filterwarnings("ignore", message=r"Package '.*' is absent from the `packages`")
# an editable install (scripts/setup) warns that a folder named like the package could be
# imported instead: here the package is that folder, so the first start prints only what a
# person needs (issue 26 item 12)
warnings.filterwarnings("ignore", message=r"Editable installation")

# package -> the repository folder it is built from
ASSET_PACKAGES = {
    "companion.assets.web": "web",
    "companion.assets.models": "models",
    "companion.assets.calibration": "calibration",
}


class BuildPyWithAssets(build_py):
    """build_py that takes only data from the asset folders: models/train.py and the
    training recipe are tools of this repository, not part of the installed runtime."""

    def find_package_modules(self, package: str, package_dir: str) -> list[tuple[str, str, str]]:
        if package in ASSET_PACKAGES:
            return []
        modules: list[tuple[str, str, str]] = super().find_package_modules(package, package_dir)
        return modules

    def check_package(self, package: str, package_dir: str) -> str | None:
        if package in ASSET_PACKAGES:  # a data folder: it has no __init__.py, by design
            return None
        checked: str | None = super().check_package(package, package_dir)
        return checked


setup(
    packages=[*find_packages(include=["companion", "companion.*"]), *ASSET_PACKAGES],
    package_dir=ASSET_PACKAGES,
    cmdclass={"build_py": BuildPyWithAssets},
)
