"""VLM-text from Qwen2.5-VL (any size; hub id or local folder) through transformers, batched.

The path MMDocRAG used for its VLM-text (§2.1): the image quote and a detailed-description
prompt in, free text out. `qwen_vl_utils.process_vision_info` resizes each crop within the
configured pixel budget, as Qwen2.5-VL's model card does.
"""

from __future__ import annotations

import io
import threading
from typing import Any

from interleaf.describe.config import TransformersConfig
from interleaf.describe.protocol import DescribeRequest, Description
from interleaf.prompts import Prompt


class TransformersDescriber:
    name = "transformers"
    code_version = "transformers-1"

    def __init__(self, config: TransformersConfig, prompt: Prompt) -> None:
        self.config = config
        self.prompt = prompt
        self.model: str | None = config.model
        self.prompt_hash: str | None = prompt.hash
        self._loaded: tuple[Any, Any] | None = None
        self._lock = threading.Lock()  # one generate at a time: the model is shared by the tasks

    def _load(self) -> tuple[Any, Any]:
        if self._loaded is None:
            import torch
            from transformers import AutoModelForImageTextToText, AutoProcessor

            dtype = "auto" if self.config.dtype == "auto" else getattr(torch, self.config.dtype)
            # Crops are resized by process_vision_info (min/max_pixels per image, below), not here.
            processor = AutoProcessor.from_pretrained(self.config.model)
            processor.tokenizer.padding_side = "left"  # batched generation continues after the prompt
            model = AutoModelForImageTextToText.from_pretrained(self.config.model, dtype=dtype)
            model.to(self.config.device).eval()
            self._loaded = (processor, model)
        return self._loaded

    def messages(self, request: DescribeRequest) -> list[dict[str, Any]]:
        from PIL import Image

        image = Image.open(io.BytesIO(request.png)).convert("RGB")
        text = self.prompt.render(kind=request.kind, page=request.page_idx + 1, caption=request.caption or "(none)")
        content = [
            {
                "type": "image",
                "image": image,
                "min_pixels": self.config.min_pixels,
                "max_pixels": self.config.max_pixels,
            },
            {"type": "text", "text": text},
        ]
        return [{"role": "user", "content": content}]

    def _generate(self, batch: list[DescribeRequest]) -> list[str]:
        import torch
        from qwen_vl_utils import process_vision_info

        processor, model = self._load()
        conversations = [self.messages(r) for r in batch]
        texts = [processor.apply_chat_template(m, tokenize=False, add_generation_prompt=True) for m in conversations]
        images, _videos = process_vision_info(conversations)
        inputs = processor(text=texts, images=images, padding=True, return_tensors="pt").to(model.device)
        with torch.inference_mode():
            out = model.generate(**inputs, max_new_tokens=self.config.max_new_tokens, do_sample=False)
        new_tokens = out[:, inputs["input_ids"].shape[1] :]
        return processor.batch_decode(new_tokens, skip_special_tokens=True, clean_up_tokenization_spaces=False)

    def describe(self, requests: list[DescribeRequest]) -> list[Description]:
        results: list[Description] = []
        size = self.config.batch_size
        for start in range(0, len(requests), size):
            batch = requests[start : start + size]
            try:
                with self._lock:
                    texts = self._generate(batch)
            except Exception as exc:  # a failed batch becomes rejects; the quotes keep their OCR-text
                results += [Description(None, (), f"{type(exc).__name__}: {exc}") for _ in batch]
                continue
            results += [
                Description(t.strip() or None, ("image",), None if t.strip() else "empty output") for t in texts
            ]
        return results
