"""Tiny random models built and saved locally, so loading-by-path code runs here without a model hub.

Random weights give meaningless similarities and text: tests built on them check plumbing (loading,
shapes, caching, averaging, prompt rendering, parsing), never quality.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

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


def _wordpiece_tokenizer(folder: Path, words: list[str], lowercase: bool = False) -> int:
    """A BertTokenizerFast over `words` (special tokens first), saved with its tokenizer.json; the vocabulary size."""
    from transformers import BertTokenizerFast

    folder.mkdir(parents=True, exist_ok=True)
    vocab = folder / "vocab.txt"
    vocab.write_text("\n".join(["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", *words]) + "\n")
    BertTokenizerFast(vocab_file=str(vocab), do_lower_case=lowercase).save_pretrained(folder)
    return len(words) + 5


def _bert_config(vocab_size: int, **overrides: Any) -> Any:
    from transformers import BertConfig

    shape = {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 64}
    return BertConfig(vocab_size=vocab_size, **(shape | overrides))


def build_cross_encoder(folder: Path, seed: int = 0) -> Path:
    """A random 2-layer BertForSequenceClassification (num_labels=1) with a WordPiece vocabulary:
    loads in sentence-transformers `CrossEncoder(dir)` and FlagEmbedding `FlagReranker(dir)`."""
    import torch
    from transformers import BertForSequenceClassification

    size = _wordpiece_tokenizer(folder, ["table", "figure", "model", "score", "the", "of", "a", "f1", "gain", "text"])
    torch.manual_seed(seed)
    BertForSequenceClassification(_bert_config(size, num_labels=1)).save_pretrained(folder)
    return folder


def build_sentence_bert(folder: Path, pooling: str, act: str = "gelu", max_seq_length: int = 48) -> Path:
    """A random 2-layer BERT with a WordPiece tokenizer, saved as a sentence-transformers folder
    (Transformer + Pooling modules). Large random weights, so that a wrong op shows in the vectors."""
    import torch
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Pooling, Transformer
    from transformers import BertModel

    torch.manual_seed(0)
    hf = folder.parent / f"{folder.name}-hf"
    letters = "abcdefghijklmnopqrstuvwxyz0123456789"
    words = [*letters, *(f"##{c}" for c in letters)]
    words += ["the", "of", "and", "to", "in", "retrieval", "passage", "question", "dense", "##s", "##ing"]
    size = _wordpiece_tokenizer(hf, words, lowercase=True)
    config = _bert_config(size, max_position_embeddings=64, hidden_act=act, initializer_range=0.5)
    BertModel(config).save_pretrained(hf)
    transformer = Transformer(str(hf), max_seq_length=max_seq_length)
    modules = [transformer, Pooling(transformer.get_embedding_dimension(), pooling_mode=pooling)]
    SentenceTransformer(modules=modules, device="cpu").save(str(folder))
    return folder


QWEN_VL_SPECIAL = [
    "<|endoftext|>",
    "<|im_start|>",
    "<|im_end|>",
    "<|vision_start|>",
    "<|vision_end|>",
    "<|image_pad|>",
    "<|video_pad|>",
]
QWEN_VL_CHAT_TEMPLATE = (
    "{% for message in messages %}<|im_start|>{{ message['role'] }}\n"
    "{% if message['content'] is string %}{{ message['content'] }}{% else %}{% for c in message['content'] %}"
    "{% if c['type'] == 'image' %}<|vision_start|><|image_pad|><|vision_end|>"
    "{% elif c['type'] == 'text' %}{{ c['text'] }}{% endif %}{% endfor %}{% endif %}<|im_end|>\n"
    "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)
# The LMM filter reads P(yes) from the logits of these answer words: each must be one token.
ANSWER_WORDS = ["yes", "no", "Yes", "No"]


def build_qwen2_5_vl(folder: Path, corpus_texts: list[str], seed: int = 0) -> Path:
    """A 2-layer Qwen2.5-VL (real config, model, image/video processor and processor classes, random
    weights) with a byte-level BPE tokenizer trained on `corpus_texts` that carries Qwen's special
    tokens, its chat template, and "yes" / "no" / "Yes" / "No" as single tokens; saved to `folder`,
    loadable by AutoProcessor / AutoModelForImageTextToText."""
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

    torch.manual_seed(seed)
    folder.mkdir(parents=True, exist_ok=True)
    bpe = Tokenizer(models.BPE())
    bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    bpe.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400, special_tokens=QWEN_VL_SPECIAL, initial_alphabet=pre_tokenizers.ByteLevel.alphabet()
    )
    # each answer word alone and often, so BPE merges it whole (as an answer's first word: no leading space)
    bpe.train_from_iterator([*corpus_texts, "user assistant system figure table chart", *ANSWER_WORDS * 200], trainer)
    for word in ANSWER_WORDS:
        assert len(bpe.encode(word).ids) == 1, f"tiny tokenizer split {word!r}"
    ids = {s: bpe.token_to_id(s) for s in QWEN_VL_SPECIAL}
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=bpe, eos_token="<|im_end|>", pad_token="<|endoftext|>")
    tokenizer.chat_template = QWEN_VL_CHAT_TEMPLATE
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
    # Random weights: keep them off the special tokens, so that generated tokens decode to text.
    model.generation_config.suppress_tokens = list(ids.values())
    model.save_pretrained(folder)
    processor = Qwen2_5_VLProcessor(
        image_processor=Qwen2VLImageProcessor(),
        tokenizer=tokenizer,
        video_processor=Qwen2VLVideoProcessor(),
        chat_template=QWEN_VL_CHAT_TEMPLATE,
    )
    processor.save_pretrained(folder)
    return folder


# Qwen3's switch: with enable_thinking false the template writes an empty reasoning block itself.
THINKING_CHAT_TEMPLATE = CHAT_TEMPLATE.replace(
    "<|im_start|>assistant\n{% endif %}",
    "<|im_start|>assistant\n{% if enable_thinking is defined and enable_thinking is false %}"
    "<think>\n\n</think>\n\n{% endif %}{% endif %}",
)


def build_thinking_lm(folder: Path, corpus: list[str], seed: int = 0) -> Path:
    """build_causal_lm with a Qwen3-style chat template that has the `enable_thinking` switch."""
    from transformers import AutoTokenizer

    build_causal_lm(folder, corpus, seed)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    tokenizer.chat_template = THINKING_CHAT_TEMPLATE
    tokenizer.save_pretrained(folder)
    return suppress_special_tokens(folder)


def suppress_special_tokens(folder: Path) -> Path:
    """Random weights: keep generation off the special tokens and the blank or control ones, so that
    generated tokens decode to visible text (and a sequence runs to max_new_tokens)."""
    from transformers import AutoTokenizer, GenerationConfig

    tokenizer = AutoTokenizer.from_pretrained(folder)
    generation = GenerationConfig.from_pretrained(folder)
    decoded = [tokenizer.decode([i]) for i in range(len(tokenizer))]
    blank = [i for i, text in enumerate(decoded) if not text.strip() or not text.isprintable()]
    generation.suppress_tokens = sorted(set(tokenizer.all_special_ids) | set(blank))
    generation.save_pretrained(folder)
    return folder
