"""Shape of the generate stage's configuration (values in configs/default.yaml)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from interleaf.strict import Strict
from interleaf.vlm.config import ChatServerConfig, QwenVLConfig


class OfflineConfig(Strict):
    """The extractive composer (offline.py): grounded by construction, no model."""

    max_words: int = Field(200, ge=20)  # the answer stays short; MMDocRAG's gold answers average ~220 tokens


class GenerateOpenAIConfig(ChatServerConfig):
    """Any OpenAI-compatible server: `vllm serve Qwen/Qwen2.5-VL-7B-Instruct`, SGLang, Ollama.
    `max_tokens` bounds each answer (and each merge / extraction call); a thinking model needs more."""


class GenerateTransformersConfig(QwenVLConfig):
    """Qwen2.5-VL (multimodal) or a text LLM (pure-text) in process; which one is read from the model's
    config.json (a `vision_config` means a VLM). Greedy decoding."""

    max_new_tokens: int = Field(512, ge=1)


class GenerateConfig(Strict):
    backend: Literal["offline", "openai", "transformers"] = "offline"
    # text: image quotes go as their VLM-text (else OCR-text); multimodal: as the crops themselves
    input_mode: Literal["text", "multimodal"] = "text"
    budget: int = Field(15, ge=1)  # the retrieved context answered from: 15 = 5 images + 10 texts (MMDocRAG §4.8)
    # text input: an image quote as its VLM-text, or as its OCR-text (MMDocRAG §4.5 compares both);
    # the other one stands in where the chosen one is missing
    image_text: Literal["vlm", "ocr"] = "vlm"
    # retrieved: the context's positions; relevance: by retrieval score, most relevant first (the
    # positions differ where retrieve.pages_take_turns interleaves pages); shuffled: MMDocRAG footnote 7.
    # The offline composer ranks its candidates by the quotes' scores whatever the order (its ranker
    # was fitted on contexts read most relevant first): the order moves its citations' numbers only
    quote_order: Literal["retrieved", "relevance", "shuffled"] = "retrieved"
    seed: int = 0  # the shuffle's seed
    # single: one call over the whole context (MMDocRAG Appendix C.1); two_step: RefLVQA §5.2's Two-step
    # MultiRAG, an answer from the text quotes and one from the image quotes, merged by a third call
    strategy: Literal["single", "two_step"] = "single"
    # MAVIS §5.2: facts are first extracted from each image quote without the question, then the answer
    # is written from them (image quotes only: the paper's gain is there, §5.6; text quotes are text already)
    knowledge_extraction: bool = False
    # models with a thinking switch (Qwen3-style chat templates): on / off; default leaves the model's own
    thinking: Literal["on", "off", "default"] = "default"
    offline: OfflineConfig = OfflineConfig()
    openai: GenerateOpenAIConfig = GenerateOpenAIConfig()
    transformers: GenerateTransformersConfig = GenerateTransformersConfig()

    @model_validator(mode="after")
    def _model_options_need_a_model(self) -> GenerateConfig:
        if self.backend == "offline":
            used = {
                "strategy=two_step": self.strategy != "single",
                "knowledge_extraction=true": self.knowledge_extraction,
                f"thinking={self.thinking}": self.thinking != "default",
            }
            wrong = [name for name, on in used.items() if on]
            if wrong:
                raise ValueError(
                    f"generate.{', generate.'.join(wrong)} need a model: set generate.backend to openai or "
                    "transformers (the offline composer calls no model)"
                )
        return self
