"""The OpenAI-compatible generator against a real HTTP server on loopback (tests/support/openai_server.py) that
checks every request as the Chat Completions API defines it, on contexts cut from a real paper of the
corpus: MMDocRAG's message layout in text and multimodal mode, streaming, thinking, retries, failures,
the two-step and knowledge-extraction strategies, the ChatModel interface, and reasoning stripping."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from interleaf.errors import InterleafError
from interleaf.generate.citations import check_answer
from interleaf.generate.config import GenerateConfig, GenerateOpenAIConfig
from interleaf.generate.openai_generator import OpenAIGenerator
from interleaf.generate.protocol import AnswerRequest, ChatRequest, ContextQuote
from interleaf.generate.reasoning import StreamFilter, strip_reasoning
from interleaf.generate.registry import get_chat_model, get_generator
from interleaf.generate.stage import answer_row
from interleaf.prompts import load_prompt
from interleaf.vlm.openai_chat import ServerUnreachableError
from tests.support.openai_server import IMAGE_TOKENS, OpenAIServer, Reply, Seen, pieces, running, words

QUESTION = (
    "Which table of the MAVIS paper compares entailment models for verifying groundedness, "
    "and which textual entailment model scores the highest F1 in it?"
)  # qa_dev q001
ANSWER = "Table 2 compares them; Qwen3-8B scores the highest F1, 53.7 [1]. ![Qwen3-8B leads the textual models](image1)"
THOUGHT = "<think>Table 2 lists NLI models; the best textual F1 is 53.7.</think>\n"


def corpus_context(corpus: Path) -> tuple[list[ContextQuote], dict[str, bytes]]:
    """Quotes cut from mavis-aaai2026.pdf as the pipeline cuts them: paragraphs of page 4 as text
    quotes; Table 2 (page 4) and the top of page 7 (Figure 3) as image quotes, each a PNG crop with
    its text-layer text as its text form. The crops by img_path, for the loader."""
    import pymupdf

    texts: list[ContextQuote] = []
    images: list[ContextQuote] = []
    crops: dict[str, bytes] = {}
    with pymupdf.open(corpus / "docs" / "mavis-aaai2026.pdf") as doc:
        page = doc[3]
        paragraphs = [b for b in page.get_text("blocks") if b[1] > 340 and b[0] < 300 and len(b[4]) > 200]
        for i, block in enumerate(paragraphs[:3]):
            texts.append(ContextQuote(f"t{i}", "text", i + 1, "mavis", "mavis-aaai2026.pdf", 3, "text", block[4]))
        regions = [(3, pymupdf.Rect(54, 55, 293, 160), "table"), (6, pymupdf.Rect(54, 50, 558, 230), "figure")]
        for n, (page_idx, clip, kind) in enumerate(regions, start=1):
            path = f"images/mavis-p{page_idx}-{n}.png"
            crops[path] = doc[page_idx].get_pixmap(dpi=40, clip=clip).tobytes("png")
            text = doc[page_idx].get_text(clip=clip)
            images.append(
                ContextQuote(f"i{n}", "image", n, "mavis", "mavis-aaai2026.pdf", page_idx, kind, text, img_path=path)
            )
    assert len(texts) == 3 and "53.7" in images[0].text
    return texts + images, crops


@pytest.fixture(scope="module")
def context(corpus: Path) -> tuple[list[ContextQuote], dict[str, bytes]]:
    return corpus_context(corpus)


def answer_reply(seen: Seen) -> str | Reply:
    prompt = seen.prompt
    if "Merged answer:" in prompt:
        return "MERGED " + ANSWER
    if "Extract all the factual information" in prompt:
        return f"FACTS {len(seen.images)} image(s): Qwen3-8B F1 53.7."
    return THOUGHT + ANSWER


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch) -> Iterator[OpenAIServer]:
    monkeypatch.setenv("TEST_GEN_KEY", "gen-key")
    with running(OpenAIServer("qwen-vl-test", "gen-key", answer_reply)) as srv:
        yield srv


def settings(base_url: str, **overrides: object) -> GenerateConfig:
    options = {
        k: overrides.pop(k) for k in ("input_mode", "strategy", "knowledge_extraction", "thinking") if k in overrides
    }
    openai = GenerateOpenAIConfig(
        base_url=base_url,
        model="qwen-vl-test",
        api_key_env="TEST_GEN_KEY",
        **{"backoff_s": 0.01, "timeout_s": 5.0, "max_tokens": 300, **overrides},
    )
    return GenerateConfig(backend="openai", openai=openai, **options)


def requests_for(quotes: list[ContextQuote], n: int = 1) -> list[AnswerRequest]:
    return [AnswerRequest(f"q{i}", f"{QUESTION} ({i})", tuple(quotes)) for i in range(n)]


def test_text_mode_follows_mmdocrag_and_the_api(server: OpenAIServer, context) -> None:
    quotes, crops = context
    generator = get_generator(settings(server.base_url, concurrency=3))  # chosen by config alone
    assert isinstance(generator, OpenAIGenerator) and generator.name == "openai"
    out = generator.generate(requests_for(quotes, 4), crops.__getitem__)
    assert server.errors == []
    assert len(server.seen) == 4 and all(not s.images for s in server.seen)  # text mode: no image_url
    body = next(s.body for s in server.seen if s.prompt.endswith("(0)"))  # arrival order varies
    system, user = body["messages"]
    assert system == {"role": "system", "content": load_prompt("answer_text").render()}
    # MMDocRAG's pure-text layout (Appendix C.1, Figure 23): numbered text quotes, described image quotes
    assert user["role"] == "user" and isinstance(user["content"], str)
    assert user["content"].startswith("Text Quotes are:\n[1] " + quotes[0].text.strip()[:30])
    assert "\n[3] " in user["content"] and "\n[4] " not in user["content"]
    assert (
        f"\nImage Quotes are:\nimage1 is described as: {quotes[3].text.strip()}\nimage2 is described as:"
        in (user["content"])
    )
    assert user["content"].endswith(f"\n\nThe user question is: {QUESTION} (0)")
    assert body["max_tokens"] == 300 and body["temperature"] == 0.0
    assert "stream" not in body and "chat_template_kwargs" not in body  # thinking: default sends no switch
    # answers in request order despite the thread pool; reasoning stripped; usage read
    prompts = {s.body["messages"][1]["content"]: s for s in server.seen}
    for i, answer in enumerate(out):
        seen = next(s for p, s in prompts.items() if p.endswith(f"({i})"))
        assert answer.question_id == f"q{i}" and answer.error is None
        assert answer.markdown == ANSWER
        assert answer.tokens_in == sum(words(t) for t in seen.texts)
        assert answer.tokens_out == words(THOUGHT + ANSWER)
        assert answer.model == "qwen-vl-test" and answer.input_mode == "text" and answer.seconds > 0
        assert answer.prompt_hashes == (load_prompt("answer_text").hash,)
    assert generator.prompt_hashes() == [load_prompt("answer_text").hash]


def test_multimodal_mode_sends_the_crops_as_data_urls(server: OpenAIServer, context) -> None:
    quotes, crops = context
    loaded: list[str] = []

    def load(path: str) -> bytes:
        loaded.append(path)
        return crops[path]

    (answer,) = get_generator(settings(server.base_url, input_mode="multimodal")).generate(requests_for(quotes), load)
    assert server.errors == [] and answer.error is None and answer.markdown == ANSWER
    (seen,) = server.seen
    assert seen.images == [crops[q.img_path] for q in quotes[3:]]  # every crop, byte for byte, in order
    assert loaded == [q.img_path for q in quotes[3:]]
    system, user = seen.body["messages"]
    assert system["content"] == load_prompt("answer_multimodal").render()
    # MMDocRAG's interleaved layout (Figure 22): "- imageN is " then the image itself
    kinds = [p["type"] for p in user["content"]]
    assert kinds == ["text", "image_url", "text", "image_url", "text"]
    assert user["content"][0]["text"].endswith("Image Quotes are:\n- image1 is ")
    assert user["content"][2]["text"] == "\n- image2 is "
    assert user["content"][4]["text"].endswith(f"The user question is: {QUESTION} (0)")
    assert answer.tokens_in == sum(words(t) for t in seen.texts) + 2 * IMAGE_TOKENS
    assert answer.input_mode == "multimodal" and answer.prompt_hashes == (load_prompt("answer_multimodal").hash,)


def test_streaming_shows_the_answer_without_its_reasoning(server: OpenAIServer, context) -> None:
    quotes, crops = context
    server.reply = lambda seen: Reply(THOUGHT + ANSWER, reasoning="the server's own reasoning channel")
    shown: list[str] = []
    generator = get_generator(settings(server.base_url), on_token=shown.append)
    (answer,) = generator.generate(requests_for(quotes), crops.__getitem__)
    assert server.errors == []
    body = server.seen[0].body
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert len(shown) > 10  # piece by piece, as the server sent them
    assert "".join(shown).strip() == answer.markdown == ANSWER  # <think> split across pieces, held back
    assert "reasoning" not in answer.markdown
    assert answer.tokens_out == words(THOUGHT + ANSWER) + words("the server's own reasoning channel")


def test_thinking_switch_goes_to_the_chat_template(server: OpenAIServer, context) -> None:
    quotes, crops = context
    for thinking, expected in (("off", False), ("on", True)):
        get_generator(settings(server.base_url, thinking=thinking)).generate(requests_for(quotes), crops.__getitem__)
        assert server.seen[-1].body["chat_template_kwargs"] == {"enable_thinking": expected}
    assert server.errors == []


def test_a_500_is_retried_then_answered(server: OpenAIServer, context) -> None:
    quotes, crops = context
    server.script = ["500", "ok"]
    (answer,) = get_generator(settings(server.base_url, retries=2)).generate(requests_for(quotes), crops.__getitem__)
    assert answer.error is None and answer.markdown == ANSWER
    assert len(server.seen) == 2


def test_a_server_that_always_fails_gives_each_answer_its_error(server: OpenAIServer, context) -> None:
    quotes, crops = context
    server.script = ["500"] * 10
    config = settings(server.base_url, retries=1, concurrency=1)
    out = get_generator(config).generate(requests_for(quotes, 2), crops.__getitem__)  # does not raise
    assert [a.markdown for a in out] == ["", ""]
    assert all("HTTP 500" in a.error and "2 attempts" in a.error for a in out), out
    assert len(server.seen) == 4  # bounded: 2 attempts each


def test_a_timeout_is_that_answers_error(server: OpenAIServer, context) -> None:
    quotes, crops = context
    server.script = ["sleep"]
    config = settings(server.base_url, retries=0, timeout_s=0.2)
    (answer,) = get_generator(config).generate(requests_for(quotes), crops.__getitem__)
    assert answer.markdown == "" and "timeout after 0.2s" in answer.error


def test_nothing_listening_fails_fast_naming_the_url(context) -> None:
    quotes, crops = context
    with socket.socket() as sock:  # a port that was free a moment ago and has nothing listening now
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    base_url = f"http://127.0.0.1:{port}/v1"
    started = time.perf_counter()
    with pytest.raises(ServerUnreachableError) as caught:
        get_generator(settings(base_url, retries=3, backoff_s=1.0)).generate(requests_for(quotes, 5), crops.__getitem__)
    assert time.perf_counter() - started < 1.0  # no retries with backoff (that would take 7 s per request)
    assert isinstance(caught.value, InterleafError)
    assert base_url in str(caught.value) and "vllm serve qwen-vl-test" in str(caught.value)


def test_two_step_answers_each_modality_then_merges(server: OpenAIServer, context) -> None:
    quotes, crops = context
    config = settings(server.base_url, strategy="two_step", input_mode="multimodal")
    generator = get_generator(config)
    only_text = AnswerRequest("q-text", QUESTION, tuple(quotes[:3]))
    answers = generator.generate([requests_for(quotes)[0], only_text], crops.__getitem__)
    assert server.errors == []
    # a context with text quotes only is answered in one call, without a merge
    alone, text_step, image_step, merge = server.seen
    assert alone.prompt.endswith(f"The user question is: {QUESTION}") and not alone.images
    # step 1: the text quotes alone, as pure text; step 2: the image quotes alone, as crops
    assert text_step.prompt.endswith(f"{QUESTION} (0)") and not text_step.images
    for step in (text_step, alone):
        assert "Text Quotes are:" in step.prompt and "Image Quotes are:" not in step.prompt
    assert image_step.images == [crops[q.img_path] for q in quotes[3:]] and "Text Quotes are:" not in image_step.prompt
    # step 3: RefLVQA's merge of the two answers (Table 17)
    assert not merge.images and len(merge.body["messages"]) == 1
    assert merge.prompt.count(ANSWER) == 2 and "Merged answer:" in merge.prompt and QUESTION in merge.prompt
    full, text_only = answers
    assert full.markdown == "MERGED " + ANSWER and text_only.markdown == ANSWER
    hashes = [load_prompt(n).hash for n in ("answer_text", "answer_multimodal", "answer_merge")]
    assert full.prompt_hashes == tuple(hashes) and text_only.prompt_hashes == (hashes[0],)
    assert generator.prompt_hashes() == hashes
    # tokens: the sum of the three calls' usage
    used = [text_step, image_step, merge]
    assert full.tokens_in == sum(sum(words(t) for t in s.texts) + IMAGE_TOKENS * len(s.images) for s in used)
    assert full.tokens_out == 2 * words(THOUGHT + ANSWER) + words("MERGED " + ANSWER)


def test_knowledge_extraction_reads_each_image_once_without_the_question(server: OpenAIServer, context) -> None:
    quotes, crops = context
    config = settings(server.base_url, knowledge_extraction=True, input_mode="multimodal")
    generator = get_generator(config)
    out = generator.generate(requests_for(quotes, 2), crops.__getitem__)  # two contexts sharing both images
    assert server.errors == [] and [a.error for a in out] == [None, None]
    extractions = [s for s in server.seen if "Extract all the factual information" in s.prompt]
    finals = [s for s in server.seen if s not in extractions]
    assert len(extractions) == 2 and len(finals) == 2  # one per distinct image quote, then one per answer
    assert sorted(len(s.images) for s in extractions) == [1, 1]
    assert all(QUESTION not in s.prompt for s in extractions)  # MAVIS §5.2: the document alone
    assert sorted("page 4" in s.prompt for s in extractions) == [False, True]  # Table 2; Figure 3 is on page 7
    assert all("Its caption, if any: (none)" in s.prompt for s in extractions)
    for final in finals:  # the answer is written from the extracted facts, as pure text
        assert not final.images and final.body["messages"][0]["content"] == load_prompt("answer_text").render()
        assert "image1 is described as: FACTS 1 image(s): Qwen3-8B F1 53.7." in final.prompt
    hashes = (load_prompt("knowledge_extraction").hash, load_prompt("answer_text").hash)
    assert out[0].prompt_hashes == out[1].prompt_hashes == hashes  # both answers were written from the facts
    assert generator.prompt_hashes() == list(hashes)
    # every call's tokens are counted once, the shared extractions with the first answer
    usage = sum(sum(words(t) for t in s.texts) + IMAGE_TOKENS * len(s.images) for s in server.seen)
    assert sum(a.tokens_in for a in out) == usage


def test_an_unreadable_crop_fails_only_its_answer(server: OpenAIServer, context) -> None:
    quotes, crops = context

    def load(path: str) -> bytes:
        if path.endswith("-2.png"):
            raise FileNotFoundError(path)
        return crops[path]

    broken = AnswerRequest("q-broken", QUESTION, tuple(quotes))
    fine = AnswerRequest("q-fine", QUESTION, tuple(quotes[:4]))
    out = get_generator(settings(server.base_url, input_mode="multimodal")).generate([broken, fine], load)
    assert out[0].markdown == "" and "image2 (i2): cannot read images/mavis-p6-2.png" in out[0].error
    assert out[1].error is None and out[1].markdown == ANSWER
    assert len(server.seen) == 1


def test_chat_model_completes_free_prompts(server: OpenAIServer, context) -> None:
    quotes, crops = context
    server.reply = lambda seen: Reply("<think>weigh it</think>Score: 4", reasoning="apart")
    model = get_chat_model(settings(server.base_url))
    assert model is not None and model.name == "openai" and model.model == "qwen-vl-test"
    png = crops[quotes[3].img_path]
    out = model.complete(
        [
            ChatRequest("Rate the answer from 0 to 5.", system="You are a strict judge.", images=(png,)),
            ChatRequest("Hi", max_tokens=7),
        ]
    )
    assert [r.text for r in out] == ["Score: 4", "Score: 4"] and all(r.error is None for r in out)
    assert server.errors == []
    judged = next(s for s in server.seen if s.images)
    system, user = judged.body["messages"]
    assert system == {"role": "system", "content": "You are a strict judge."}
    assert [p["type"] for p in user["content"]] == ["image_url", "text"] and judged.images == [png]
    assert next(s for s in server.seen if not s.images).body["max_tokens"] == 7
    assert out[1].tokens_out == words("<think>weigh it</think>Score: 4") + 1


def test_offline_has_no_chat_model_and_model_options_need_a_model() -> None:
    assert get_chat_model(GenerateConfig()) is None
    with pytest.raises(ValueError, match=r"generate\.strategy=two_step need a model"):
        GenerateConfig(strategy="two_step")


# -- reasoning, worked out by hand -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "answer", "unfinished"),
    [
        ("<think>a\nb</think>\n\nThe answer [1].", "The answer [1].", False),
        ("<THINKING>plan</THINKING>Yes.", "Yes.", False),
        ("reasoning the template opened</think>Final.", "Final.", False),  # Qwen3: <think> was in the prompt
        ("Partial answer. <think>still thinking when the budget ran out", "Partial answer.", True),
        ("<think>never closed", "", True),
        ("No reasoning at all: 3 < 4.", "No reasoning at all: 3 < 4.", False),
    ],
)
def test_strip_reasoning(raw: str, answer: str, unfinished: bool) -> None:
    stripped = strip_reasoning(raw)
    assert (stripped.answer, stripped.unfinished) == (answer, unfinished)


def test_stream_filter_holds_back_reasoning_split_across_pieces() -> None:
    text = "<think>step one</think>Table 2 [1]; 3 <b> 4 <thi"
    for size in (1, 2, 3, 5, 7):
        stream = StreamFilter()
        shown = "".join(stream.feed(p) for p in pieces(text, size)) + stream.flush()
        assert shown == "Table 2 [1]; 3 <b> 4 <thi", size  # a dangling "<thi" was text after all


# -- "the documents do not say", from a model ------------------------------------------------------


def test_the_prompts_allow_not_in_the_documents() -> None:
    for name in ("answer_text", "answer_multimodal"):
        assert (
            "The documents do not say" in load_prompt(name).render() and "own knowledge" in load_prompt(name).render()
        )


@pytest.mark.parametrize(
    "reply",
    [
        "The documents do not say what Top-20 accuracy DPR reaches on MS MARCO.",
        "<think>No quote mentions MS MARCO.</think>\nThis is not mentioned in the provided quotes.",
        "I cannot find a Top-20 accuracy for MS MARCO in the quotes; they cover NQ, TriviaQA, WQ, TREC and SQuAD.",
    ],
)
def test_a_model_that_says_the_quotes_do_not_answer_abstains(
    monkeypatch: pytest.MonkeyPatch, context, reply: str
) -> None:
    quotes, crops = context
    monkeypatch.setenv("TEST_GEN_KEY", "gen-key")
    with running(OpenAIServer("qwen-vl-test", "gen-key", lambda seen: reply)) as srv:
        request = AnswerRequest("q", "What Top-20 retrieval accuracy does DPR reach on MS MARCO?", tuple(quotes))
        (answer,) = get_generator(settings(srv.base_url)).generate([request], crops.__getitem__)
    assert answer.error is None and answer.answerable is False
    assert answer.abstain_reason is not None and answer.abstain_reason in answer.markdown
    # the answers row: abstaining is data, and saying so addresses the question
    checked = check_answer(answer.markdown, request.quotes, question=request.question)
    row = answer_row(request, answer, checked, get_generator(settings(srv.base_url)), None)
    assert row["answerable"] is False and row["abstain_reason"] == answer.abstain_reason
    assert row["addresses_question"] is True and row["relevance_reason"] == "said missing"


def test_an_answer_whose_cited_sentences_share_no_anchor_is_flagged(server: OpenAIServer, context) -> None:
    """The loopback model answers every question with Table 2's Qwen3-8B row (ANSWER): asked about
    MS MARCO, it cites the context, but it is off the question."""
    quotes, crops = context
    generator = get_generator(settings(server.base_url))
    asked = [
        AnswerRequest("off", "What Top-20 retrieval accuracy does DPR reach on MS MARCO?", tuple(quotes)),
        AnswerRequest("on", QUESTION, tuple(quotes)),
    ]
    rows = {}
    for request, answer in zip(asked, generator.generate(asked, crops.__getitem__), strict=True):
        checked = check_answer(answer.markdown, request.quotes, question=request.question)
        rows[request.question_id] = answer_row(request, answer, checked, generator, None)
        assert checked.cited_quote_ids  # it cites the context's quotes either way
    assert rows["off"]["answerable"] is True and rows["off"]["addresses_question"] is False
    assert "MS MARCO" in rows["off"]["relevance_reason"] or "MARCO" in rows["off"]["relevance_reason"]
    assert rows["on"]["addresses_question"] is True, rows["on"]["relevance_reason"]


def test_the_short_answer_line_is_asked_for_and_stored_apart(monkeypatch: pytest.MonkeyPatch, context) -> None:
    """The prompt asks for a last `Short answer:` line (MMLongBench-Doc scores it); the answer shown
    comes without it, `short_answer` holds its value; "Not answerable" there is an abstention."""
    quotes, crops = context
    monkeypatch.setenv("TEST_GEN_KEY", "gen-key")
    replies = {
        "(0)": ANSWER + "\n\n**Short answer:** Qwen3-8B",
        "(1)": "The documents do not say which model is best on MS MARCO.\nShort answer: Not answerable",
        "(2)": ANSWER,  # no line: no short answer
    }
    reply = lambda seen: next(r for k, r in replies.items() if seen.prompt.endswith(k))  # noqa: E731
    with running(OpenAIServer("qwen-vl-test", "gen-key", reply)) as srv:
        out = get_generator(settings(srv.base_url)).generate(requests_for(quotes, 3), crops.__getitem__)
        system = srv.seen[0].body["messages"][0]["content"]
    assert "Short answer:" in system and "Not answerable" in system
    assert [a.markdown for a in out] == [ANSWER, "The documents do not say which model is best on MS MARCO.", ANSWER]
    assert [a.short_answer for a in out] == ["Qwen3-8B", "Not answerable", None]
    assert [a.answerable for a in out] == [True, False, True]
