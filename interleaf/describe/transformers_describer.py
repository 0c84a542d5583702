"""VLM-text from Qwen2.5-VL (any size; hub id or local folder) through transformers, batched.

The path MMDocRAG used for its VLM-text (§2.1): the image quote and a detailed-description
prompt in, free text out. Loading and the image+text inputs are shared with the LMM filter
(`interleaf.vlm.qwen_vl`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from interleaf.describe.config import TransformersConfig
from interleaf.describe.protocol import DescribeRequest, Description
from interleaf.prompts import Prompt
from interleaf.vlm.qwen_vl import ImageError, QwenVL


class TransformersDescriber:
    name = "transformers"

    def __init__(self, config: TransformersConfig, prompt: Prompt) -> None:
        self.config = config
        self.prompt = prompt
        self.model: str | None = config.model
        self.prompt_hash: str | None = prompt.hash
        self.vl = QwenVL(config)  # one generate at a time (its lock): the model is shared by the tasks

    def messages(self, request: DescribeRequest) -> list[dict[str, Any]]:
        text = self.prompt.render(kind=request.kind, page=request.page_idx + 1, caption=request.caption or "(none)")
        return self.vl.messages(request.png, text)

    def _generate(self, batch: Sequence[tuple[DescribeRequest, list[dict[str, Any]]]]) -> list[str]:
        import torch

        processor, model = self.vl.load()
        inputs = self.vl.inputs([conversation for _, conversation in batch])
        with torch.inference_mode():
            out = model.generate(**inputs, max_new_tokens=self.config.max_new_tokens, do_sample=False)
        new_tokens = out[:, inputs["input_ids"].shape[1] :]
        return processor.batch_decode(new_tokens, skip_special_tokens=True, clean_up_tokenization_spaces=False)

    def describe(self, requests: list[DescribeRequest]) -> list[Description]:
        out: list[Description | None] = [None] * len(requests)
        ready = []
        for i, request in enumerate(requests):
            try:
                ready.append((i, (request, self.messages(request))))
            except ImageError as exc:  # this crop alone: its quote keeps its OCR-text
                out[i] = Description(None, (), str(exc))
        items = [item for _, item in ready]
        texts = self.vl.run_batches(items, self.config.batch_size, self._generate, lambda item: item[0].quote_id)
        for (i, _), text in zip(ready, texts, strict=True):
            if isinstance(text, Exception):  # out of memory: these quotes keep their OCR-text
                out[i] = Description(None, (), f"{type(text).__name__}: {text}")
            else:
                out[i] = Description(text.strip() or None, ("image",), None if text.strip() else "empty output")
        return [d for d in out if d is not None]
