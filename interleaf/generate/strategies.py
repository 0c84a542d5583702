"""How a model backend turns a retrieved context into an answer: the strategies, shared by every
backend that calls a model (openai, transformers).

- single: one call over the whole context (MMDocRAG Appendix C.1).
- two_step: RefLVQA §5.2's Two-step MultiRAG. One answer from the text quotes alone (pure text),
  one from the image quotes alone (as crops or as text, per input_mode), then a third call merges
  them (RefLVQA Table 17). Text and image quotes are numbered apart, so both answers' citations
  keep their numbers through the merge. A context with one modality only needs no merge.
- knowledge_extraction: MAVIS §5.2. Before answering, each image quote is turned into plain facts
  without the question (the crop in multimodal mode, its VLM-text in text mode); the answer is then
  written from those facts, as pure text. Extraction is question-free, so an image quote shared by
  several questions is extracted once per `generate` call; its tokens count for the first answer
  that uses it, so token totals over a run stay exact.

Each step is one batch over all requests, so a backend batches (transformers) or runs them
concurrently (openai). A step's failure is that answer's error; reasoning is stripped from every
model output before it is used. `on_token` streams the last call of each answer only.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from interleaf.errors import ConfigError
from interleaf.evidence import fold
from interleaf.generate.abstain import abstains
from interleaf.generate.config import GenerateConfig
from interleaf.generate.prompting import (
    PROMPTING_VERSION,
    Conversation,
    QuoteImageError,
    answer_conversation,
    answer_prompt,
    chat_conversation,
    extraction_conversation,
    merge_conversation,
    request_quotes,
)
from interleaf.generate.protocol import (
    AnswerRequest,
    ChatRequest,
    ChatResult,
    ContextQuote,
    GeneratedAnswer,
    ImageLoader,
    InputMode,
)
from interleaf.generate.reasoning import StreamFilter, strip_reasoning
from interleaf.generate.short_answer import NOT_ANSWERABLE, abstained_short, split_short_answer
from interleaf.prompts import load_prompt

TokenCallback = Callable[[str], None]
CHUNK = 64  # requests per round of steps: bounds the PNG crops held in memory (~5 per multimodal context)


@dataclass(frozen=True)
class Completion:
    """One model call's raw outcome: `text` may still hold reasoning."""

    text: str | None  # None on error
    error: str | None = None
    tokens_in: int = 0
    tokens_out: int = 0
    seconds: float = 0.0  # wall time of the call (transformers: the batch's time shared by its items)
    server_failed: bool = False  # the error is the model server's, not an answer to this conversation


class ChatBackend(Protocol):
    """What a strategy needs from a model: conversations in, completions out, in order."""

    name: str
    model: str

    def check_input(self, input_mode: InputMode) -> None:
        """Raise ConfigError when the model cannot take this input (images to a text-only model)."""
        ...

    def chat(
        self,
        conversations: Sequence[Conversation],
        max_tokens: int | None = None,
        on_token: TokenCallback | None = None,
    ) -> list[Completion]: ...

    def version(self) -> dict[str, str]: ...


@dataclass
class _Work:
    """One answer in progress: its cost so far, the prompts it used, and its first failure."""

    request: AnswerRequest
    tokens_in: int = 0
    tokens_out: int = 0
    seconds: float = 0.0
    prompts: list[str] = field(default_factory=list)
    error: str | None = None
    server_failed: bool = False  # its error is the model server's
    knowledge: dict[str, str] = field(default_factory=dict)  # quote_id -> facts extracted from it
    answer: str = ""  # the final answer, once written

    def add(self, completion: Completion, prompt_hash: str, step: str) -> str | None:
        """Count a call; its answer with reasoning stripped, or None (and the error kept) when it failed."""
        self.tokens_in += completion.tokens_in
        self.tokens_out += completion.tokens_out
        self.seconds += completion.seconds
        if prompt_hash not in self.prompts:
            self.prompts.append(prompt_hash)
        text, error = finished(completion)
        if error and not self.error:
            self.error = f"{step}: {error}"
            self.server_failed = completion.server_failed
        return text


def finished(completion: Completion) -> tuple[str | None, str | None]:
    """The model's answer without its reasoning, or why there is none."""
    if completion.text is None:
        return None, completion.error or "no output"
    stripped = strip_reasoning(completion.text)
    if not stripped.answer:
        return None, "reasoning did not finish within the token budget" if stripped.unfinished else "empty output"
    return stripped.answer, None


class ModelGenerator:
    """A Generator and a ChatModel over one backend (openai_generator.py, transformers_generator.py)."""

    def __init__(self, config: GenerateConfig, backend: ChatBackend, on_token: TokenCallback | None = None) -> None:
        self.config = config
        self.backend = backend
        self.on_token = on_token
        self.name = backend.name
        self.model: str | None = backend.model
        self.input_mode: InputMode = config.input_mode

    # -- Generator -------------------------------------------------------------------------------

    def prompt_hashes(self) -> list[str]:
        c = self.config
        final_mode: InputMode = "text" if c.knowledge_extraction else c.input_mode
        names = ["knowledge_extraction"] if c.knowledge_extraction else []
        if c.strategy == "two_step":
            names += ["answer_text", answer_prompt(final_mode).name, "answer_merge"]
        else:
            names.append(answer_prompt(final_mode).name)
        return [load_prompt(n).hash for n in dict.fromkeys(names)]

    def version(self) -> dict[str, str]:
        return self.backend.version() | {"prompting": PROMPTING_VERSION, "strategies": "strategies-1"}

    def generate(self, requests: list[AnswerRequest], load_image: ImageLoader) -> list[GeneratedAnswer]:
        self.backend.check_input(self.input_mode)
        out: list[GeneratedAnswer] = []
        for start in range(0, len(requests), CHUNK):  # the crops of CHUNK contexts are held at once
            out += self._generate(requests[start : start + CHUNK], load_image)
        return out

    def _generate(self, requests: list[AnswerRequest], load_image: ImageLoader) -> list[GeneratedAnswer]:
        work = [_Work(r) for r in requests]
        if self.config.knowledge_extraction:
            self._extract(work, load_image)
        final_mode: InputMode = "text" if self.config.knowledge_extraction else self.input_mode
        if self.config.strategy == "two_step":
            self._two_step(work, final_mode, load_image)
        else:
            pending = [w for w in work if not w.error]
            self._answer(pending, lambda w: w.request.quotes, final_mode, load_image, "answer", final=True)
        return [self._result(w) for w in work]

    def _extract(self, work: list[_Work], load_image: ImageLoader) -> None:
        prompt_hash = load_prompt("knowledge_extraction").hash
        first_user: dict[str, _Work] = {}
        for w in work:
            for q in request_quotes(w.request, "image"):
                first_user.setdefault(q.quote_id, w)
        quotes = {q.quote_id: q for w in work for q in request_quotes(w.request, "image")}
        conversations: dict[str, Conversation] = {}
        failed: dict[str, str] = {}
        server_failed: set[str] = set()
        for quote_id, quote in quotes.items():
            try:
                conversations[quote_id] = extraction_conversation(quote, self.input_mode, load_image)
            except QuoteImageError as exc:
                failed[quote_id] = str(exc)
        completions = self._chat(list(conversations.values()), final=False)
        for quote_id, completion in zip(conversations, completions, strict=True):
            text = first_user[quote_id].add(completion, prompt_hash, f"knowledge extraction from {quote_id}")
            if text is None:
                failed[quote_id] = finished(completion)[1] or "no output"
                if completion.server_failed:
                    server_failed.add(quote_id)
            else:
                for w in work:
                    w.knowledge[quote_id] = text
        for w in work:
            if request_quotes(w.request, "image") and prompt_hash not in w.prompts:
                w.prompts.insert(0, prompt_hash)  # its facts came from this prompt, whoever paid for them
            missing = [q for q in request_quotes(w.request, "image") if q.quote_id in failed]
            if missing and not w.error:
                # an answer without one of its images' facts is not the answer asked for
                q = missing[0]
                w.error = f"knowledge extraction from image{q.number} ({q.quote_id}): {failed[q.quote_id]}"
                w.server_failed = q.quote_id in server_failed

    def _two_step(self, work: list[_Work], image_mode: InputMode, load_image: ImageLoader) -> None:
        pending = [w for w in work if not w.error]
        text_only = [w for w in pending if not request_quotes(w.request, "image")]
        image_only = [w for w in pending if not request_quotes(w.request, "text") and w not in text_only]
        both = [w for w in pending if w not in text_only and w not in image_only]
        # a context with one modality: that modality's step is the final answer
        self._answer(text_only, lambda w: w.request.quotes, "text", load_image, "answer", final=True)
        self._answer(image_only, lambda w: w.request.quotes, image_mode, load_image, "answer", final=True)
        texts = self._answer(both, lambda w: request_quotes(w.request, "text"), "text", load_image, "text step")
        images = self._answer(both, lambda w: request_quotes(w.request, "image"), image_mode, load_image, "image step")
        merging = [w for w in both if texts.get(id(w)) and images.get(id(w))]
        conversations = [merge_conversation(w.request.question, texts[id(w)], images[id(w)]) for w in merging]
        prompt_hash = load_prompt("answer_merge").hash
        for w, completion in zip(merging, self._chat(conversations, final=True), strict=True):
            w.answer = w.add(completion, prompt_hash, "merge") or ""

    def _answer(
        self,
        work: list[_Work],
        quotes: Callable[[_Work], Sequence[ContextQuote]],
        mode: InputMode,
        load_image: ImageLoader,
        step: str,
        final: bool = False,
    ) -> dict[int, str]:
        """One answer call per item of `work`; the answers by id(item), final ones also kept on the item."""
        conversations: list[Conversation] = []
        ready: list[_Work] = []
        for w in work:
            try:
                conversations.append(
                    answer_conversation(w.request.question, quotes(w), mode, load_image, w.knowledge or None)
                )
                ready.append(w)
            except QuoteImageError as exc:
                w.error = w.error or f"{step}: {exc}"
        prompt_hash = answer_prompt(mode).hash
        out: dict[int, str] = {}
        for w, completion in zip(ready, self._chat(conversations, final), strict=True):
            text = w.add(completion, prompt_hash, step)
            if text is not None:
                out[id(w)] = text
                if final:
                    w.answer = text
        return out

    def _chat(self, conversations: list[Conversation], final: bool) -> list[Completion]:
        if not final or self.on_token is None:
            return self.backend.chat(conversations) if conversations else []
        # streamed: one answer after the other, each shown without its reasoning
        out: list[Completion] = []
        for conversation in conversations:
            visible = StreamFilter()
            out += self.backend.chat([conversation], on_token=lambda piece, v=visible: self._show(v.feed(piece)))
            self._show(visible.flush())
        return out

    def _show(self, text: str) -> None:
        if text and self.on_token is not None:
            self.on_token(text)

    def _result(self, w: _Work) -> GeneratedAnswer:
        body, short = split_short_answer(w.answer)
        said = abstains(body) if not w.error else None
        if said is None and short is not None and fold(short) == fold(NOT_ANSWERABLE):
            said = "the model's short answer: Not answerable"
        return GeneratedAnswer(
            question_id=w.request.question_id,
            markdown="" if w.error else body,
            model=self.model,
            tokens_in=w.tokens_in,
            tokens_out=w.tokens_out,
            seconds=round(w.seconds, 3),
            error=w.error,
            server_failed=w.server_failed,
            input_mode=self.input_mode,
            prompt_hashes=tuple(w.prompts),
            answerable=said is None,
            abstain_reason=said,
            short_answer=None if w.error else abstained_short(said is None, short),
        )

    # -- ChatModel -------------------------------------------------------------------------------

    def complete(self, requests: list[ChatRequest]) -> list[ChatResult]:
        """Free-form prompts (judges, tools); reasoning stripped. Requests with the same max_tokens go
        in one batch."""
        if any(r.images for r in requests):
            self.backend.check_input("multimodal")
        results: dict[int, ChatResult] = {}
        for max_tokens in dict.fromkeys(r.max_tokens for r in requests):
            group = [i for i, r in enumerate(requests) if r.max_tokens == max_tokens]
            completions = self.backend.chat([chat_conversation(requests[i]) for i in group], max_tokens)
            for i, completion in zip(group, completions, strict=True):
                text, error = finished(completion)
                results[i] = ChatResult(text, error, completion.tokens_in, completion.tokens_out)
        return [results[i] for i in range(len(requests))]


def refuse_images(model: str, why: str) -> ConfigError:
    return ConfigError(
        f"generate.input_mode=multimodal needs a model that reads images, and {model} {why}: "
        "set generate.input_mode=text (image quotes then go as their VLM-text or OCR-text) or pick a VLM"
    )
