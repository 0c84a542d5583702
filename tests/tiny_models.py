"""Tiny random models built and saved locally, so loading-by-path code runs here without a model hub.

Random weights give meaningless similarities and text: tests built on them check plumbing (loading,
shapes, caching, averaging, prompt rendering, parsing), never quality.
"""

from __future__ import annotations

from pathlib import Path

WORDS = [
    "the figure table chart model score recall accuracy document page report value percent year",
    "what which how many revenue growth search query queries question",
]


def _bpe_vocab() -> tuple[dict[str, int], list[str]]:
    """A CLIP-style byte-level BPE vocabulary: every byte symbol, alone and word-final, no merges."""
    from transformers.convert_slow_tokenizer import bytes_to_unicode

    symbols = list(bytes_to_unicode().values())
    vocab = {s: i for i, s in enumerate(symbols + [s + "</w>" for s in symbols])}
    vocab["<|startoftext|>"] = len(vocab)
    vocab["<|endoftext|>"] = len(vocab)
    return vocab, []


def build_clip(folder: Path, kind: str = "clip", projection: int = 16, seed: int = 0) -> Path:
    """A 1-layer CLIP (or SigLIP) with a 32-px vision tower, loadable by AutoModel/AutoProcessor."""
    import torch
    from transformers import CLIPTokenizer

    folder.mkdir(parents=True, exist_ok=True)
    vocab, merges = _bpe_vocab()
    max_len = 16  # SigLIP pads to max_length: the tokenizer and position table must agree
    tokenizer = CLIPTokenizer(vocab=vocab, merges=merges, model_max_length=max_len)
    text = {
        "vocab_size": len(tokenizer),
        "hidden_size": 32,
        "intermediate_size": 64,
        "num_hidden_layers": 1,
        "num_attention_heads": 2,
        "max_position_embeddings": max_len,
        "bos_token_id": tokenizer.bos_token_id,
        "eos_token_id": tokenizer.eos_token_id,
        "pad_token_id": tokenizer.pad_token_id,
    }
    vision = {
        "hidden_size": 32,
        "intermediate_size": 64,
        "num_hidden_layers": 1,
        "num_attention_heads": 2,
        "image_size": 32,
        "patch_size": 8,
    }
    torch.manual_seed(seed)
    if kind == "clip":
        from transformers import CLIPConfig, CLIPImageProcessor, CLIPModel, CLIPProcessor

        model = CLIPModel(CLIPConfig(text_config=text, vision_config=vision, projection_dim=projection))
        size = {"shortest_edge": 32}
        processor = CLIPProcessor(CLIPImageProcessor(size=size, crop_size={"height": 32, "width": 32}), tokenizer)
    else:
        from transformers import SiglipConfig, SiglipImageProcessor, SiglipModel, SiglipProcessor

        # SigLIP has no image projection: its text head maps onto the vision width
        text["projection_size"] = vision["hidden_size"]
        model = SiglipModel(SiglipConfig(text_config=text, vision_config=vision))
        processor = SiglipProcessor(SiglipImageProcessor(size={"height": 32, "width": 32}), tokenizer)
    model.save_pretrained(folder)
    processor.save_pretrained(folder)
    return folder


CHAT_TEMPLATE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def build_causal_lm(folder: Path, corpus: list[str], seed: int = 0) -> Path:
    """A 2-layer Qwen2 with a BPE tokenizer trained on `corpus` and a ChatML template."""
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM

    folder.mkdir(parents=True, exist_ok=True)
    bpe = Tokenizer(models.BPE(unk_token="<unk>"))
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    special = ["<unk>", "<|endoftext|>", "<|im_start|>", "<|im_end|>"]
    trainer = trainers.BpeTrainer(
        vocab_size=400, special_tokens=special, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    bpe.train_from_iterator(corpus + WORDS, trainer)
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=bpe,
        unk_token="<unk>",
        eos_token="<|im_end|>",
        pad_token="<|endoftext|>",
        additional_special_tokens=["<|im_start|>"],
    )
    tokenizer.chat_template = CHAT_TEMPLATE
    tokenizer.add_tokens(["yes", "no"])  # Qwen3-Reranker reads P("yes") against P("no") at the last position
    tokenizer.save_pretrained(folder)
    torch.manual_seed(seed)
    config = Qwen2Config(
        vocab_size=len(tokenizer),
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=2,
        num_key_value_heads=1,
        max_position_embeddings=512,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        bos_token_id=None,
        tie_word_embeddings=True,
    )
    Qwen2ForCausalLM(config).save_pretrained(folder)
    return folder
