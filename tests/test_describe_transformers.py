"""The transformers describer end to end on a tiny Qwen2.5-VL built here: real config class,
a BPE tokenizer carrying Qwen's special tokens and chat template, Qwen's image processor, random
weights; saved to a folder and loaded back through the backend by path, as a real model is."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from interleaf.describe.config import DescribeConfig, TransformersConfig
from interleaf.describe.protocol import DescribeRequest
from interleaf.describe.registry import get_describer
from interleaf.describe.transformers_describer import TransformersDescriber
from interleaf.prompts import load_prompt

os.environ["HF_HUB_OFFLINE"] = "1"
SPECIAL = [
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|vision_start|>",
    "<|vision_end|>",
    "<|image_pad|>",
    "<|video_pad|>",
]
CHAT_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}{% else %}{% for c in message['content'] %}"
    "{% if c['type'] == 'image' %}<|vision_start|><|image_pad|><|vision_end|>"
    "{% elif c['type'] == 'text' %}{{ c['text'] }}{% endif %}{% endfor %}{% endif %}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


@pytest.fixture(scope="module")
def tiny_qwen(tmp_path_factory: pytest.TempPathFactory) -> Path:
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import (
        PreTrainedTokenizerFast,
        Qwen2_5_VLConfig,
        Qwen2_5_VLForConditionalGeneration,
        Qwen2_5_VLProcessor,
        Qwen2VLImageProcessor,
        Qwen2VLVideoProcessor,
    )

    torch.manual_seed(0)
    folder = tmp_path_factory.mktemp("tiny-qwen25vl")
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400, special_tokens=SPECIAL, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    bpe.train_from_iterator([load_prompt("describe_image").text, "user assistant system figure table chart"], trainer)
    ids = {s: bpe.token_to_id(s) for s in SPECIAL}
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=bpe, eos_token="<|im_end|>", pad_token="<|endoftext|>")
    tokenizer.chat_template = CHAT_TEMPLATE
    config = Qwen2_5_VLConfig(
        text_config={
            "vocab_size": bpe.get_vocab_size(),
            "hidden_size": 64,
            "intermediate_size": 128,
            "num_hidden_layers": 2,
            "num_attention_heads": 4,
            "num_key_value_heads": 2,
            "max_position_embeddings": 4096,
            # transformers 5 names it rope_parameters; mrope sections sum to head_dim / 2 = 8
            "rope_parameters": {"rope_type": "default", "rope_theta": 10000.0, "mrope_section": [2, 3, 3]},
        },
        vision_config={
            "depth": 2,
            "hidden_size": 64,
            "intermediate_size": 128,
            "num_heads": 4,
            "out_hidden_size": 64,
            "fullatt_block_indexes": [1],
            "window_size": 112,
            "patch_size": 14,
            "spatial_merge_size": 2,
            "temporal_patch_size": 2,
        },
        image_token_id=ids["<|image_pad|>"],
        video_token_id=ids["<|video_pad|>"],
        vision_start_token_id=ids["<|vision_start|>"],
        vision_end_token_id=ids["<|vision_end|>"],
        eos_token_id=ids["<|im_end|>"],
        pad_token_id=ids["<|endoftext|>"],
    )
    model = Qwen2_5_VLForConditionalGeneration(config)
    model.generation_config.eos_token_id = ids["<|im_end|>"]
    model.generation_config.pad_token_id = ids["<|endoftext|>"]
    # Random weights: keep them off the special tokens, so that the 8 generated tokens decode to text.
    model.generation_config.suppress_tokens = list(ids.values())
    model.save_pretrained(folder)
    processor = Qwen2_5_VLProcessor(
        image_processor=Qwen2VLImageProcessor(),
        tokenizer=tokenizer,
        video_processor=Qwen2VLVideoProcessor(),
        chat_template=CHAT_TEMPLATE,
    )
    processor.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def crops(corpus: Path) -> list[bytes]:
    import pymupdf

    with pymupdf.open(corpus / "docs" / "corrosion-plot-table.pdf") as doc:
        page = doc[0]
        return [page.get_pixmap(dpi=20).tobytes("png"), page.get_pixmap(dpi=30, clip=page.rect / 2).tobytes("png")]


def test_tiny_qwen25vl_describes_in_batches(tiny_qwen: Path, crops: list[bytes]) -> None:
    assert json.loads((tiny_qwen / "config.json").read_text())["model_type"] == "qwen2_5_vl"
    settings = DescribeConfig(
        describer="transformers",
        transformers=TransformersConfig(
            model=str(tiny_qwen), batch_size=2, max_new_tokens=8, min_pixels=28 * 28 * 4, max_pixels=28 * 28 * 16
        ),
    )
    describer = get_describer(settings)  # chosen by config alone, loaded by path
    assert isinstance(describer, TransformersDescriber)
    assert describer.prompt_hash == load_prompt("describe_image").hash and describer.model == str(tiny_qwen)
    requests = [
        DescribeRequest(f"q{i}", "figure", i, crops[i % 2], f"Figure {i}") for i in range(3)
    ]  # batches of 2 + 1
    out = describer.describe(requests)
    assert len(out) == 3
    assert all(d.error is None and d.text and d.sources == ("image",) for d in out), out
    processor, _model = describer._load()
    # the chat template put the image placeholder and the rendered prompt in the model's input
    text = processor.apply_chat_template(describer.messages(requests[0]), tokenize=False, add_generation_prompt=True)
    assert "<|vision_start|><|image_pad|><|vision_end|>" in text and "Figure 0" in text
    assert text.endswith("<|im_start|>assistant\n")
    # greedy decoding: the same crop and prompt give the same text, in a batch or alone
    assert describer.describe(requests[:1])[0].text == out[0].text


def test_ingest_uses_the_tiny_qwen_by_config_alone(tiny_qwen: Path, tmp_path: Path, corpus: Path) -> None:
    """`describer: transformers` and a model folder in config, no code change: VLM-text in the warehouse."""
    from tests.conftest import run_cli, sql_rows

    root = tmp_path / "warehouse"
    overrides = {
        "describe.describer": "transformers",
        "describe.transformers.model": str(tiny_qwen),
        "describe.transformers.max_new_tokens": 8,
        "describe.transformers.min_pixels": 28 * 28 * 4,
        "describe.transformers.max_pixels": 28 * 28 * 16,
    }
    args = [a for key, value in overrides.items() for a in ("--set", f"{key}={value}")]
    run_cli(root, *args, "ingest", str(corpus / "docs" / "figures-example.pdf"))
    rows = sql_rows(root, "select describer, model, vlm_text from quote_texts")
    image_quotes = sql_rows(root, "select count(*) n from quotes where kind in ('figure', 'table', 'equation')")
    assert len(rows) == image_quotes[0]["n"] > 0
    assert all(r["describer"] == "transformers" and r["model"] == str(tiny_qwen) and r["vlm_text"] for r in rows)
