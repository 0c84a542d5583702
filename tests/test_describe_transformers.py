"""The transformers describer end to end on a tiny Qwen2.5-VL (tests/tiny_models.py): real config class,
a BPE tokenizer carrying Qwen's special tokens and chat template, Qwen's image processor, random
weights; saved to a folder and loaded back through the backend by path, as a real model is."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pymupdf
import pytest

from interleaf.describe.config import DescribeConfig, TransformersConfig
from interleaf.describe.protocol import DescribeRequest
from interleaf.describe.registry import get_describer
from interleaf.describe.transformers_describer import TransformersDescriber
from interleaf.errors import StageError
from interleaf.prompts import load_prompt
from tests.tiny_models import build_qwen2_5_vl

os.environ["HF_HUB_OFFLINE"] = "1"


@pytest.fixture(scope="module")
def tiny_qwen(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_qwen2_5_vl(tmp_path_factory.mktemp("tiny-qwen25vl"), [load_prompt("describe_image").text])


@pytest.fixture(scope="module")
def crops(corpus: Path) -> list[bytes]:
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
    processor, _model = describer.vl.load()
    # the chat template put the image placeholder and the rendered prompt in the model's input
    text = processor.apply_chat_template(describer.messages(requests[0]), tokenize=False, add_generation_prompt=True)
    assert "<|vision_start|><|image_pad|><|vision_end|>" in text and "Figure 0" in text
    assert text.endswith("<|im_start|>assistant\n")
    # greedy decoding: the same crop and prompt give the same text, in a batch or alone
    assert describer.describe(requests[:1])[0].text == out[0].text


def test_a_bad_crop_fails_alone_and_a_bug_fails_loudly(tiny_qwen: Path, crops: list[bytes]) -> None:
    config = TransformersConfig(
        model=str(tiny_qwen), batch_size=3, max_new_tokens=4, min_pixels=28 * 28 * 4, max_pixels=28 * 28 * 16
    )
    describer = TransformersDescriber(config, load_prompt("describe_image"))
    strip = pymupdf.Pixmap(pymupdf.csRGB, pymupdf.IRect(0, 0, 420, 2), False)  # 210:1, beyond Qwen's 200:1
    strip.clear_with(255)
    requests = [
        DescribeRequest("good", "figure", 0, crops[0]),
        DescribeRequest("not-an-image", "figure", 0, b"<html>not a png</html>"),
        DescribeRequest("strip", "figure", 0, strip.tobytes("png")),
    ]
    good, unreadable, thin = describer.describe(requests)
    assert good.error is None and good.text  # in the same batch as the two bad crops
    assert unreadable.text is None and unreadable.error.startswith("unreadable image")
    assert thin.text is None and "420 x 2 px" in thin.error

    def broken(batch: object) -> list[str]:
        raise TypeError("a bug in the describer")

    describer._generate = broken  # type: ignore[method-assign]
    with pytest.raises(StageError, match=r"vlm failed on good: TypeError: a bug in the describer"):
        describer.describe(requests[:1])


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
