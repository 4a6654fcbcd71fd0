"""The two small networks: a CenterNet-style dice finder and a pip classifier."""

from __future__ import annotations

from typing import TYPE_CHECKING

import torch
from torch import nn
from torch.nn import functional as F

from .manifests import FINDER_HEADS, FINDER_STRIDE

if TYPE_CHECKING:
    from .lite_classifier import LiteClassifierNet

__all__ = [
    "FINDER_HEADS",
    "FINDER_STRIDE",
    "ClassifierExport",
    "ClassifierNet",
    "FinderExport",
    "FinderNet",
    "WIDE_CLASSIFIER_WIDTHS",
    "WIDE_FINDER_WIDTHS",
]


# issue 22 item 4's "wider net from scratch": the small nets with more channels, trained
# from random weights, against the nets built on ImageNet weights (lite0). The finder gets
# only 1.5 times the channels (2.3 times the parameters) because its read of a frame must
# stay under the 20 ms target (float 23-25 ms a 1280x720 frame, int8 14 ms: stage 38);
# the classifier twice (stage 39: 21-22 ms a frame with the shipped finder, the unsure
# dice's eight views dearer)
WIDE_FINDER_WIDTHS = (24, 40, 48, 72, 96)
WIDE_CLASSIFIER_WIDTHS = (32, 48, 96, 192)


def conv_bn(cin: int, cout: int, stride: int = 1, groups: int = 1, k: int = 3) -> nn.Sequential:
    return nn.Sequential(
        nn.Conv2d(cin, cout, k, stride, k // 2, groups=groups, bias=False),
        nn.BatchNorm2d(cout),
        nn.ReLU(inplace=True),
    )


def finder_head(channels: int) -> nn.Sequential:
    """The finder's heads at stride 4 (``FINDER_HEADS``), shared by both finder nets."""
    out = nn.Conv2d(channels, len(FINDER_HEADS), 1)
    assert out.bias is not None  # a Conv2d has a bias unless told bias=False
    nn.init.constant_(out.bias, 0.0)
    with torch.no_grad():
        out.bias[0] = -4.0  # start with "no die anywhere" (CenterNet prior)
    return nn.Sequential(conv_bn(channels, channels, k=1), out)


class FinderNet(nn.Module):
    """Fully convolutional; any input size that is a multiple of 32; output at stride 4.
    Plain 3x3 convolutions (not depthwise): they train several times faster on a CPU
    and cost about the same at inference for these few channels."""

    def __init__(self, widths: tuple[int, int, int, int, int] = (16, 24, 32, 48, 64)) -> None:
        super().__init__()
        c2, c4, c8, c16, c32 = widths
        self.stem = conv_bn(3, c2, 2)  # /2
        self.s4 = nn.Sequential(conv_bn(c2, c4, 2), conv_bn(c4, c4))  # /4
        self.s8 = nn.Sequential(conv_bn(c4, c8, 2), conv_bn(c8, c8))  # /8
        self.s16 = nn.Sequential(conv_bn(c8, c16, 2), conv_bn(c16, c16))  # /16
        self.s32 = nn.Sequential(conv_bn(c16, c32, 2), conv_bn(c32, c32))  # /32
        self.lat16 = conv_bn(c32, c16, k=1)
        self.fuse16 = conv_bn(c16, c8)
        self.fuse8 = conv_bn(c8, c4)
        self.fuse4 = conv_bn(c4, c4)
        self.head = finder_head(c4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x4 = self.s4(self.stem(x))
        x8 = self.s8(x4)
        x16 = self.s16(x8)
        x32 = self.s32(x16)
        y = self.fuse16(x16 + F.interpolate(self.lat16(x32), scale_factor=2.0, mode="nearest"))
        y = self.fuse8(x8 + F.interpolate(y, scale_factor=2.0, mode="nearest"))
        y = self.fuse4(x4 + F.interpolate(y, scale_factor=2.0, mode="nearest"))
        return self.head(y)


class FinderExport(nn.Module):
    """The exported graph of a finder net (FinderNet, LiteFinderNet): sigmoid on the heat
    channel, raw values elsewhere."""

    def __init__(self, net: nn.Module) -> None:
        super().__init__()
        self.net = net

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        out = self.net(x)
        return torch.cat([torch.sigmoid(out[:, :1]), out[:, 1:]], dim=1)


class ClassifierNet(nn.Module):
    """A small CNN for 48x48 crops -> 7 logits ("1".."6", "unreadable"). The first layer
    keeps full resolution: pips of a small die are only a few pixels wide."""

    def __init__(
        self, classes: int = 7, widths: tuple[int, int, int, int] = (16, 24, 48, 96)
    ) -> None:
        super().__init__()
        c1, c2, c3, c4 = widths
        self.features = nn.Sequential(
            conv_bn(3, c1),  # 48
            conv_bn(c1, c2, 2),  # 24
            conv_bn(c2, c2),
            conv_bn(c2, c3, 2),  # 12
            conv_bn(c3, c3),
            conv_bn(c3, c4, 2),  # 6
            conv_bn(c4, c4),
        )
        self.dropout = nn.Dropout(0.2)
        self.fc = nn.Linear(c4, classes)

    def embed(self, x: torch.Tensor) -> torch.Tensor:
        """The pooled features before the final linear layer (the exported ``embedding``)."""
        return F.adaptive_avg_pool2d(self.features(x), 1).flatten(1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(self.dropout(self.embed(x)))


class ClassifierExport(nn.Module):
    """The exported graph: softmax probabilities and the embedding they are made from."""

    def __init__(self, net: ClassifierNet | LiteClassifierNet) -> None:
        super().__init__()
        self.net = net

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        embedding = self.net.embed(x)
        return torch.softmax(self.net.fc(embedding), dim=1), embedding
