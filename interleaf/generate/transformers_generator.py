"""Answers from a model in process through transformers, batched, greedy.

Two kinds of model, told apart by the model's config.json: a VLM (a `vision_config`: Qwen2.5-VL, any
size) loaded as in the describer (`interleaf.vlm.qwen_vl`: AutoProcessor, AutoModelForImageTextToText,
`qwen_vl_utils.process_vision_info`), which takes text and multimodal input; and a text LLM
(AutoModelForCausalLM with its tokenizer's chat template), which takes pure-text input only —
`input_mode: multimodal` with one is refused. Batches are left-padded, so batched greedy answers are
the answers one by one. `thinking: on|off` goes to the chat template as `enable_thinking` and is
refused for a template that has no such switch. Streaming (`on_token`) decodes batches of one.
"""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Sequence
from typing import Any

from interleaf.errors import ConfigError
from interleaf.generate.config import GenerateConfig, GenerateTransformersConfig
from interleaf.generate.prompting import Conversation
from interleaf.generate.protocol import InputMode
from interleaf.generate.strategies import Completion, ModelGenerator, TokenCallback, refuse_images
from interleaf.vlm.qwen_vl import QwenVL, run_batches

# what can fail inside one batch and stay that batch's error: out of memory (RuntimeError), a crop
# PIL cannot decode (OSError), a sequence longer than the model takes (ValueError)
BATCH_ERRORS = (RuntimeError, ValueError, OSError)


class TransformersChat:
    """The backend the strategies call; one model, loaded on first use, one batch at a time."""

    name = "transformers"

    def __init__(self, settings: GenerateTransformersConfig, thinking: str = "default") -> None:
        self.settings = settings
        self.thinking = thinking
        self.model = settings.model
        self.lock = threading.Lock()
        self.vl: QwenVL | None = None
        self._lm: tuple[Any, Any] | None = None  # text LLM: (tokenizer, model)
        self._is_vlm: bool | None = None

    # -- loading ---------------------------------------------------------------------------------

    @property
    def is_vlm(self) -> bool:
        if self._is_vlm is None:
            from transformers import AutoConfig

            try:
                config = AutoConfig.from_pretrained(self.settings.model)
            except OSError as exc:
                raise ConfigError(
                    f"generate.transformers.model {self.settings.model!r} cannot be loaded: {exc}"
                ) from exc
            self._is_vlm = getattr(config, "vision_config", None) is not None
        return self._is_vlm

    def load(self) -> tuple[Any, Any]:
        """(tokenizer, model); the VLM's tokenizer is its processor's."""
        if self.is_vlm:
            if self.vl is None:
                self.vl = QwenVL(self.settings)
            processor, model = self.vl.load()
            tokenizer = processor.tokenizer
            template = getattr(processor, "chat_template", None) or tokenizer.chat_template
        else:
            if self._lm is None:
                self._lm = self._load_lm()
            tokenizer, model = self._lm
            template = tokenizer.chat_template
        if self.thinking != "default" and "enable_thinking" not in (template or ""):
            raise ConfigError(
                f"generate.thinking={self.thinking}: the chat template of {self.model} has no thinking switch "
                "(enable_thinking); set generate.thinking=default"
            )
        return tokenizer, model

    def _load_lm(self) -> tuple[Any, Any]:
        import torch
        from transformers import AutoModelForCausalLM, AutoTokenizer

        s = self.settings
        tokenizer = AutoTokenizer.from_pretrained(s.model)
        if not tokenizer.chat_template:
            raise ConfigError(f"generate.transformers.model {s.model!r} has no chat template: use an instruct model")
        tokenizer.padding_side = "left"  # each row's last position is its own last prompt token
        if tokenizer.pad_token is None:
            tokenizer.pad_token = tokenizer.eos_token
        dtype = "auto" if s.dtype == "auto" else getattr(torch, s.dtype)
        model = AutoModelForCausalLM.from_pretrained(s.model, dtype=dtype)
        model.to(s.device).eval()
        return tokenizer, model

    def check_input(self, input_mode: InputMode) -> None:
        if input_mode == "multimodal" and not self.is_vlm:
            raise refuse_images(self.model, "is a text-only model (its config.json has no vision_config)")

    def version(self) -> dict[str, str]:
        import torch
        import transformers

        return {
            "backend": "transformers",
            "model": self.model,
            "transformers": transformers.__version__,
            "torch": torch.__version__,
            "dtype": self.settings.dtype,
            "thinking": self.thinking,
        }

    # -- generation ------------------------------------------------------------------------------

    def _template_kwargs(self) -> dict[str, Any]:
        return {} if self.thinking == "default" else {"enable_thinking": self.thinking == "on"}

    def messages(self, conversation: Conversation) -> list[dict[str, Any]]:
        """The conversation in the chat template's shape: VLMs take content parts, text LLMs strings."""
        if not self.is_vlm:
            if any(m.images for m in conversation):
                raise refuse_images(self.model, "is a text-only model")
            return [{"role": m.role, "content": m.text} for m in conversation]
        assert self.vl is not None  # loaded by chat()
        out = []
        for m in conversation:
            parts = [self.vl.image_part(p) if isinstance(p, bytes) else {"type": "text", "text": p} for p in m.content]
            out.append({"role": m.role, "content": m.text if m.role == "system" else parts})
        return out

    def _inputs(self, batch: Sequence[list[dict[str, Any]]]) -> Any:
        if self.vl is not None:  # a VLM, loaded
            return self.vl.inputs(list(batch), **self._template_kwargs())
        tokenizer, model = self.load()
        texts = [
            tokenizer.apply_chat_template(m, tokenize=False, add_generation_prompt=True, **self._template_kwargs())
            for m in batch
        ]
        # the template already wrote the special tokens
        return tokenizer(texts, return_tensors="pt", padding=True, add_special_tokens=False).to(model.device)

    def _generate(
        self, batch: Sequence[list[dict[str, Any]]], max_tokens: int, on_token: TokenCallback | None
    ) -> list[Completion]:
        import torch

        tokenizer, model = self.load()
        started = time.perf_counter()
        inputs = self._inputs(batch)
        streamer = _streamer(tokenizer, on_token) if on_token else None
        with torch.inference_mode():
            out = model.generate(**inputs, max_new_tokens=max_tokens, do_sample=False, streamer=streamer)
        new_tokens = out[:, inputs["input_ids"].shape[1] :]
        texts = tokenizer.batch_decode(new_tokens, skip_special_tokens=True, clean_up_tokenization_spaces=False)
        seconds = (time.perf_counter() - started) / len(batch)  # the batch's time, shared by its items
        tokens_in = inputs["attention_mask"].sum(dim=1).tolist()
        stops = _stop_ids(model)
        return [
            Completion(text, None, int(n_in), _generated(row.tolist(), stops), seconds)
            for text, n_in, row in zip(texts, tokens_in, new_tokens, strict=True)
        ]

    def chat(
        self,
        conversations: Sequence[Conversation],
        max_tokens: int | None = None,
        on_token: TokenCallback | None = None,
    ) -> list[Completion]:
        if not conversations:
            return []
        self.load()  # a missing model or a refused option fails the call, not each answer
        max_tokens = max_tokens or self.settings.max_new_tokens
        ready: list[tuple[int, list[dict[str, Any]]]] = []
        out: list[Completion | None] = [None] * len(conversations)
        for i, conversation in enumerate(conversations):
            try:
                ready.append((i, self.messages(conversation)))
            except OSError as exc:  # a crop PIL cannot decode
                out[i] = Completion(None, f"unreadable image: {exc}")
        size = 1 if on_token else self.settings.batch_size  # streamers take one sequence
        results = run_batches(
            self.lock, [m for _, m in ready], size, lambda b: self._generate(b, max_tokens, on_token), BATCH_ERRORS
        )
        for (i, _), result in zip(ready, results, strict=True):
            out[i] = Completion(None, f"{type(result).__name__}: {result}") if isinstance(result, Exception) else result
        assert all(c is not None for c in out)
        return out  # type: ignore[return-value]


def _stop_ids(model: Any) -> set[int]:
    config = model.generation_config
    eos = config.eos_token_id
    ids = set(eos if isinstance(eos, list) else [eos] if eos is not None else [])
    return ids | ({config.pad_token_id} if config.pad_token_id is not None else set())


def _generated(row: list[int], stops: set[int]) -> int:
    """Tokens the model produced: up to and including its end-of-sequence token (then only padding)."""
    for i, token in enumerate(row):
        if token in stops:
            return i + 1
    return len(row)


def _streamer(tokenizer: Any, on_token: TokenCallback) -> Any:
    """transformers' TextStreamer, handing each finished piece of text to `on_token` instead of print."""
    from transformers import TextStreamer

    class Streamer(TextStreamer):
        def on_finalized_text(self, text: str, stream_end: bool = False) -> None:
            if text:
                on_token(text)

    return Streamer(tokenizer, skip_prompt=True, skip_special_tokens=True)


@functools.cache
def shared_backend(settings: GenerateTransformersConfig, thinking: str) -> TransformersChat:
    """One loaded model per settings: the generator and the chat model (judges, merge) share it."""
    return TransformersChat(settings, thinking)


class TransformersGenerator(ModelGenerator):
    """Generator and ChatModel over a model in process."""

    def __init__(self, config: GenerateConfig, on_token: TokenCallback | None = None) -> None:
        super().__init__(config, shared_backend(config.transformers, config.thinking), on_token)
