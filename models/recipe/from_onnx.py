"""Warm-start a torch net from its own exported ONNX file, to continue training a shipped
model. The exporter folds each BatchNorm into the convolution before it, so every ONNX
Conv holds (weight, bias); they are loaded into the torch Conv2d modules in order, with
each BatchNorm set to "add the bias" (mean 0, var 1 - eps, weight 1) and kept frozen. An
int8 copy's weights are read back through its DequantizeLinear nodes, so a shipped int8
model continues (a setup's fine-tune, models/recipe/adapt_deep.py) from the weights it
reads with."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import torch
from onnx import numpy_helper
from torch import nn


def load_folded_onnx(net: nn.Module, onnx_path: Path) -> None:
    """Copy the folded Conv (and Gemm = Linear) weights of ``onnx_path`` into ``net``
    (same architecture)."""
    graph = onnx.load(str(onnx_path)).graph
    weights = constant_values(graph)
    modules = list(net.modules())
    with torch.no_grad():
        load_convs(modules, [n for n in graph.node if n.op_type == "Conv"], weights, onnx_path)
        # the classifier's final Linear is exported as Gemm (weight stored out x in)
        load_linears(modules, [n for n in graph.node if n.op_type == "Gemm"], weights, onnx_path)


def constant_values(graph: onnx.GraphProto) -> dict[str, np.ndarray]:
    """Every initializer by name, with what the graph makes of them before any input: the
    exporter stores equal tensors once and names the copies through Identity nodes (an
    untrained net's folded biases are often all equal), and an int8 copy
    (models/recipe/quantise.py) holds each weight as integers that a DequantizeLinear node
    turns back into floats, (q - zero point) x scale per output channel."""
    weights = {init.name: numpy_helper.to_array(init) for init in graph.initializer}
    for node in graph.node:
        if node.op_type == "Identity" and node.input[0] in weights:
            weights[node.output[0]] = weights[node.input[0]]
        elif node.op_type == "DequantizeLinear" and node.input[0] in weights:
            axis = next((a.i for a in node.attribute if a.name == "axis"), 1)
            quantised, scale, zero_point = (weights[name] for name in node.input[:3])
            weights[node.output[0]] = dequantised(quantised, scale, zero_point, axis=axis)
    return weights


def dequantised(
    quantised: np.ndarray, scale: np.ndarray, zero_point: np.ndarray, axis: int
) -> np.ndarray:
    """ONNX DequantizeLinear of a constant: per tensor (a scalar scale) or per channel
    along ``axis``."""
    shape = [1] * quantised.ndim
    if scale.ndim:
        shape[axis] = -1
    offset = quantised.astype(np.float32) - zero_point.astype(np.float32).reshape(shape)
    return (offset * scale.astype(np.float32).reshape(shape)).astype(np.float32)


def conv_widths(onnx_path: Path) -> list[int]:
    """The output channels of each Conv of an exported file, in graph order (which net of
    a family it is: the small classifier's or the wide one's)."""
    graph = onnx.load(str(onnx_path)).graph
    weights = constant_values(graph)
    return [int(weights[n.input[1]].shape[0]) for n in graph.node if n.op_type == "Conv"]


def batchnorm_after(modules: list[nn.Module]) -> dict[int, nn.BatchNorm2d | None]:
    """For each Conv2d (by id): the BatchNorm2d that follows it in module order, if any."""
    following: dict[int, nn.BatchNorm2d | None] = {}
    for i, module in enumerate(modules):
        if isinstance(module, nn.Conv2d):
            after = next((m for m in modules[i + 1 :] if not isinstance(m, nn.Sequential)), None)
            following[id(module)] = after if isinstance(after, nn.BatchNorm2d) else None
    return following


def tensor(weights: dict[str, np.ndarray], name: str) -> torch.Tensor:
    return torch.from_numpy(weights[name].copy())


def load_convs(
    modules: list[nn.Module],
    onnx_convs: list[onnx.NodeProto],
    weights: dict[str, np.ndarray],
    onnx_path: Path,
) -> None:
    """Each ONNX Conv's weight into the torch Conv2d of the same rank; its folded bias into
    the BatchNorm after it (set to add just that bias), or else the conv's own bias."""
    torch_convs = [m for m in modules if isinstance(m, nn.Conv2d)]
    if len(onnx_convs) != len(torch_convs):
        raise ValueError(f"{onnx_path}: {len(onnx_convs)} convs, net has {len(torch_convs)}")
    following_bn = batchnorm_after(modules)
    for node, conv in zip(onnx_convs, torch_convs, strict=True):
        weight = tensor(weights, node.input[1])
        bias = tensor(weights, node.input[2]) if len(node.input) > 2 else None
        if weight.shape != conv.weight.shape:
            raise ValueError(f"{node.name}: shape {weight.shape} != {conv.weight.shape}")
        conv.weight.copy_(weight)
        bn = following_bn[id(conv)]
        if bn is not None:
            # BatchNorm2d keeps running statistics unless built with track_running_stats=False
            assert bn.running_mean is not None and bn.running_var is not None
            bn.weight.fill_(1.0)
            bn.running_mean.zero_()
            bn.running_var.fill_(1.0 - bn.eps)
            bn.bias.copy_(bias if bias is not None else torch.zeros_like(bn.bias))
        elif conv.bias is not None and bias is not None:
            conv.bias.copy_(bias)


def load_linears(
    modules: list[nn.Module],
    onnx_gemms: list[onnx.NodeProto],
    weights: dict[str, np.ndarray],
    onnx_path: Path,
) -> None:
    """Each ONNX Gemm's weight (transposed unless transB) and bias into the torch Linear of
    the same rank."""
    torch_linears = [m for m in modules if isinstance(m, nn.Linear)]
    if len(onnx_gemms) != len(torch_linears):
        raise ValueError(f"{onnx_path}: {len(onnx_gemms)} Gemm, net has {len(torch_linears)}")
    for node, linear in zip(onnx_gemms, torch_linears, strict=True):
        trans_b = next((a.i for a in node.attribute if a.name == "transB"), 0)
        weight = tensor(weights, node.input[1])
        if not trans_b:
            weight = weight.T.contiguous()
        if weight.shape != linear.weight.shape:
            raise ValueError(f"{node.name}: shape {weight.shape} != {linear.weight.shape}")
        linear.weight.copy_(weight)
        if linear.bias is not None and len(node.input) > 2:
            linear.bias.copy_(tensor(weights, node.input[2]))


def freeze_batchnorm(net: nn.Module) -> None:
    """Keep BatchNorm in eval mode with fixed affine terms (they hold folded biases)."""
    for module in net.modules():
        if isinstance(module, nn.BatchNorm2d):
            module.eval()
            module.weight.requires_grad_(False)
