"""The server's web page in headless Chromium (Debian's /usr/bin/chromium driven by Playwright, as in
test_render_browser.py): ask, see the answer's figure, open a citation (its quote and its page with
the box drawn), upload a PDF and watch it become ingested, ask about it, and find the script that
its text holds shown as text, never run. Nothing is fetched from anywhere but the server."""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path

import pymupdf
import pytest

from tests.conftest import IngestedWarehouse
from tests.support.serve_server import RunningServer, copy_warehouse, serving
from tests.test_render_browser import CHROMIUM, FLAGS

PAYLOAD = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">'
SCREENSHOTS = os.environ.get("INTERLEAF_SCREENSHOTS")  # a folder to keep the screenshots in


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    sync_api = pytest.importorskip("playwright.sync_api", reason="the Python package `playwright` is not installed")
    if not Path(CHROMIUM).is_file():
        pytest.skip(f"no Chromium at {CHROMIUM}: install Debian's `chromium` package or set INTERLEAF_CHROMIUM")
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        yield chromium
        chromium.close()


@pytest.fixture(scope="module")
def server(corpus_warehouse: IngestedWarehouse, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningServer]:
    root = copy_warehouse(corpus_warehouse.root, tmp_path_factory.mktemp("serve-browser"))
    with serving(root) as running_server:
        yield running_server


def hostile_pdf(path: Path) -> Path:
    """A one-page memo whose text layer holds a script, as a hostile upload would."""
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((60, 90), "Verifier training memo", fontsize=14)
    lines = [
        f"The verifier named {PAYLOAD}",
        "was trained on 12 million scanned pages. It was evaluated on invoices,",
        "letters and forms from three archives.",
    ]
    for i, line in enumerate(lines):
        page.insert_text((60, 130 + 14 * i), line, fontsize=10)
    doc.save(path)
    return path


def screenshot(page: object, tmp_path: Path, name: str) -> None:
    folder = Path(SCREENSHOTS) if SCREENSHOTS else tmp_path
    folder.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(folder / name), full_page=True)  # type: ignore[attr-defined]
    assert (folder / name).stat().st_size > 10_000


def loaded_width(image: object, timeout_s: float = 60) -> int:
    """The image's natural width once it has loaded (polled from here: the page's CSP forbids the
    string evaluation Playwright's wait_for_function uses)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        width = image.evaluate("(img) => (img.complete && img.src ? img.naturalWidth : -1)")  # type: ignore[attr-defined]
        if width >= 0:
            return int(width)
        time.sleep(0.1)
    raise AssertionError("the image did not load")


def open_page(browser: object, server: RunningServer) -> tuple[object, list[str], list[str]]:
    page = browser.new_page(viewport={"width": 1280, "height": 1000})  # type: ignore[attr-defined]
    requests: list[str] = []
    problems: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.on("console", lambda m: problems.append(m.text) if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.goto(server.url)
    page.wait_for_selector("#documents tbody tr")
    return page, requests, problems


def ask(page: object, question: str, document: str | None = None) -> None:
    page.fill("#question", question)  # type: ignore[attr-defined]
    if document:
        page.locator("#doc-filter-box summary").click()  # type: ignore[attr-defined]
        page.locator("#doc-filter label", has_text=document).locator("input").check()  # type: ignore[attr-defined]
    page.click("#ask-button")  # type: ignore[attr-defined]
    page.wait_for_selector("#answer-body :first-child, #ask-error:not([hidden])", timeout=300_000)  # type: ignore[attr-defined]


def test_ask_see_the_figure_and_open_a_citation(browser: object, server: RunningServer, tmp_path: Path) -> None:
    page, requests, problems = open_page(browser, server)
    rows = page.locator("#documents tbody tr")
    assert rows.count() > 20
    assert "rejected" in page.locator("#documents tr", has_text="empty.pdf").inner_text()

    ask(page, "What does Table 2 of the DPR paper compare?", "dpr-emnlp2020.pdf")
    assert page.locator("#ask-error").is_hidden()
    figure = page.locator("#answer-body .figure img").first
    figure.wait_for()
    assert loaded_width(figure) > 100  # the table's crop, from this server
    assert page.locator("#citations li").count() >= 1

    page.locator("#answer-body a.cite").first.click()
    panel = page.locator("#quote-panel")
    panel.wait_for()
    assert "dpr-emnlp2020.pdf" in panel.locator("#quote-title").inner_text()
    assert "Table 2" in panel.locator("#quote-text").inner_text()
    page_image = panel.locator("#quote-page")
    assert loaded_width(page_image) > 500  # the page, with the quote's box drawn
    assert "?quote=" in page_image.get_attribute("src")
    screenshot(page, tmp_path, "serve-answer.png")

    assert [u for u in requests if not u.startswith((server.url, "blob:", "data:"))] == []
    assert problems == []  # no script error, no policy violation
    page.close()


def test_upload_a_pdf_see_it_ingested_and_its_script_stay_text(
    browser: object, server: RunningServer, tmp_path: Path
) -> None:
    page, requests, problems = open_page(browser, server)
    page.fill("#key", server.key)
    page.locator("#key").dispatch_event("change")
    memo = hostile_pdf(tmp_path / "verifier memo <b>.pdf")
    page.set_input_files("#upload-file", str(memo))
    page.click("#upload-button")
    page.wait_for_selector("#upload-status[data-state=done]", timeout=900_000)
    assert "ingested" in page.locator("#upload-status").inner_text()
    row = page.locator("#documents tr", has_text="verifier-memo-b.pdf")
    row.wait_for()
    assert "ingested" in row.inner_text()

    ask(page, "What was the verifier trained on?", "verifier-memo-b.pdf")
    assert page.locator("#ask-error").is_hidden(), page.locator("#ask-error").inner_text()
    body = page.locator("#answer-body")
    assert "12 million scanned pages" in body.inner_text()
    page.locator("#answer-body a.cite").first.click()
    assert PAYLOAD in page.locator("#quote-text").inner_text()  # shown as the document has it
    assert loaded_width(page.locator("#quote-page")) > 500
    assert page.locator("#answer-body script, #quote-panel script").count() == 0
    assert page.evaluate("window.__pwned") is None  # and never run
    screenshot(page, tmp_path, "serve-upload.png")

    assert [u for u in requests if not u.startswith((server.url, "blob:", "data:"))] == []
    assert problems == []
    page.close()
