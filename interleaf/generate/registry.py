"""Generators and chat models by name, as chosen in config (`generate.backend`)."""

from __future__ import annotations

from collections.abc import Callable

from interleaf.generate.config import GenerateConfig
from interleaf.generate.protocol import ChatModel, Generator


def get_generator(config: GenerateConfig, on_token: Callable[[str], None] | None = None) -> Generator:
    """`on_token` streams each answer's final call to the caller (`interleaf ask`); the offline
    composer answers at once and does not stream."""
    if config.backend == "offline":
        from interleaf.generate.offline import OfflineGenerator

        return OfflineGenerator(config.offline)
    if config.backend == "openai":
        from interleaf.generate.openai_generator import OpenAIGenerator

        return OpenAIGenerator(config, on_token)
    if config.backend == "transformers":
        from interleaf.generate.transformers_generator import TransformersGenerator

        return TransformersGenerator(config, on_token)
    raise ValueError(f"unknown generate backend {config.backend!r}")


def get_chat_model(config: GenerateConfig) -> ChatModel | None:
    """The configured model for free-form prompts (judges, merges); None for `offline`, which has no
    model. A transformers model is loaded once and shared with the generator."""
    if config.backend == "offline":
        return None
    if config.backend == "openai":
        from interleaf.generate.openai_generator import OpenAIGenerator

        return OpenAIGenerator(config)
    if config.backend == "transformers":
        from interleaf.generate.transformers_generator import TransformersGenerator

        return TransformersGenerator(config)
    raise ValueError(f"unknown generate backend {config.backend!r}")
