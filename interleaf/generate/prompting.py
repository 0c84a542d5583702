"""The conversations a model is given: answers, the two-step merge, knowledge extraction, free prompts.

Answer messages follow MMDocRAG Appendix C.1 and its released inference code: the instructions as
the system message (prompts/answer_text.md, answer_multimodal.md), then one user message with
"Text Quotes are:" `[i] text` lines, "Image Quotes are:", and "The user question is: …". Pure-text
input (Figure 23) gives each image quote as "imageN is described as: <VLM-text or OCR-text>";
multimodal input (Figure 22) interleaves "- imageN is " and the crop itself. A conversation is
backend-neutral: text parts are `str`, images are PNG `bytes`; each backend turns it into its own
message format.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from interleaf.generate.protocol import AnswerRequest, ChatRequest, ContextQuote, ImageLoader, InputMode
from interleaf.prompts import Prompt, load_prompt

PROMPTING_VERSION = "prompting-1"  # the user-message layout below; part of the generator's version

Part = str | bytes  # a text part, or an image as PNG bytes
Role = Literal["system", "user", "assistant"]


@dataclass(frozen=True)
class Message:
    role: Role
    content: tuple[Part, ...]

    @property
    def images(self) -> tuple[bytes, ...]:
        return tuple(p for p in self.content if isinstance(p, bytes))

    @property
    def text(self) -> str:
        """The text parts joined (for backends, and messages, without images)."""
        return "".join(p for p in self.content if isinstance(p, str))


Conversation = tuple[Message, ...]


class QuoteImageError(Exception):
    """An image quote's crop cannot be read: that answer fails, the others go on."""


def answer_prompt(input_mode: InputMode) -> Prompt:
    return load_prompt("answer_multimodal" if input_mode == "multimodal" else "answer_text")


def answer_conversation(
    question: str,
    quotes: Sequence[ContextQuote],
    input_mode: InputMode,
    load_image: ImageLoader | None = None,
    knowledge: Mapping[str, str] | None = None,
) -> Conversation:
    """The answer request for `quotes` (all of a context, or one modality's for the two-step strategy).
    `knowledge`: quote_id -> facts extracted from that image quote; they stand in for its VLM-text."""
    texts = [q for q in quotes if q.modality == "text"]
    images = [q for q in quotes if q.modality == "image"]
    parts: list[Part] = []
    if texts:
        parts.append("Text Quotes are:" + "".join(f"\n[{q.number}] {q.text.strip()}" for q in texts) + "\n")
    if images:
        parts.append("Image Quotes are:" + ("\n" if input_mode == "multimodal" else ""))
        for q in images:
            if input_mode == "multimodal":
                parts += [f"- image{q.number} is ", _crop(q, load_image), "\n"]
            else:
                described = (knowledge or {}).get(q.quote_id, q.text).strip()
                parts.append(f"\nimage{q.number} is described as: {described}")
        parts.append("\n")
    parts.append(f"\nThe user question is: {question.strip()}")
    system = Message("system", (answer_prompt(input_mode).render(),))
    return (system, Message("user", _merge_text(parts)))


def merge_conversation(question: str, text_answer: str, image_answer: str) -> Conversation:
    """RefLVQA Appendix C.1 (Table 17), answer integration: Answer 1 from the text quotes, Answer 2
    from the image quotes."""
    prompt = load_prompt("answer_merge")
    return (Message("user", (prompt.render(question=question.strip(), answer_1=text_answer, answer_2=image_answer),)),)


# How the extraction prompt names its source: the crop itself, or the image quote's text form.
_SEEN_AS_IMAGE = "It is the image above."
_SEEN_AS_TEXT = "It is given as this description of the image:\n\n{text}"


def extraction_conversation(quote: ContextQuote, input_mode: InputMode, load_image: ImageLoader | None) -> Conversation:
    """MAVIS §5.2's knowledge extraction for one image quote: the document alone, never the question."""
    prompt = load_prompt("knowledge_extraction")
    source = _SEEN_AS_IMAGE if input_mode == "multimodal" else _SEEN_AS_TEXT.format(text=quote.text.strip())
    caption = quote.caption.strip() if quote.caption and quote.caption.strip() else "(none)"
    text = prompt.render(kind=quote.kind, page=quote.page_idx + 1, caption=caption, source=source)
    parts: tuple[Part, ...] = (text,) if input_mode == "text" else (_crop(quote, load_image), text)
    return (Message("user", parts),)


def chat_conversation(request: ChatRequest) -> Conversation:
    """A free-form request (judges): the images first, then the text, as Qwen2.5-VL's model card orders them."""
    system = (Message("system", (request.system,)),) if request.system else ()
    return (*system, Message("user", (*request.images, request.user)))


def request_quotes(request: AnswerRequest, modality: str | None = None) -> tuple[ContextQuote, ...]:
    return tuple(q for q in request.quotes if modality is None or q.modality == modality)


def _crop(quote: ContextQuote, load_image: ImageLoader | None) -> bytes:
    if not quote.img_path or load_image is None:
        raise QuoteImageError(f"image{quote.number} ({quote.quote_id}) has no crop (img_path) to show the model")
    try:
        return load_image(quote.img_path)
    except OSError as exc:
        raise QuoteImageError(f"image{quote.number} ({quote.quote_id}): cannot read {quote.img_path}: {exc}") from exc


def _merge_text(parts: list[Part]) -> tuple[Part, ...]:
    """Adjacent text parts as one: a text-only message is then a single string."""
    out: list[Part] = []
    for part in parts:
        if isinstance(part, str) and out and isinstance(out[-1], str):
            out[-1] += part
        else:
            out.append(part)
    return tuple(out)
