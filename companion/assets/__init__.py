"""The files the runtime reads that are not Python: the web templates and static files (the
repository's top-level `web/`), the two ONNX models with their manifests (`models/`) and
the standard dice sets' default calibrations (`calibration/*-default.json`).

The repository is laid out around those top-level folders, so they stay where they are:
`setup.py` maps them into this package (`companion.assets.web`, `.models`, `.calibration`),
and a wheel carries them as `companion/assets/web/...` and so on.
Code finds them here through importlib.resources, never by walking up from a module's
file: in an installed wheel that is the packaged copy; in a checkout (an editable install,
or the tests) the package holds no copy and the top-level folder itself is used.
"""

from __future__ import annotations

from importlib.resources import files
from pathlib import Path

ASSET_FOLDERS = ("web", "models", "calibration")
_CHECKOUT = Path(__file__).resolve().parents[2]


def checkout() -> Path | None:
    """The repository this package runs from (a checkout, an editable install), or None
    for an installed wheel."""
    return _CHECKOUT if (_CHECKOUT / "pyproject.toml").is_file() else None


class AssetsMissing(FileNotFoundError):
    """Neither the package nor a checkout holds the asset folder (a broken install)."""


def asset_dir(name: str) -> Path:
    """The folder of asset `name` (see ASSET_FOLDERS) as a real path (uvicorn's static
    files, Jinja's loader and onnxruntime need one; a wheel is installed unpacked)."""
    if name not in ASSET_FOLDERS:
        raise ValueError(f"no asset folder {name!r}; there are {', '.join(ASSET_FOLDERS)}")
    packaged = files(__name__) / name
    if packaged.is_dir():
        return Path(str(packaged))
    root = checkout()
    if root is not None and (root / name).is_dir():
        return root / name
    raise AssetsMissing(
        f"the companion's {name}/ folder is missing: neither {packaged} (an installed "
        f"package) nor {_CHECKOUT / name} (a checkout) exists; reinstall the package"
    )


def web_dir() -> Path:
    """Templates (`templates/`) and static files (`static/`) of the web pages."""
    return asset_dir("web")


def models_dir() -> Path:
    """The ONNX models and their manifests."""
    return asset_dir("models")


def calibration_dir() -> Path:
    """Where calibrations are saved and listed: the checkout's `calibration/`, or for an
    installed package `./calibration` (beside `./companion-data`; never inside the
    installed package)."""
    root = checkout()
    return root / "calibration" if root is not None else Path("calibration")
