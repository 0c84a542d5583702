"""The LMM filter on Qwen2.5-VL through transformers (dochaystack-vrag §4 LMM-filter module), scored.

V-RAG asks "Can this image provide answers to this question? Respond only with yes or no" and keeps
the pairs answered yes. Instead of generating and parsing an answer, one forward pass reads the
next-token logits after the assistant prompt: P(yes) = softmax over the answer tokens' logits, summed
over the yes spellings. A probability keeps the decision tunable (`threshold`), is stored with each
verdict, and costs no decoding loop and no parsing of free text.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from interleaf.prompts import Prompt
from interleaf.retrieve.protocol import FilterRequest, Verdict
from interleaf.vlm.config import QwenVLConfig
from interleaf.vlm.qwen_vl import ImageError, QwenVL

# Both spellings, because the answer's first token comes right after "<|im_start|>assistant\n" and
# an instruct model writes "Yes" / "No" there as often as the prompt's lower-case "yes" / "no": a
# read-out on one spelling misses the probability mass on the other. Qwen's byte-level BPE has each
# of the four as one token; forms with a leading space ("Ġyes") do not start an answer.
YES_WORDS = ("yes", "Yes")
NO_WORDS = ("no", "No")


def single_token_ids(tokenizer: Any, words: tuple[str, ...]) -> list[int]:
    """The ids of the words that are one token each (a word split in pieces has no single next token)."""
    ids: list[int] = []
    for word in words:
        encoded = tokenizer.encode(word, add_special_tokens=False)
        if len(encoded) == 1 and encoded[0] not in ids:
            ids.append(int(encoded[0]))
    return ids


class TransformersImageFilter:
    name = "transformers"

    def __init__(self, config: QwenVLConfig, prompt: Prompt, threshold: float) -> None:
        self.config = config
        self.prompt = prompt
        self.threshold = threshold
        self.model: str | None = config.model
        self.prompt_hash: str = prompt.hash
        self.vl = QwenVL(config)
        self._answer_ids: tuple[list[int], list[int]] | None = None

    def answer_ids(self) -> tuple[list[int], list[int]]:
        """(yes ids, no ids). A tokenizer with neither spelling as one token cannot be read this way:
        that is a configuration error, raised rather than turned into per-image failures."""
        if self._answer_ids is None:
            processor, _model = self.vl.load()
            yes, no = single_token_ids(processor.tokenizer, YES_WORDS), single_token_ids(processor.tokenizer, NO_WORDS)
            if not yes or not no:
                raise ValueError(f"{self.config.model}: the tokenizer has no single-token yes/no answer to read")
            self._answer_ids = (yes, no)
        return self._answer_ids

    def p_yes(self, conversations: list[list[dict[str, Any]]]) -> list[float]:
        """P(yes) per conversation, for one batch; left padding makes each row's last position its own."""
        import torch

        _processor, model = self.vl.load()
        yes, no = self.answer_ids()
        inputs = self.vl.inputs(conversations)
        with torch.inference_mode():
            # logits of the last position only: the full (batch, length, vocab) tensor is ~0.6 GB per
            # image for Qwen2.5-VL's 152k vocabulary at a thousand tokens
            logits = model(**inputs, logits_to_keep=1).logits[:, -1, :].float()
        answers = torch.softmax(torch.cat([logits[:, yes], logits[:, no]], dim=1), dim=1)
        return [float(p) for p in answers[:, : len(yes)].sum(dim=1).tolist()]

    def judge(self, question: str, images: list[FilterRequest]) -> list[Verdict]:
        if not images:
            return []
        with self.vl.lock:  # load and check the tokenizer first: a bad model path or tokenizer fails loudly
            self.answer_ids()
        text = self.prompt.render(question=question)
        verdicts: list[Verdict | None] = [None] * len(images)
        ready = []
        for i, request in enumerate(images):
            try:
                ready.append((i, (request, self.vl.messages(request.png, text))))
            except ImageError as exc:  # this crop alone stays unjudged
                verdicts[i] = Verdict(request.quote_id, None, None, str(exc))

        def scores(batch: Sequence[tuple[FilterRequest, list[dict[str, Any]]]]) -> list[float]:
            return self.p_yes([conversation for _, conversation in batch])

        items = [item for _, item in ready]
        results = self.vl.run_batches(items, self.config.batch_size, scores, lambda item: item[0].quote_id)
        for (i, (request, _)), p in zip(ready, results, strict=True):
            if isinstance(p, Exception):  # out of memory: these candidates stay unjudged
                verdicts[i] = Verdict(request.quote_id, None, None, f"{type(p).__name__}: {p}")
            else:
                verdicts[i] = Verdict(request.quote_id, p >= self.threshold, p)
        return [v for v in verdicts if v is not None]
