"""The six driving-model architectures of AutoMT's experiment, in torch, each with two heads (speed, steering).

AutoMT trains a separate network per output; drivemt gives each architecture one trunk and two heads, which
halves training and judging time on a CPU and keeps a model's speed and steering from one view of the scene.
Users' own models may still come as two networks (see :mod:`runners.ads.spec`).

Every network takes ``[batch, frames, 3, height, width]`` (YUV scaled to [-1, 1]) and returns
``[batch, 2]``: speed and steering, standardised by the training set's mean and spread (the exported model
undoes that). Single-frame models read the last frame; CNN-LSTM reads 5, CNN3D 4.

ResNet101 and VGG16 are too slow to train on a CPU; the default zoo uses ResNet18 and VGG11 in their place,
named as such (``resnet101`` and ``vgg16`` are there for a GPU). The VGGs are torchvision's batch-normalised
variants: plain VGG11 trained from scratch with Adam at 1e-3 collapsed to the constant mean here (held-out MAE
equal to the baseline's), while VGG11-BN beat it on both outputs (``bench/ads_training.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn

__all__ = ["ARCHITECTURES", "DEFAULT_ZOO", "Architecture", "build", "parameter_count"]


class PilotNet(nn.Module):
    """NVIDIA's PilotNet (Bojarski et al. 2016): five convolutions and four dense layers."""

    def __init__(self, height: int, width: int) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 24, 5, stride=2), nn.ELU(),
            nn.Conv2d(24, 36, 5, stride=2), nn.ELU(),
            nn.Conv2d(36, 48, 5, stride=2), nn.ELU(),
            nn.Conv2d(48, 64, 3), nn.ELU(),
            nn.Conv2d(64, 64, 3), nn.ELU(),
        )  # fmt: skip
        n = _flat(self.features, height, width)
        self.head = nn.Sequential(
            nn.Flatten(), nn.Dropout(0.2), nn.Linear(n, 100), nn.ELU(), nn.Linear(100, 50), nn.ELU(),
            nn.Linear(50, 10), nn.ELU(), nn.Linear(10, 2),
        )  # fmt: skip

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x[:, -1]))


class Epoch(nn.Module):
    """Team Epoch's Udacity challenge-2 model: three convolution-pool blocks and a wide dense layer."""

    def __init__(self, height: int, width: int) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Dropout(0.25),
            nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Dropout(0.25),
            nn.Conv2d(64, 128, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Dropout(0.5),
        )  # fmt: skip
        n = _flat(self.features, height, width)
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(n, 1024), nn.ReLU(), nn.Dropout(0.5), nn.Linear(1024, 2))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x[:, -1]))


class TorchvisionNet(nn.Module):
    """A torchvision backbone (random weights: nothing is downloaded) with a two-output head."""

    def __init__(self, backbone: str, height: int, width: int) -> None:
        super().__init__()
        import torchvision

        net = getattr(torchvision.models, backbone)(weights=None)
        if backbone.startswith("resnet"):
            features = net.fc.in_features
            net.fc = nn.Identity()
            self.trunk: nn.Module = net
        else:  # VGG: its convolutions, pooled, then a small head instead of the 4096-wide classifier
            self.trunk = nn.Sequential(net.features, nn.AdaptiveAvgPool2d(1), nn.Flatten())
            features = 512
        self.head = nn.Sequential(nn.Linear(features, 256), nn.ReLU(), nn.Dropout(0.3), nn.Linear(256, 2))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.trunk(x[:, -1]))


class CNNLSTM(nn.Module):
    """A small convolutional encoder per frame and an LSTM over the frames (the last state predicts)."""

    def __init__(self, height: int, width: int, hidden: int = 64) -> None:
        super().__init__()
        self.encoder = nn.Sequential(
            nn.Conv2d(3, 24, 5, stride=2), nn.ELU(),
            nn.Conv2d(24, 36, 5, stride=2), nn.ELU(),
            nn.Conv2d(36, 48, 3, stride=2), nn.ELU(),
            nn.Conv2d(48, 64, 3), nn.ELU(),
            nn.AdaptiveAvgPool2d((2, 4)), nn.Flatten(),
        )  # fmt: skip
        self.lstm = nn.LSTM(64 * 8, hidden, batch_first=True)
        self.head = nn.Linear(hidden, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t = x.shape[:2]
        f = self.encoder(x.flatten(0, 1)).view(b, t, -1)
        out, _ = self.lstm(f)
        return self.head(out[:, -1])


class CNN3D(nn.Module):
    """3D convolutions over the last 4 frames (space and time together)."""

    def __init__(self, height: int, width: int) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv3d(3, 24, (2, 5, 5), stride=(1, 2, 2)), nn.ELU(),
            nn.Conv3d(24, 36, (2, 5, 5), stride=(1, 2, 2)), nn.ELU(),
            nn.Conv3d(36, 48, (2, 3, 3), stride=(1, 2, 2)), nn.ELU(),
            nn.AdaptiveAvgPool3d((1, 2, 4)), nn.Flatten(),
        )  # fmt: skip
        self.head = nn.Sequential(nn.Linear(48 * 8, 64), nn.ELU(), nn.Linear(64, 2))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.head(self.features(x.transpose(1, 2)))  # [B, C, T, H, W]


@dataclass(frozen=True)
class Architecture:
    """One entry of the zoo."""

    name: str
    frames: int
    make: Callable[[int, int], nn.Module]
    stands_in_for: str | None = None
    """AutoMT's model this one replaces on a CPU (ResNet18 for ResNet101, VGG11 for VGG16)."""


ARCHITECTURES: dict[str, Architecture] = {
    a.name: a
    for a in (
        Architecture("pilotnet", 1, PilotNet),
        Architecture("epoch", 1, Epoch),
        Architecture("resnet18", 1, lambda h, w: TorchvisionNet("resnet18", h, w), stands_in_for="resnet101"),
        Architecture("vgg11", 1, lambda h, w: TorchvisionNet("vgg11_bn", h, w), stands_in_for="vgg16"),
        Architecture("cnn-lstm", 5, CNNLSTM),
        Architecture("cnn3d", 4, CNN3D),
        Architecture("resnet101", 1, lambda h, w: TorchvisionNet("resnet101", h, w)),
        Architecture("vgg16", 1, lambda h, w: TorchvisionNet("vgg16_bn", h, w)),
    )
}
DEFAULT_ZOO = ("pilotnet", "epoch", "resnet18", "vgg11", "cnn-lstm", "cnn3d")
"""AutoMT's six, with the CPU stand-ins."""


def build(name: str, height: int = 80, width: int = 160) -> nn.Module:
    """A fresh (randomly initialised) network of the named architecture.

    Raises:
        KeyError: For an unknown name, listing the known ones.
    """
    if name not in ARCHITECTURES:
        raise KeyError(f"unknown architecture {name!r}; known: {', '.join(ARCHITECTURES)}")
    return ARCHITECTURES[name].make(height, width)


def parameter_count(net: nn.Module) -> int:
    """Trainable parameters."""
    return sum(p.numel() for p in net.parameters() if p.requires_grad)


def _flat(features: nn.Module, height: int, width: int) -> int:
    with torch.no_grad():
        return int(features(torch.zeros(1, 3, height, width)).numel())
