"""A small patch-attention classifier written the way model zoos write scriptable PyTorch models:
``Final`` class annotations, ``@torch.jit.ignore`` helpers, ``torch.jit.is_scripting()`` guarding
activation checkpointing, ``torch._assert`` on the input size, a ``@torch.jit.script`` activation,
``torch.jit.annotate`` and ``torch.jit.trace`` of the model; trained a few AdamW steps in float64 on
NumPy data. Run by PyTorch (which compiles the scripted parts) and by tinynet's compat runner
(which runs them eagerly); the losses must agree."""
from typing import List

import numpy
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.jit import Final
from torch.utils.checkpoint import checkpoint

from _common import arguments, dump, init_from_numpy


@torch.jit.script
def swish(x: torch.Tensor) -> torch.Tensor:
    return x * torch.sigmoid(x)


class Attention(nn.Module):
    fused: Final[bool]

    def __init__(self, dim, heads):
        super().__init__()
        self.heads, self.fused = heads, True
        self.qkv = nn.Linear(dim, dim * 3)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        b, n, c = x.shape
        q, k, v = self.qkv(x).reshape(b, n, 3, self.heads, c // self.heads).permute(2, 0, 3, 1, 4).unbind(0)
        x = F.scaled_dot_product_attention(q, k, v) if self.fused else (q @ k.transpose(-2, -1)).softmax(-1) @ v
        return self.proj(x.transpose(1, 2).reshape(b, n, c))


class Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.norm1, self.attn = nn.LayerNorm(dim), Attention(dim, heads)
        self.norm2, self.fc1, self.fc2 = nn.LayerNorm(dim), nn.Linear(dim, dim * 2), nn.Linear(dim * 2, dim)

    def forward(self, x):
        x = x + self.attn(self.norm1(x))
        return x + self.fc2(F.gelu(self.fc1(self.norm2(x))))


class PatchNet(nn.Module):
    img_size: Final[int]

    def __init__(self, img_size=8, patch=4, dim=16, depth=2, classes=5):
        super().__init__()
        self.img_size, self.patch, self.grad_checkpointing = img_size, patch, False
        self.embed = nn.Conv2d(1, dim, patch, patch)
        self.pos = nn.Parameter(torch.zeros(1, (img_size // patch) ** 2, dim))
        self.blocks = nn.ModuleList([Block(dim, 2) for _ in range(depth)])
        self.head = nn.Linear(dim, classes)

    @torch.jit.ignore
    def no_weight_decay(self):
        return {"pos"}

    @torch.jit.ignore
    def set_grad_checkpointing(self, enable=True):
        self.grad_checkpointing = enable

    def forward(self, x):
        torch._assert(x.shape[-1] == self.img_size, f"input width {x.shape[-1]} is not {self.img_size}")
        x = self.embed(x).flatten(2).transpose(1, 2) + self.pos
        features = torch.jit.annotate(List[torch.Tensor], [])
        for block in self.blocks:
            if self.grad_checkpointing and not torch.jit.is_scripting():
                x = checkpoint(block, x, use_reentrant=False)
            else:
                x = block(x)
            features.append(x.mean(1))
        # (the scripted function outside the checkpointed blocks: in PyTorch 2.13 a TorchScript function inside
        # a non-reentrant checkpoint gets other gradients than the same function unscripted)
        return self.head(swish(torch.stack(features).sum(0)))


def main():
    args = arguments("scriptable model", steps=4)
    rng = numpy.random.default_rng(args.seed)
    model = PatchNet().double()
    init_from_numpy(model, args.seed)
    model.set_grad_checkpointing()
    x = torch.from_numpy(rng.standard_normal((6, 1, 8, 8)))
    y = torch.from_numpy(rng.integers(0, 5, 6))
    decay = [p for n, p in model.named_parameters() if n not in model.no_weight_decay()]
    opt = torch.optim.AdamW([{"params": decay}, {"params": [model.pos], "weight_decay": 0.0}], lr=1e-2)
    losses = []
    for _ in range(args.steps):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    model.eval()
    traced = torch.jit.trace(model, (x[:2],))
    with torch.no_grad():
        traced_out = traced(x[:2]).sum().item()
    try:
        model(torch.zeros(1, 1, 8, 4, dtype=torch.double))
        refused = False
    except AssertionError:
        refused = True
    dump(args.out, losses=losses, traced_out=traced_out, refused=refused, scripting=torch.jit.is_scripting())


if __name__ == "__main__":
    main()
