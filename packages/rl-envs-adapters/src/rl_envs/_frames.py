"""Writing an episode's frames: the renderers that give arrays share one GIF writer."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any


def save_gif(frames: Sequence[Any], path: str | Path, fps: int = 20) -> None:
    """An animated GIF of `frames` (at least one, each `[H, W, 3]` uint8), looping, `fps`
    frames a second, written with Pillow (`rl render` writes to a temporary file and renames
    it)."""
    import numpy as np
    from PIL import Image

    if not frames:
        raise ValueError("an episode has at least one frame (its first state)")
    images = [Image.fromarray(np.asarray(f, dtype=np.uint8)) for f in frames]
    images[0].save(Path(path), format="GIF", save_all=True, append_images=images[1:],
                   duration=max(1, round(1000 / fps)), loop=0)
