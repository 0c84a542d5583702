"""The judge metrics: tolerant parsing, then MMDocRAG's criteria, MCiteBench's Citation F1 and MAVIS's
groundedness / completeness / relevance through a real ChatModel: the OpenAI generator against a
loopback server that answers fixed replies (one of each kind malformed), and a tiny local model.
Expected values worked by hand."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from interleaf.evaluate.metrics import ByModality, aggregate, score_answers, score_questions
from interleaf.evaluate.metrics.judge import parse_label, parse_rating, parse_scores
from interleaf.evaluate.metrics.mavis import SUPPORT, parse_facts
from interleaf.generate.config import GenerateConfig, GenerateOpenAIConfig, GenerateTransformersConfig
from interleaf.generate.registry import get_chat_model
from tests.support.metrics_records import quote, record
from tests.support.openai_server import OpenAIServer, Seen, running

CRITERIA = ("fluency", "citation_quality", "text_image_coherence", "reasoning_logic", "factuality")

# -- parsing -------------------------------------------------------------------------------------


def test_scores_are_read_through_stray_spaces_fences_quotes_and_trailing_text() -> None:
    reply = (
        "<think>{'Fluency': 1}</think>```json\n"
        "{' Fluency': 4, '  Citation Quality': 3, 'Text-Image Coherence': 5, "
        "'Reasoning Logic': '4', ' Factuality': 2}\n"
        "```\nThese scores reflect the answer's strengths."
    )
    assert parse_scores(reply, CRITERIA, 0, 5) == dict(zip(CRITERIA, (4.0, 3.0, 5.0, 4.0, 2.0), strict=True))
    assert parse_scores('{"Fluency": 4, "Citation Quality": 3}', CRITERIA, 0, 5) is None  # a criterion missing
    full = '{"Fluency": 6, "Citation Quality": 3, "Text-Image Coherence": 3, "Reasoning Logic": 3, "Factuality": 3}'
    assert parse_scores(full, CRITERIA, 0, 5) is None  # out of 0-5
    assert parse_scores("Fluency: 4, Citation Quality: 3", CRITERIA, 0, 5) is None


def test_ratings_and_labels() -> None:
    assert parse_rating('```json\n{"rating": 2}\n```', (0, 1, 2)) == 2
    assert parse_rating("1", (0, 1, 2)) == 1
    assert parse_rating('{"Rating ": "0"}', (0, 1)) == 0
    assert parse_rating('{"rating": 2}', (0, 1)) is None  # precision is 0 or 1
    assert parse_rating("It is supported.", (0, 1, 2)) is None
    assert parse_label("The claim matches.\nAnswer: partially support", SUPPORT) == 0.5
    assert parse_label("Nothing backs it. Answer: Not support.", SUPPORT) == 0.0
    assert parse_label("Every subclaim is fully supported.", SUPPORT) == 1.0  # no "Answer:", one label
    assert parse_label("fully support or not support?", SUPPORT) is None
    assert parse_facts('Facts:\n["Profit fell by 3%.", "It was 2023."]') == ("Profit fell by 3%.", "It was 2023.")
    assert parse_facts("- Profit fell.\n- It was 2023.") == ("Profit fell.", "It was 2023.")
    assert parse_facts("no facts") is None


# -- through the loopback server -------------------------------------------------------------------

Q1_ANSWER = "Revenue grew 12% in 2023 [1][2]. The firm has 500 staff [2]. It is based in Paris."
Q2_ANSWER = "Profit fell by 3% [1]."


def records() -> list:
    q1 = record(
        "q1",
        [
            quote("t-rev", "text", 1, "Revenue grew 12% in 2023."),
            quote("t-staff", "text", 2, "The company has 500 employees."),
            quote("i-map", "image", 1, "A map of offices."),
        ],
        Q1_ANSWER,
        ByModality(("t-rev",)),
        question="How did revenue change?",
        atomic_facts=("Revenue grew 12% in 2023.", "The firm employs 500 people."),
    )
    q2 = record(
        "q2",
        [quote("t-profit", "text", 1, "Profit fell by 3%."), quote("t-other", "text", 2, "Unrelated.")],
        Q2_ANSWER,
        ByModality(("t-profit",)),
        question="How did profit change?",
        short_answer="Profit fell by 3%",
    )
    return [q1, q2]


def statement(prompt: str, field: str = "Statement") -> str:
    return re.search(rf"^{field}: (.*)$", prompt, re.MULTILINE).group(1)


def reply(seen: Seen) -> str:
    p = seen.prompt
    if "The interleaved answer is:" in p:
        if "Revenue grew" in p:  # stray spaces, a code fence, a string score and trailing text
            return (
                '```json\n{" Fluency": 4, "  Citation Quality": 3, "Text-Image Coherence": 5, '
                '"Reasoning Logic": "4", " Factuality": 2}\n```\nA solid answer.'
            )
        return "Fluency: 5, Citation Quality: 5"  # malformed: no JSON
    if "Break the following answer into atomic facts" in p:
        return '["Profit fell by 3%."]'
    if "supported by the provided parts" in p:  # MCiteBench recall
        s = statement(p)
        if s.startswith("Revenue"):
            return '{"rating": 2}'
        return "1" if s.startswith("The firm") else "I think so."  # q2's reply is unparsable
    if "contains some key information of the statement" in p:  # MCiteBench precision
        return '{"rating": 0}' if statement(p).startswith("Revenue") and "[2] (text)" in p else '{"rating": 1}'
    if "extract all subclaims within the statement" in p:  # MAVIS groundedness
        s = statement(p)
        if s.startswith("Revenue"):
            return "Answer: fully support" if "[1] (text)" in p else "Answer: not support"
        return "Some of it.\nAnswer: partially support" if s.startswith("The firm") else "Answer: not support"
    if "how thoroughly each subclaim is addressed" in p:  # MAVIS completeness
        s = statement(p)
        return {"Revenue": "Answer: fully complete", "The firm": "Answer: partially complete"}.get(
            s.split(" ")[0] if s.startswith("Revenue") else " ".join(s.split(" ")[:2]), "Answer: not complete"
        )
    if "semantically corresponds to the question" in p:  # MAVIS relevance
        s = statement(p, "Sentence")
        if s.startswith("It is based"):
            return "Hard to say."  # unparsable
        return "Answer: partially relevant" if s.startswith("The firm") else "Answer: fully relevant"
    raise AssertionError(f"unexpected prompt: {p[:200]}")


def openai_judge(server: OpenAIServer):
    settings = GenerateOpenAIConfig(base_url=server.base_url, model="judge-model", retries=0, timeout_s=10)
    return get_chat_model(GenerateConfig(backend="openai", openai=settings))


def test_judge_metrics_through_an_openai_server() -> None:
    server = OpenAIServer("judge-model", None, reply, allow_images=False)
    with running(server):
        metrics = {m.name: m for m in score_answers(records(), openai_judge(server))}
    assert server.errors == []
    # 2 MMDocRAG + 7 MCiteBench (q1: 2 recall + 3 precision; q2: 1 + 1) + 13 MAVIS (q1: 2 completeness,
    # 3 relevance, 2 recall, 2 precision for the sentence citing two quotes: a sentence citing one quote
    # has its precision request answered by its recall request; q2: 1 fact extraction, 1 completeness,
    # 1 relevance, 1 recall)
    assert len(server.seen) == 2 + 7 + 13

    # MMDocRAG: q1 = 4, 3, 5, 4, 2 (mean 18/5 = 3.6); q2 unparsable: left out, counted, never 0
    assert metrics["judge_fluency"].value == 4.0
    assert metrics["judge_mean"].value == pytest.approx(3.6)
    assert metrics["judge_mean"].n == 1
    assert "2 judge replies, 1 unparsable, 0 failed" in metrics["judge_mean"].note
    assert "Fluency: 5, Citation Quality: 5" in metrics["judge_mean"].note  # the failure is shown

    # MCiteBench q1: sentence 1 recall 2 -> 1.0, precision ([1] 1 + [2] 0) / 2 = 0.5;
    # sentence 2 recall 1 -> 0.5, precision 1; sentence 3 cites nothing: left out.
    # recall (1 + 0.5) / 2 = 0.75, precision (0.5 + 1) / 2 = 0.75, F1 0.75. q2's recall reply is unparsable.
    assert metrics["citation_f1"].value == pytest.approx(0.75)
    assert metrics["citation_recall"].value == pytest.approx(0.75)
    assert metrics["citation_precision"].value == pytest.approx(0.75)
    assert metrics["citation_f1"].n == 1
    assert "7 judge replies, 1 unparsable" in metrics["citation_f1"].note
    # Source (offline): q1 gold {t-rev}, cited {t-rev, t-staff}: P 1/2, R 1, F1 2/3, EM 0;
    # q2 gold {t-profit} = cited: 1, 1, 1, EM 1. Means: F1 (2/3 + 1) / 2 = 5/6, EM 1/2
    assert metrics["source_f1"].value == pytest.approx(5 / 6)
    assert metrics["source_exact_match"].value == pytest.approx(0.5)

    # MAVIS groundedness recall: q1 (1 + 0.5 + 0 uncited) / 3 = 0.5; q2 0 -> mean 0.25
    # precision: q1 ((1 + 0) / 2 + 0.5) / 2 = 0.5; q2 0 -> mean 0.25; F1 0.25
    assert metrics["groundedness_recall"].value == pytest.approx(0.25)
    assert metrics["groundedness_precision"].value == pytest.approx(0.25)
    assert metrics["groundedness_f1"].value == pytest.approx(0.25)
    # per text citation: q1 [1] 1, [2] 0, [2] 0.5; q2 [1] 0 -> 1.5 / 4 = 0.375
    assert metrics["groundedness_precision_text"].value == pytest.approx(0.375)
    assert metrics["groundedness_precision_image"].value is None
    # completeness: q1 (1 + 0.5) / 2 = 0.75; q2 (its one extracted fact) 0 -> 0.375
    assert metrics["completeness"].value == pytest.approx(0.375)
    # relevance: q1 has an unparsable sentence -> no value; q2 1 -> 1.0 over 1 question
    assert (metrics["relevance"].value, metrics["relevance"].n) == (1.0, 1)
    # informativeness F1 = 2 * 0.375 * 1 / 1.375 = 6/11
    assert metrics["informativeness_f1"].value == pytest.approx(6 / 11)
    assert "13 judge replies, 1 unparsable, 0 failed" in metrics["completeness"].note
    # utilisation (offline): text q1 2/2, q2 1/2 -> 0.75; image q1 0/1, q2 has none -> 0 over 1
    assert metrics["utilisation_text"].value == pytest.approx(0.75)
    assert (metrics["utilisation_image"].value, metrics["utilisation_image"].n) == (0.0, 1)


def test_server_errors_are_counted_and_no_judge_means_not_computed() -> None:
    server = OpenAIServer("judge-model", None, reply, allow_images=False)
    server.script = ["500"]
    with running(server):
        scores = score_questions(records()[:1], openai_judge(server), families=("mmdocrag",))
    metrics = {m.name: m for m in aggregate(scores, judged=True, families=("mmdocrag",))}
    assert metrics["judge_mean"].value is None
    assert "1 judge replies, 0 unparsable, 1 failed" in metrics["judge_mean"].note
    assert scores[0].judge_failures[0].startswith("mmdocrag: error: HTTP 500")
    assert metrics["citation_f1"].note.startswith("not computed: judge family mcitebench not asked for")

    offline = {m.name: m for m in score_answers(records(), None)}
    for name in ("judge_mean", "citation_f1", "groundedness_recall", "completeness", "relevance"):
        assert offline[name].value is None
        assert offline[name].note.startswith("not computed: no judge configured")
    assert offline["source_f1"].value == pytest.approx(5 / 6)  # offline metrics still computed


def test_a_multimodal_judge_sees_the_cited_crops() -> None:
    import io

    from PIL import Image

    buffer = io.BytesIO()
    Image.new("RGB", (8, 8), "white").save(buffer, format="PNG")
    png = buffer.getvalue()
    table = quote("i-tab", "image", 1, "Revenue: 12% growth in 2023", kind="table", img_path="images/tab.png")
    answer = "Revenue grew 12% in 2023. ![Table 1 shows revenue growth](image1)"
    rec = record("q", [quote("t", "text", 1, "Other."), table], answer, ByModality((), ("i-tab",)))

    def multimodal_reply(seen: Seen) -> str:
        assert "image1 (table, attached image no. 1): Revenue: 12% growth in 2023" in seen.prompt
        return '{"rating": 2}' if "supported by the provided parts" in seen.prompt else '{"rating": 1}'

    server = OpenAIServer("judge-model", None, multimodal_reply, allow_images=True)
    loaded: list[str] = []
    with running(server):
        scores = score_questions(
            [rec], openai_judge(server), load_image=lambda path: loaded.append(path) or png, families=("mcitebench",)
        )
    assert server.errors == []
    # one recall and one precision request, each with the cited table's crop
    assert [s.images for s in server.seen] == [[png], [png]]
    assert loaded == ["images/tab.png", "images/tab.png"]
    # recall 2 -> 1.0, precision 1 -> 1.0: F1 1.0
    assert scores[0].judge_failures == ()
    assert scores[0].values["citation_f1"] == 1.0


# -- a tiny local model ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def tiny_lm(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from interleaf.prompts import load_prompt
    from tests.tiny_models import build_causal_lm

    return build_causal_lm(tmp_path_factory.mktemp("tiny-judge"), [load_prompt("judge_mmdocrag").text])


def test_a_tiny_local_judge_runs_and_its_noise_is_counted_not_scored(tiny_lm: Path) -> None:
    config = GenerateConfig(backend="transformers", transformers=GenerateTransformersConfig(model=str(tiny_lm)))
    judge = get_chat_model(config)
    scores = score_questions(records(), judge, families=("mmdocrag", "mcitebench"), max_tokens=12)
    metrics = {m.name: m for m in aggregate(scores, judged=True, families=("mmdocrag", "mcitebench"))}
    # random weights write random words: every reply is counted, none can be read as a score
    requests = sum(s.counts.get("mmdocrag_requests", 0) for s in scores)
    failed = sum(s.counts.get("mmdocrag_unparsable", 0) + s.counts.get("mmdocrag_errors", 0) for s in scores)
    assert requests == 2
    assert failed == 2
    assert metrics["judge_mean"].value is None
    assert metrics["citation_f1"].value is None
    assert sum(s.counts.get("mcitebench_requests", 0) for s in scores) == 7
