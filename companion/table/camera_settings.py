"""The camera's part of the server's configuration (`Settings.camera`,
companion/web/settings.py): where rolls come from besides manual entry. A validated pydantic
model like the rest, built by the CLI (or a test); the camera runtime reads it
(companion.table.camera_runtime)."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from companion.assets import calibration_dir


class CameraSettings(BaseModel):
    """Where rolls come from besides manual entry. At most one source; none set means the
    camera issue's demo source (manual dice entry is always available)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    index: int | None = Field(
        default=None, ge=0, le=63, description="webcam index (0 = first camera), or none"
    )
    video: Path | None = Field(default=None, description="a video file to read dice from")
    images: Path | None = Field(default=None, description="a folder of still images")
    hold: float | None = Field(
        default=None,
        gt=0,
        le=60,
        description="with images: show each image this many seconds, a still photo of one "
        "throw at rest (without it the folder is a clip, one image per frame)",
    )
    disabled: bool = Field(default=False, description="manual dice entry only, no camera")
    calibration_dir: Path = Field(
        default_factory=calibration_dir,
        description="where the calibration page saves and lists calibration files",
    )
    calibration: Path | None = Field(
        default=None,
        description="a table calibration file (calibration/*.json: dice colours under this "
        "light, play area, die size) to use from the start",
    )

    @model_validator(mode="after")
    def _one_source(self) -> CameraSettings:
        chosen = [
            name
            for name, value in (
                ("index", self.index),
                ("video", self.video),
                ("images", self.images),
            )
            if value is not None
        ]
        if self.disabled:
            chosen.append("disabled")
        if len(chosen) > 1:
            raise ValueError(f"choose one camera source, not {' and '.join(chosen)}")
        if self.hold is not None and self.images is None:
            raise ValueError("--hold shows each image of a folder: give --images DIR with it")
        return self

    @property
    def source(self) -> Literal["demo", "webcam", "video", "images", "none"]:
        """The kind of source the camera issue should start."""
        if self.disabled:
            return "none"
        if self.index is not None:
            return "webcam"
        if self.video is not None:
            return "video"
        if self.images is not None:
            return "images"
        return "demo"
