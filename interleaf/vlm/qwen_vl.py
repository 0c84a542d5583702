"""Qwen2.5-VL (any size; hub id or local folder) through transformers: loading and model inputs.

Shared by the describer (generation) and the LMM filter (one forward pass). The path of Qwen2.5-VL's
model card: AutoProcessor + AutoModelForImageTextToText, and `qwen_vl_utils.process_vision_info`
resizing each crop within the configured pixel budget.
"""

from __future__ import annotations

import io
import threading
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from interleaf.errors import StageError
from interleaf.vlm.config import QwenVLConfig

T = TypeVar("T")
R = TypeVar("R")

# qwen_vl_utils' smart_resize refuses an image whose long side is more than this times its short side
MAX_ASPECT = 200


class ImageError(OSError):
    """A crop the model cannot take: undecodable (PIL's UnidentifiedImageError and truncated files are
    OSErrors too), or a strip longer than MAX_ASPECT : 1. A property of the item, not of the code."""


class OutOfMemory(MemoryError):
    """A batch did not fit in memory (torch.OutOfMemoryError on a GPU, an allocation failure on the CPU)."""


def out_of_memory(exc: BaseException) -> bool:
    if isinstance(exc, MemoryError) or type(exc).__name__ == "OutOfMemoryError":  # torch.OutOfMemoryError
        return True
    text = str(exc)
    return isinstance(exc, RuntimeError) and ("out of memory" in text or "can't allocate memory" in text)


class QwenVL:
    """The processor and model, loaded once on first use. `lock` serialises calls: one model is
    shared by whatever threads the caller runs, and a forward pass already uses every core."""

    def __init__(self, settings: QwenVLConfig) -> None:
        self.settings = settings
        self.lock = threading.Lock()
        self._loaded: tuple[Any, Any] | None = None

    def load(self) -> tuple[Any, Any]:
        if self._loaded is None:
            import torch
            from transformers import AutoModelForImageTextToText, AutoProcessor

            s = self.settings
            dtype = "auto" if s.dtype == "auto" else getattr(torch, s.dtype)
            # Crops are resized by process_vision_info (min/max_pixels per image, below), not here.
            processor = AutoProcessor.from_pretrained(s.model)
            # left padding: in a batch, every sequence's last position is its own last prompt token,
            # where generation continues and where the filter reads its yes/no logits
            processor.tokenizer.padding_side = "left"
            model = AutoModelForImageTextToText.from_pretrained(s.model, dtype=dtype)
            model.to(s.device).eval()
            self._loaded = (processor, model)
        return self._loaded

    def image_part(self, png: bytes) -> dict[str, Any]:
        """A content part holding one crop, resized by process_vision_info within the pixel budget."""
        from PIL import Image

        try:
            image = Image.open(io.BytesIO(png)).convert("RGB")
        except OSError as exc:
            raise ImageError(f"unreadable image: {exc}") from exc
        w, h = image.size
        if max(w, h) > MAX_ASPECT * min(w, h):
            raise ImageError(f"a {w} x {h} px image: Qwen2.5-VL takes aspect ratios up to {MAX_ASPECT}:1")
        s = self.settings
        return {"type": "image", "image": image, "min_pixels": s.min_pixels, "max_pixels": s.max_pixels}

    def messages(self, png: bytes, text: str) -> list[dict[str, Any]]:
        """One user turn: the image, then the text."""
        return [{"role": "user", "content": [self.image_part(png), {"type": "text", "text": text}]}]

    def inputs(self, conversations: list[list[dict[str, Any]]], **template_kwargs: Any) -> Any:
        """The batch's model inputs (token ids, attention mask, pixel values, grid sizes) on the model's
        device, each conversation ending with the assistant's generation prompt. `template_kwargs` go
        to the chat template (`enable_thinking` for templates that have the switch)."""
        from qwen_vl_utils import process_vision_info

        processor, model = self.load()
        texts = [
            processor.apply_chat_template(m, tokenize=False, add_generation_prompt=True, **template_kwargs)
            for m in conversations
        ]
        images, _videos = process_vision_info(conversations)
        return processor(text=texts, images=images, padding=True, return_tensors="pt").to(model.device)

    def run_batches(
        self,
        items: Sequence[T],
        size: int,
        fn: Callable[[Sequence[T]], list[R]],
        item_id: Callable[[T], str] | None = None,
        stage: str = "vlm",
    ) -> list[R | Exception]:
        """`fn` over consecutive batches of `items`, one batch at a time under the lock. A batch that
        runs out of memory gives an OutOfMemory to each of its items, so the failure stays per item
        and the caller decides what it means; any other exception is a bug and propagates as a
        StageError naming the batch's items (`item_id`). Decode images before (`image_part` raises
        ImageError per item), so that one bad crop fails alone."""

        def guarded(batch: Sequence[T]) -> list[R]:
            try:
                return fn(batch)
            except Exception as exc:  # sorted here: memory is expected, everything else is re-raised
                if out_of_memory(exc):
                    raise OutOfMemory(f"{type(exc).__name__}: {exc}") from exc
                ids = ", ".join(item_id(i) for i in batch) if item_id else f"a batch of {len(batch)}"
                raise StageError(stage, ids, exc) from exc

        return run_batches(self.lock, items, size, guarded, (OutOfMemory,))


def run_batches(
    lock: threading.Lock,
    items: Sequence[T],
    size: int,
    fn: Callable[[Sequence[T]], list[R]],
    expected: tuple[type[Exception], ...] = (Exception,),
) -> list[R | Exception]:
    """QwenVL.run_batches for any model: the `expected` exceptions of a batch go to each of its items."""
    out: list[R | Exception] = []
    for start in range(0, len(items), size):
        batch = items[start : start + size]
        try:
            with lock:
                out.extend(fn(batch))
        except expected as exc:
            out.extend(exc for _ in batch)
    return out
