"""How far apart two colours look, to a reader with normal colour vision and to readers with
each of the three dichromacies: the arithmetic behind :mod:`.style`'s palette (numpy only).

- sRGB ↔ CIELAB (D65 white, IEC 61966-2-1 transfer function);
- colour-vision deficiency: Machado, Oliveira & Fernandes, "A physiologically-based model
  for simulation of color vision deficiency", IEEE TVCG 15(6), 2009, the matrices of
  severity 1.0 (protanopia, deuteranopia, tritanopia), applied to linear RGB;
- colour difference: CIEDE2000 (CIE 142-2001; Sharma, Wu & Dalal, Color Res. Appl. 30(1),
  2005, whose test pairs tests/dashboard/test_vision.py checks).

:func:`distances` is the difference a look must keep from another: the smallest ΔE00 over
the four visions. As a yardstick, the eight colours of Okabe & Ito's palette, designed for
colour-blind readers, are at least 10.9 apart in it (its closest pair, orange and reddish
purple, under tritanopia).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

# Machado et al. 2009, severity 1.0: linear RGB → linear RGB as the dichromat sees it
MACHADO = {
    "protanopia": np.array(
        [
            [0.152286, 1.052583, -0.204868],
            [0.114503, 0.786281, 0.099216],
            [-0.003882, -0.048116, 1.051998],
        ]
    ),
    "deuteranopia": np.array(
        [
            [0.367322, 0.860646, -0.227968],
            [0.280085, 0.672501, 0.047413],
            [-0.011820, 0.042940, 0.968881],
        ]
    ),
    "tritanopia": np.array(
        [
            [1.255528, -0.076749, -0.178779],
            [-0.078411, 0.930809, 0.147602],
            [0.004733, 0.691367, 0.303900],
        ]
    ),
}
VISIONS = ("normal", *MACHADO)
# linear sRGB → CIE XYZ (D65), and the white point
RGB_TO_XYZ = np.array(
    [
        [0.4124564, 0.3575761, 0.1804375],
        [0.2126729, 0.7151522, 0.0721750],
        [0.0193339, 0.1191920, 0.9503041],
    ]
)
WHITE = RGB_TO_XYZ.sum(axis=1)
_EPSILON, _KAPPA = 216 / 24389, 24389 / 27


def hex_to_rgb(colors: str | Sequence[str]) -> np.ndarray:
    """``#rrggbb`` (or several) as sRGB in [0, 1], shape (3,) or (n, 3)."""
    listed = [colors] if isinstance(colors, str) else colors
    rows = [[int(c[i : i + 2], 16) / 255 for i in (1, 3, 5)] for c in listed]
    out = np.array(rows, dtype=float).reshape(-1, 3)
    return out[0] if isinstance(colors, str) else out


def rgb_to_hex(rgb: np.ndarray) -> str:
    """sRGB in [0, 1] (clipped) as ``#rrggbb``."""
    return "#" + "".join(f"{round(float(c) * 255):02x}" for c in np.clip(rgb, 0.0, 1.0))


def to_linear(rgb: np.ndarray) -> np.ndarray:
    rgb = np.asarray(rgb, dtype=float)
    return np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)


def from_linear(linear: np.ndarray) -> np.ndarray:
    linear = np.clip(np.asarray(linear, dtype=float), 0.0, 1.0)
    return np.where(linear <= 0.0031308, 12.92 * linear, 1.055 * linear ** (1 / 2.4) - 0.055)


def linear_to_lab(linear: np.ndarray) -> np.ndarray:
    """Linear sRGB, shape (..., 3) → CIELAB (L*, a*, b*), same shape."""
    xyz = (np.asarray(linear, dtype=float) @ RGB_TO_XYZ.T) / WHITE
    f = np.where(xyz > _EPSILON, np.cbrt(xyz), (_KAPPA * xyz + 16) / 116)
    return np.stack(
        [116 * f[..., 1] - 16, 500 * (f[..., 0] - f[..., 1]), 200 * (f[..., 1] - f[..., 2])],
        axis=-1,
    )


def lab_to_rgb(lab: Sequence[float]) -> tuple[np.ndarray, bool]:
    """CIELAB → (sRGB clipped to [0, 1], whether it was inside the sRGB gamut)."""
    lightness, a, b = lab
    fy = (lightness + 16) / 116
    f = np.array([fy + a / 500, fy, fy - b / 200])
    xyz = np.where(f**3 > _EPSILON, f**3, (116 * f - 16) / _KAPPA) * WHITE
    linear = np.linalg.solve(RGB_TO_XYZ, xyz)
    inside = bool(linear.min() >= -1e-9 and linear.max() <= 1 + 1e-9)
    return from_linear(linear), inside


def lab(colors: str | Sequence[str], vision: str = "normal") -> np.ndarray:
    """CIELAB of colours as a reader with ``vision`` (:data:`VISIONS`) sees them."""
    linear = to_linear(hex_to_rgb(colors))
    if vision != "normal":
        linear = np.clip(linear @ MACHADO[vision].T, 0.0, 1.0)
    return linear_to_lab(linear)


def simulate(color: str, vision: str) -> str:
    """``color`` as a reader with ``vision`` sees it, as ``#rrggbb``."""
    linear = to_linear(hex_to_rgb(color))
    if vision != "normal":
        linear = np.clip(MACHADO[vision] @ linear, 0.0, 1.0)
    return rgb_to_hex(from_linear(linear))


def chroma(color: str) -> float:
    """C*ab: 0 for a grey, 30 and more for a clear colour."""
    _, a, b = lab(color)
    return float(np.hypot(a, b))


def ciede2000(lab1: np.ndarray, lab2: np.ndarray) -> np.ndarray:
    """ΔE00 between CIELAB colours (broadcast over the leading axes; kL = kC = kH = 1)."""
    L1, a1, b1 = np.moveaxis(np.asarray(lab1, dtype=float), -1, 0)
    L2, a2, b2 = np.moveaxis(np.asarray(lab2, dtype=float), -1, 0)
    c_bar = (np.hypot(a1, b1) + np.hypot(a2, b2)) / 2
    g = 0.5 * (1 - np.sqrt(c_bar**7 / (c_bar**7 + 25.0**7)))
    a1p, a2p = (1 + g) * a1, (1 + g) * a2
    c1p, c2p = np.hypot(a1p, b1), np.hypot(a2p, b2)
    h1p = np.degrees(np.arctan2(b1, a1p)) % 360
    h2p = np.degrees(np.arctan2(b2, a2p)) % 360
    achromatic = c1p * c2p == 0
    dh = h2p - h1p
    dh = np.where(dh > 180, dh - 360, np.where(dh < -180, dh + 360, dh))
    dh = np.where(achromatic, 0.0, dh)
    d_lightness, d_chroma = L2 - L1, c2p - c1p
    d_hue = 2 * np.sqrt(c1p * c2p) * np.sin(np.radians(dh / 2))
    l_bar, cp_bar = (L1 + L2) / 2, (c1p + c2p) / 2
    h_sum = h1p + h2p
    h_bar = np.where(
        np.abs(h1p - h2p) > 180, np.where(h_sum < 360, h_sum + 360, h_sum - 360), h_sum
    )
    h_bar = np.where(achromatic, h_sum, h_bar / 2)
    t = (
        1
        - 0.17 * np.cos(np.radians(h_bar - 30))
        + 0.24 * np.cos(np.radians(2 * h_bar))
        + 0.32 * np.cos(np.radians(3 * h_bar + 6))
        - 0.20 * np.cos(np.radians(4 * h_bar - 63))
    )
    rotation = 30 * np.exp(-(((h_bar - 275) / 25) ** 2))
    r_c = 2 * np.sqrt(cp_bar**7 / (cp_bar**7 + 25.0**7))
    s_l = 1 + 0.015 * (l_bar - 50) ** 2 / np.sqrt(20 + (l_bar - 50) ** 2)
    s_c = 1 + 0.045 * cp_bar
    s_h = 1 + 0.015 * cp_bar * t
    r_t = -np.sin(np.radians(2 * rotation)) * r_c
    return np.sqrt(
        (d_lightness / s_l) ** 2
        + (d_chroma / s_c) ** 2
        + (d_hue / s_h) ** 2
        + r_t * (d_chroma / s_c) * (d_hue / s_h)
    )


def seen(colors: Sequence[str]) -> np.ndarray:
    """CIELAB of ``colors`` under every vision of :data:`VISIONS`: shape (4, n, 3)."""
    return np.stack([lab(list(colors), vision) for vision in VISIONS])


def distances(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """The smallest ΔE00 over the four visions between colours ``a`` and ``b``, given as
    :func:`seen` arrays: shape (len(a), len(b))."""
    if a.shape[1] == 0 or b.shape[1] == 0:
        return np.full((a.shape[1], b.shape[1]), np.inf)
    return ciede2000(a[:, :, None, :], b[:, None, :, :]).min(axis=0)


def worst_case(colors: Sequence[str]) -> tuple[float, str, str, str]:
    """The closest pair of ``colors`` as any of the four readers sees it: (ΔE00, colour,
    colour, vision); ∞ for fewer than two colours."""
    if len(colors) < 2:
        return float("inf"), "", "", ""
    views = seen(colors)
    each = ciede2000(views[:, :, None, :], views[:, None, :, :])
    n = len(colors)
    each[:, np.arange(n), np.arange(n)] = np.inf
    v, i, j = np.unravel_index(int(np.argmin(each)), each.shape)
    return float(each[v, i, j]), colors[int(i)], colors[int(j)], VISIONS[int(v)]
