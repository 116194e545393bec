"""Synthetic CT-like and MR-like torso volumes with organ label maps, drawn from a seed.

A torso is an elliptic cylinder of soft tissue under a layer of fat, with a spine and organs
as jittered ellipsoids (positions in mm from the body's centre; low x is the patient's right,
low y posterior, low z caudal). Intensities follow the modality: Hounsfield-like units for
contrast-enhanced CT (``CTce``), arbitrary T1-weighted units with a smooth bias field for MR
(``MRT1``). The image is blurred slightly (partial volume) and noise is added.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy.ndimage import gaussian_filter

BACKGROUND, FAT, SOFT, BONE = "air", "fat", "soft", "bone"


@dataclass(frozen=True)
class Blob:
    """An organ: RadLex ID, centre and radii in mm (x, y, z)."""

    radlex: int
    centre: tuple[float, float, float]
    radii: tuple[float, float, float]


@dataclass(frozen=True)
class Modality:
    """A modality: voxel grid, intensities per tissue or RadLex ID, noise and bias."""

    name: str
    region: str
    shape: tuple[int, int, int]
    spacing: tuple[float, float, float]
    intensity: dict[str | int, float]
    noise: float
    bias: float
    organs: tuple[int, ...]


ORGANS = (  # painted in this order, later ones over earlier ones
    Blob(237, (0.0, 30.0, -125.0), (40.0, 35.0, 30.0)),  # urinary bladder
    Blob(29663, (62.0, -55.0, -30.0), (28.0, 25.0, 45.0)),  # left kidney
    Blob(29662, (-62.0, -55.0, -35.0), (28.0, 25.0, 45.0)),  # right kidney
    Blob(86, (82.0, -30.0, 30.0), (30.0, 35.0, 35.0)),  # spleen
    Blob(58, (-55.0, 10.0, 25.0), (75.0, 65.0, 45.0)),  # liver
    Blob(1326, (75.0, 10.0, 100.0), (55.0, 70.0, 65.0)),  # left lung
    Blob(1302, (-75.0, 10.0, 100.0), (55.0, 70.0, 65.0)),  # right lung
)

CTCE = Modality(
    "CTce", "ThAb", (56, 44, 32), (6.0, 6.0, 10.0),
    {BACKGROUND: -1000, FAT: -100, SOFT: 40, BONE: 600, 237: 5, 29663: 200, 29662: 200,
     86: 140, 58: 95, 1326: -850, 1302: -850},
    noise=15.0, bias=0.0, organs=(237, 29663, 29662, 86, 58, 1326, 1302),
)  # fmt: skip
MRT1 = Modality(
    "MRT1", "Ab", (48, 40, 24), (7.0, 7.0, 12.0),
    {BACKGROUND: 0, FAT: 850, SOFT: 320, BONE: 650, 237: 90, 29663: 480, 29662: 480,
     86: 410, 58: 560},
    noise=20.0, bias=0.1, organs=(237, 29663, 29662, 86, 58),
)  # fmt: skip


def _grid(modality: Modality) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Voxel centres in mm from the volume's centre, indexed [x, y, z]."""
    axes = [
        (np.arange(n) - (n - 1) / 2) * step
        for n, step in zip(modality.shape, modality.spacing, strict=True)
    ]
    x, y, z = np.meshgrid(*axes, indexing="ij")
    return x, y, z


def draw_torso(modality: Modality, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """One patient: (image as float64, label map of RadLex IDs as uint16), both [x, y, z]."""
    x, y, z = _grid(modality)
    half_x, half_y = (
        modality.shape[0] * modality.spacing[0] / 2,
        modality.shape[1] * modality.spacing[1] / 2,
    )
    rx, ry = half_x * rng.uniform(0.86, 0.94), half_y * rng.uniform(0.86, 0.94)
    body = (x / rx) ** 2 + (y / ry) ** 2 <= 1
    inner = (x / (rx - 15)) ** 2 + (y / (ry - 15)) ** 2 <= 1
    spine = (x**2 + (y + ry * 0.7) ** 2) <= 18.0**2
    tissue = np.full(modality.shape, BACKGROUND, dtype=object)
    tissue[body], tissue[inner], tissue[spine & inner] = FAT, SOFT, BONE
    labels = np.zeros(modality.shape, np.uint16)
    for blob in ORGANS:
        if blob.radlex not in modality.organs:
            continue
        centre = [c + rng.normal(0, 6) for c in blob.centre]
        radii = [r * rng.uniform(0.88, 1.12) for r in blob.radii]
        inside = (
            sum(((axis - c) / r) ** 2 for axis, c, r in zip((x, y, z), centre, radii, strict=True))
            <= 1
        )
        labels[inside & inner & ~spine] = blob.radlex
    image = np.vectorize(lambda t: float(modality.intensity[t]))(tissue)
    for radlex in modality.organs:
        image[labels == radlex] = modality.intensity[radlex] + rng.normal(0, modality.noise / 3)
    image = gaussian_filter(image, sigma=(0.6, 0.6, 0.4))
    if modality.bias:
        image *= 1 + modality.bias * (x / half_x) * rng.uniform(-1, 1)
    image += rng.normal(0, modality.noise, modality.shape)
    return image, labels
