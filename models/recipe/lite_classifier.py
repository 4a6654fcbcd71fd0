"""A pip classifier on a pretrained backbone (issue 22 item 4, "the same question for the
classifier"): EfficientNet-Lite0's stem and first eight blocks (ImageNet weights, the same
cut and the same tensors as the lite0 finder, models/recipe/lite_finder.py), pooled, with
the classifier's dropout and linear layer. It keeps the classifier's contract (a 48 x 48
RGB crop in; ``probabilities`` over the seven labels and the pooled ``embedding`` out),
so the app, the confidence map and a setup's value head read it unchanged; its embedding
is 80 wide where the small net's is 96 (the manifest says which).

At 48 px the stem's stride 2 leaves a small die's pips two or three pixels wide at 24 x
24, where the small net keeps full resolution in its first layer: whether ImageNet
features make up for that on dice the training never showed is what a run measures."""

from __future__ import annotations

import torch
from torch import nn
from torch.nn import functional as F

from .lite_finder import LITE0_STAGES, STEM, InvertedResidual, conv_bn_relu6

EMBEDDING_WIDTH = LITE0_STAGES[-1][-1]  # 80: the stride-16 stage's channels


class LiteClassifierNet(nn.Module):
    """48 x 48 crops (any multiple of 16) -> 7 logits; ``embed`` gives the pooled 80."""

    def __init__(self, classes: int = 7) -> None:
        super().__init__()
        self.stem = conv_bn_relu6(3, STEM, 3, 2)
        blocks: list[nn.Module] = []
        cin = STEM
        for repeats, k, stride, expand, cout in LITE0_STAGES:
            for r in range(repeats):
                blocks.append(InvertedResidual(cin, cout, k, stride if r == 0 else 1, expand))
                cin = cout
        self.blocks = nn.Sequential(*blocks)
        self.dropout = nn.Dropout(0.2)
        self.fc = nn.Linear(cin, classes)

    def embed(self, x: torch.Tensor) -> torch.Tensor:
        """The pooled features before the final linear layer (the exported ``embedding``)."""
        return F.adaptive_avg_pool2d(self.blocks(self.stem(x)), 1).flatten(1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(self.dropout(self.embed(x)))

    def backbone_tensors(self) -> list[tuple[str, torch.Tensor]]:
        """The stem's and blocks' tensors (weights and BatchNorm buffers) in order, as
        `lite_finder.load_lite0_backbone` maps them."""
        state = self.state_dict()
        return [(k, v) for k, v in state.items() if k.startswith(("stem.", "blocks."))]
