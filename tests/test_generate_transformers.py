"""The transformers generator end to end on tiny models built here (tests/tiny_models.py): a 2-layer
Qwen2.5-VL (real classes, random weights) for multimodal input, a 2-layer Qwen2 text LLM for pure-text
input, and one with a Qwen3-style thinking switch; each saved to a folder and loaded back by path.
Random weights: these check plumbing (inputs, batching, token counts, dtype, refusals), not quality."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from interleaf.errors import ConfigError
from interleaf.generate.config import GenerateConfig, GenerateTransformersConfig
from interleaf.generate.prompting import answer_conversation
from interleaf.generate.protocol import AnswerRequest, ChatRequest, ContextQuote
from interleaf.generate.registry import get_chat_model, get_generator
from interleaf.generate.transformers_generator import TransformersChat, TransformersGenerator
from interleaf.prompts import load_prompt
from tests.test_generate_openai import QUESTION, corpus_context
from tests.tiny_models import build_causal_lm, build_qwen2_5_vl, build_thinking_lm, suppress_special_tokens

SMALL = {"min_pixels": 28 * 28 * 4, "max_pixels": 28 * 28 * 16, "max_new_tokens": 8}
PROMPTS = ["answer_text", "answer_multimodal", "answer_merge", "knowledge_extraction"]


@pytest.fixture(scope="module")
def context(corpus: Path) -> tuple[list[ContextQuote], dict[str, bytes]]:
    quotes, crops = corpus_context(corpus)
    # short quotes keep the tiny models' prompts short; the layout is what is checked
    return [ContextQuote(**{**q.__dict__, "text": q.text[:160]}) for q in quotes], crops


@pytest.fixture(scope="module")
def texts(context) -> list[str]:
    return [load_prompt(n).text for n in PROMPTS] + [q.text for q in context[0]] + [QUESTION]


@pytest.fixture(scope="module")
def tiny_qwen(tmp_path_factory: pytest.TempPathFactory, texts: list[str]) -> Path:
    return build_qwen2_5_vl(tmp_path_factory.mktemp("tiny-qwen25vl-gen"), texts)


@pytest.fixture(scope="module")
def tiny_lm(tmp_path_factory: pytest.TempPathFactory, texts: list[str]) -> Path:
    return suppress_special_tokens(build_causal_lm(tmp_path_factory.mktemp("tiny-lm-gen"), texts))


def config(model: Path, **options: object) -> GenerateConfig:
    settings = {k: options.pop(k) for k in ("batch_size", "dtype", "max_new_tokens") if k in options}
    return GenerateConfig(
        backend="transformers",
        transformers=GenerateTransformersConfig(model=str(model), **{**SMALL, **settings}),
        **options,
    )


def requests(quotes: list[ContextQuote], n: int) -> list[AnswerRequest]:
    # different questions, so different lengths: the batch is padded
    return [AnswerRequest(f"q{i}", QUESTION[: 60 + 25 * i], tuple(quotes)) for i in range(n)]


def test_tiny_qwen25vl_answers_multimodal_in_batches(tiny_qwen: Path, context) -> None:
    import torch

    assert json.loads((tiny_qwen / "config.json").read_text())["model_type"] == "qwen2_5_vl"
    quotes, crops = context
    generator = get_generator(config(tiny_qwen, input_mode="multimodal", batch_size=2))  # by config alone
    assert isinstance(generator, TransformersGenerator) and generator.model == str(tiny_qwen)
    batch = requests(quotes, 3)  # batches of 2 + 1
    out = generator.generate(batch, crops.__getitem__)
    assert [a.error for a in out] == [None] * 3, out
    assert all(isinstance(a.markdown, str) and a.markdown for a in out)
    assert all(
        a.input_mode == "multimodal" and a.prompt_hashes == (load_prompt("answer_multimodal").hash,) for a in out
    )
    # the tiny model never ends a sequence (its special tokens are suppressed): 8 new tokens each
    assert [a.tokens_out for a in out] == [8, 8, 8]
    # tokens in: the request's own input length, padding excluded, counted apart from the generator
    backend = generator.backend
    assert isinstance(backend, TransformersChat) and backend.vl is not None
    for request, answer in zip(batch, out, strict=True):
        messages = backend.messages(
            answer_conversation(request.question, request.quotes, "multimodal", crops.__getitem__)
        )
        alone = backend.vl.inputs([messages])
        assert answer.tokens_in == alone["input_ids"].shape[1]
        assert alone["image_grid_thw"].shape[0] == 2  # both crops reached the model
    processor, model = backend.vl.load()
    text = processor.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
    assert "Image Quotes are:\n- image1 is <|vision_start|><|image_pad|><|vision_end|>\n- image2 is " in text
    assert text.startswith("<|im_start|>system\n" + load_prompt("answer_multimodal").render())
    assert next(model.parameters()).device.type == "cpu" and next(model.parameters()).dtype == torch.float32
    # greedy decoding: the same answers one by one as in a padded batch
    assert [generator.generate([r], crops.__getitem__)[0].markdown for r in batch] == [a.markdown for a in out]


def test_dtype_is_honoured(tiny_qwen: Path, context) -> None:
    import torch

    quotes, crops = context
    generator = get_generator(config(tiny_qwen, input_mode="text", dtype="bfloat16", max_new_tokens=3))
    (answer,) = generator.generate(requests(quotes, 1), crops.__getitem__)
    assert answer.error is None and answer.tokens_out == 3 and answer.input_mode == "text"
    _processor, model = generator.backend.vl.load()
    assert next(model.parameters()).dtype == torch.bfloat16


def test_two_step_and_knowledge_extraction_run_through_the_tiny_vlm(tiny_qwen: Path, context) -> None:
    quotes, crops = context
    generator = get_generator(
        config(tiny_qwen, input_mode="multimodal", strategy="two_step", knowledge_extraction=True, max_new_tokens=4)
    )
    (answer,) = generator.generate(requests(quotes, 1), crops.__getitem__)
    assert answer.error is None and answer.markdown
    # 2 extractions + text step + image step + merge, 4 new tokens each
    assert answer.tokens_out == 5 * 4
    names = ["knowledge_extraction", "answer_text", "answer_merge"]
    assert answer.prompt_hashes == tuple(load_prompt(n).hash for n in names)


def test_chat_model_shares_the_loaded_model(tiny_qwen: Path, context) -> None:
    quotes, crops = context
    settings = config(tiny_qwen, batch_size=2)
    generator, chat = get_generator(settings), get_chat_model(settings)
    assert chat is not None and chat.backend is generator.backend  # loaded once
    png = crops[quotes[3].img_path]
    out = chat.complete([ChatRequest("Rate it.", system="You judge.", images=(png,)), ChatRequest("Hi", max_tokens=2)])
    assert [r.error for r in out] == [None, None] and all(r.text for r in out)
    assert out[1].tokens_out == 2 and out[0].tokens_out == 8


def test_text_llm_answers_pure_text_and_refuses_images(tiny_lm: Path, context) -> None:
    quotes, crops = context
    (answer,) = get_generator(config(tiny_lm)).generate(requests(quotes, 1), crops.__getitem__)
    assert answer.error is None and answer.markdown and answer.tokens_in > 100
    with pytest.raises(ConfigError, match="text-only model"):
        get_generator(config(tiny_lm, input_mode="multimodal")).generate(requests(quotes, 1), crops.__getitem__)
    with pytest.raises(ConfigError, match="text-only model"):
        get_chat_model(config(tiny_lm)).complete([ChatRequest("Look", images=(crops[quotes[3].img_path],))])


def test_streaming_shows_what_the_answer_holds(tiny_lm: Path, context) -> None:
    quotes, crops = context
    shown: list[str] = []
    generator = get_generator(config(tiny_lm, batch_size=4), on_token=shown.append)
    (answer,) = generator.generate(requests(quotes, 1), crops.__getitem__)
    assert shown and "".join(shown).strip() == answer.markdown


def test_thinking_switch(tmp_path: Path, tiny_qwen: Path, texts: list[str], context) -> None:
    quotes, crops = context
    thinking_lm = build_thinking_lm(tmp_path / "thinking-lm", texts)
    backend = get_generator(config(thinking_lm, thinking="off")).backend
    tokenizer, _model = backend.load()
    rendered = tokenizer.decode(backend._inputs([[{"role": "user", "content": "Hi"}]])["input_ids"][0])
    assert rendered.endswith("<|im_start|>assistant\n<think>\n\n</think>\n\n")  # Qwen3's "off"
    (answer,) = get_generator(config(thinking_lm, thinking="on")).generate(requests(quotes, 1), crops.__getitem__)
    assert answer.error is None
    # a template with no switch: the option is refused, not ignored
    with pytest.raises(ConfigError, match="no thinking switch"):
        get_generator(config(tiny_qwen, thinking="off")).generate(requests(quotes, 1), crops.__getitem__)
