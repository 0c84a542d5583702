"""`interleaf serve` on loopback over the ingested corpus, asked through HTTP and through the
`openai` package's own client: answers with their citations as data and their images as this
server's URLs, quotes and pages (the box drawn), documents with their status, errors with the
right status, follow-up turns given to query expansion, a model backend that is down."""

from __future__ import annotations

import io
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from PIL import Image, ImageChops

from interleaf.config import load_settings
from tests.conftest import IngestedWarehouse, sql_rows
from tests.support.openai_server import IMAGE_TOKENS, OpenAIServer, Seen, running, words
from tests.support.serve_server import RunningServer, closed_port, copy_warehouse, serving

DPR = "dpr-emnlp2020"
TABLE_QUESTION = "What does Table 2 of the DPR paper compare?"


@pytest.fixture(scope="module")
def server(corpus_warehouse: IngestedWarehouse, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    root = copy_warehouse(corpus_warehouse.root, tmp_path_factory.mktemp("serve-api"))
    with serving(root) as running_server:
        yield running_server


def test_index_is_loaded_before_the_first_question(server: RunningServer) -> None:
    health = server.client().get("/healthz").json()
    assert health["status"] == "ok" and health["documents"] >= 10
    index = health["index"]
    assert index["loaded"] and index["loads"] == 1 and index["quotes"] > 500
    assert index["retrievers"] == ["bm25", "minilm"]


def test_ask_returns_the_answer_its_citations_and_image_urls(server: RunningServer) -> None:
    http = server.client()
    response = http.post("/v1/ask", json={"question": TABLE_QUESTION, "documents": [DPR]})
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["scope"] == "doc" and [d["name"] for d in body["documents"]] == ["dpr-emnlp2020.pdf"]
    assert body["answerable"] is True and "addresses_question" in body and "relevance_reason" in body
    cited = body["citations"]
    assert cited, body
    for c in cited:
        assert set(c) >= {"label", "quote_id", "document", "page", "bbox", "modality", "text", "supported"}
        assert c["document"] == "dpr-emnlp2020.pdf" and c["page"] >= 1 and len(c["bbox"]) == 4
    images = [c for c in cited if c["modality"] == "image"]
    assert images, "the table is placed in the answer"
    table = images[0]
    assert f"]({server.url}/v1/quotes/{table['quote_id']}/image)" in body["answer"]
    assert "](image" not in body["answer"]  # every placement is a URL a client can fetch

    crop = http.get(table["image_url"])
    assert crop.status_code == 200 and crop.headers["content-type"] == "image/png"
    assert Image.open(io.BytesIO(crop.content)).size[0] > 50

    quote = http.get(f"/v1/quotes/{table['quote_id']}").json()
    assert quote["kind"] == "table" and quote["page"] == table["page"] and quote["bbox"] == table["bbox"]
    assert quote["table_md"] and "Top-20" in quote["table_md"]

    # the page with the quote's box drawn differs from the bare page inside the box, not outside it
    boxed = Image.open(io.BytesIO(http.get(table["page_url"]).content)).convert("RGB")
    bare = Image.open(io.BytesIO(http.get(f"/v1/documents/{DPR}/pages/{table['page']}.png").content)).convert("RGB")
    assert boxed.size == bare.size
    # (both are 64-colour PNGs: a palette may shift a shade elsewhere; the red box differs by far more)
    changed = ImageChops.difference(boxed, bare).convert("L").point(lambda v: 255 if v > 60 else 0).getbbox()
    assert changed is not None
    scale = load_settings().serve.api.page_dpi / 72  # PDF points -> pixels
    x0, y0, x1, y1 = (v * scale for v in table["bbox"])
    assert x0 - 4 <= changed[0] and changed[2] <= x1 + 4 and y0 - 4 <= changed[1] and changed[3] <= y1 + 4

    again = http.post("/v1/ask", json={"question": TABLE_QUESTION, "documents": ["DPR-EMNLP2020.PDF"]}).json()
    assert again["timing"]["stored"] is True and again["answer"] == body["answer"]


def test_errors_say_what_is_wrong_with_the_right_status(server: RunningServer) -> None:
    http = server.client()

    def ask(**body: object) -> tuple[int, str]:
        response = http.post("/v1/ask", json=body)
        return response.status_code, response.json()["error"]["message"]

    status, message = ask(question="What is DPR?", documents=["dpr-emnlp"])
    assert status == 404 and "'dpr-emnlp'" in message and "dpr-emnlp2020.pdf" in message
    status, message = ask(question="What is DPR?", documents=["nosuch.pdf"])
    assert status == 404 and "'nosuch.pdf'" in message
    status, message = ask(question="What is in it?", documents=["password.pdf"])
    assert status == 404 and "rejected" in message and "password" in message
    assert ask(question="   ")[0] == 422
    assert "empty" in ask(question="")[1]
    assert ask(question="What is DPR?", scope="doc")[0] == 422
    status, message = ask(question="What is DPR?", budget=7)
    assert status == 422 and "[5, 10, 15, 20]" in message
    missing = http.get("/v1/quotes/no-such-quote")
    assert missing.status_code == 404 and "no-such-quote" in missing.json()["error"]["message"]
    assert http.get(f"/v1/documents/{DPR}/pages/99.png").status_code == 404
    assert http.get("/v1/nothing-here").json()["error"]["status"] == 404


def test_documents_list_ingested_and_rejected_with_why(server: RunningServer) -> None:
    data = server.client().get("/v1/documents").json()["data"]
    by_name = {d["name"]: d for d in data}
    dpr = by_name["dpr-emnlp2020.pdf"]
    assert dpr["status"] == "ingested" and dpr["pages"] > 5 and dpr["quotes"] > 20
    assert by_name["empty.pdf"]["status"] == "rejected" and "empty" in by_name["empty.pdf"]["reason"]
    assert by_name["password.pdf"]["status"] == "rejected" and by_name["password.pdf"]["reason"]
    stored = {r["name"] for r in sql_rows(server.root, "select name from documents")}
    assert {d["name"] for d in data if d["status"] == "ingested"} == stored


def test_openai_client_gets_the_answer_and_its_citations(server: RunningServer) -> None:
    openai = pytest.importorskip("openai")
    client = openai.OpenAI(base_url=f"{server.url}/v1", api_key=server.key, max_retries=0, timeout=300)
    assert "interleaf" in [m.id for m in client.models.list().data]
    asked = server.client().post("/v1/ask", json={"question": TABLE_QUESTION, "documents": [DPR]}).json()

    messages = [{"role": "user", "content": TABLE_QUESTION}]
    completion = client.chat.completions.create(model="interleaf", messages=messages, extra_body={"documents": [DPR]})
    assert completion.choices[0].message.content == asked["answer"]
    assert completion.choices[0].finish_reason == "stop"
    assert completion.citations == asked["citations"]  # an extra field: kept by the client, ignored otherwise

    # the offline composer runs no model: no token counts, so no `usage` (optional in the API), not zeros
    assert completion.usage is None
    raw = server.client(server.key).post(
        "/v1/chat/completions", json={"model": "interleaf", "messages": messages, "documents": [DPR]}
    )
    assert raw.status_code == 200 and "usage" not in raw.json()

    stream = client.chat.completions.create(
        model="interleaf",
        messages=messages,
        stream=True,
        stream_options={"include_usage": True},
        extra_body={"documents": [DPR]},
    )
    chunks = list(stream)
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == asked["answer"] and len(chunks) > 3
    last = [c for c in chunks if c.choices and c.choices[0].finish_reason == "stop"]
    assert len(last) == 1 and last[0].citations == asked["citations"]
    assert all(c.usage is None for c in chunks) and all(c.choices for c in chunks)  # no usage chunk

    with pytest.raises(openai.NotFoundError, match="no model 'gpt-4o'"):
        client.chat.completions.create(model="gpt-4o", messages=messages)
    with pytest.raises(openai.NotFoundError, match="nosuch"):
        client.chat.completions.create(model="interleaf", messages=messages, extra_body={"documents": ["nosuch"]})


def test_a_follow_up_gives_the_earlier_turns_to_query_expansion(server: RunningServer) -> None:
    openai = pytest.importorskip("openai")
    client = openai.OpenAI(base_url=f"{server.url}/v1", api_key=server.key, max_retries=0, timeout=300)
    messages = [
        {"role": "user", "content": TABLE_QUESTION},
        {"role": "assistant", "content": "It compares retrievers' top-20 and top-100 accuracy."},
        {"role": "user", "content": "Which one is best on TREC?"},
    ]
    completion = client.chat.completions.create(model="interleaf", messages=messages, extra_body={"documents": [DPR]})
    qset = completion.interleaf["qset_id"]
    assert completion.interleaf["question"] == "Which one is best on TREC?"
    clauses = sql_rows(server.root, f"select kind, text from asked_clauses where qset_id = '{qset}' order by clause_id")
    assert clauses[0] == {"kind": "question", "text": "Which one is best on TREC?"}
    assert {"kind": "context", "text": TABLE_QUESTION} in clauses


def test_a_model_backend_that_is_down_is_503_naming_it(corpus_warehouse: IngestedWarehouse, tmp_path: Path) -> None:
    root = copy_warehouse(corpus_warehouse.root, tmp_path)
    url = f"http://127.0.0.1:{closed_port()}/v1"
    overrides = ("generate.backend=openai", f"generate.openai.base_url={url}", "generate.openai.retries=0")
    with serving(root, *overrides) as down:
        response = down.client().post("/v1/ask", json={"question": TABLE_QUESTION, "documents": [DPR]})
        assert response.status_code == 503, response.text
        message = response.json()["error"]["message"]
        assert "generate" in message and url in message
        assert response.headers["retry-after"]


def test_a_streamed_model_answer_links_its_images_as_they_arrive(
    corpus_warehouse: IngestedWarehouse, tmp_path: Path
) -> None:
    """A real streaming backend (tests/support/openai_server.py, 5 characters per chunk): each
    `![...](imageN)` reaches the chat client as a URL of this server, even split across chunks."""
    openai = pytest.importorskip("openai")

    answer = "DPR's retrievers are compared on five datasets [1]. ![Table 2 compares retrievers](image1)"

    def reply(seen: Seen) -> str:
        return answer

    os.environ["SERVE_TEST_MODEL_KEY"] = "model-key"
    root = copy_warehouse(corpus_warehouse.root, tmp_path)
    with running(OpenAIServer("tiny-model", "model-key", reply)) as model:
        overrides = (
            "generate.backend=openai",
            f"generate.openai.base_url={model.base_url}",
            "generate.openai.model=tiny-model",
            "generate.openai.api_key_env=SERVE_TEST_MODEL_KEY",
        )
        with serving(root, *overrides) as server:
            client = openai.OpenAI(base_url=f"{server.url}/v1", api_key=server.key, max_retries=0, timeout=300)
            messages = [{"role": "user", "content": TABLE_QUESTION}]
            chunks = list(
                client.chat.completions.create(
                    model="interleaf",
                    messages=messages,
                    stream=True,
                    stream_options={"include_usage": True},
                    extra_body={"documents": [DPR]},
                )
            )
            # the model server's own counts of what it read and wrote (tests/support/openai_server.py counts words)
            calls = list(model.seen)
            counted = sum(words(t) for c in calls for t in c.texts) + IMAGE_TOKENS * sum(len(c.images) for c in calls)
            stored = client.chat.completions.create(
                model="interleaf", messages=messages, extra_body={"documents": [DPR]}
            )
            # a server that sends no `usage` (the answer stored with 0 tokens in): none given, not zeros
            model.usage = False
            uncounted = client.chat.completions.create(
                model="interleaf",
                messages=[{"role": "user", "content": "What does DPR's Table 1 show?"}],
                extra_body={"documents": [DPR]},
            )
    deltas = [c.choices[0].delta.content for c in chunks if c.choices and c.choices[0].delta.content]
    text = "".join(deltas)
    assert len(deltas) > 10  # streamed as the model wrote it
    (last,) = [c for c in chunks if c.choices and c.choices[0].finish_reason == "stop"]
    image = next(c for c in last.citations if c["label"] == "image1")
    assert text.endswith(f"![Table 2 compares retrievers]({server.url}/v1/quotes/{image['quote_id']}/image)")
    assert "(image1)" not in text

    assert calls and chunks[-1].choices == [] and all(c.usage is None for c in chunks[:-1])
    usage = chunks[-1].usage
    assert usage is not None and (usage.prompt_tokens, usage.completion_tokens) == (counted, words(answer) * len(calls))
    assert usage.total_tokens == usage.prompt_tokens + usage.completion_tokens
    assert stored.interleaf["qset_id"] == last.interleaf["qset_id"] and stored.usage == usage  # the answer's own
    assert len(model.seen) > len(calls) and uncounted.usage is None


def test_a_caller_finding_a_reload_under_way_waits_for_its_snapshot(
    corpus_warehouse: IngestedWarehouse, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An upload's job asks for a refresh just after its ingest published; the page poller may have
    started that very reload a moment before. The job must get the new snapshot, not the old one
    (it used to find the marker already current and return at once, then call the upload failed)."""
    import threading

    from interleaf.serve import state as state_module
    from warehouse.store import Warehouse

    root = copy_warehouse(corpus_warehouse.root, tmp_path)
    state = state_module.ServerState(root, load_settings(None, []))
    state.warm_up()
    before = state.snapshot
    wh = Warehouse(root)
    published = {v.stage: (v.fingerprint, v.tables) for v in wh.current().values() if v.group == "ingest"}
    wh.publish("ingest", published)  # what an ingest's publish changes: the marker

    import flows.plans

    loading, release = threading.Event(), threading.Event()
    real_open = flows.plans.open_index

    def slow_open(*args: object) -> object:  # the reload's longest step: the index's load
        loading.set()
        assert release.wait(60)
        return real_open(*args)

    monkeypatch.setattr(flows.plans, "open_index", slow_open)
    poller = threading.Thread(target=state.refresh)
    poller.start()
    assert loading.wait(60)
    seen: list[object] = []
    job = threading.Thread(target=lambda: seen.append((state.refresh(), state.snapshot)))
    job.start()
    job.join(1.0)
    assert job.is_alive(), "the second caller returned while the reload was still under way"
    release.set()
    poller.join(120)
    job.join(120)
    assert seen and seen[0][1] is state.snapshot and state.snapshot is not before
