"""A rendered report opened in headless Chromium (Debian's /usr/bin/chromium, driven by Playwright;
never Playwright's own browser download): images load, a citation opens its quote with the page
image, the unsupported flag shows its reason, the hostile quote stays text, nothing is fetched."""

from __future__ import annotations

import os
import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from test_render import DOC_ID, PAYLOAD, RealData, answer_view

from interleaf.render import render_report

CHROMIUM = os.environ.get("INTERLEAF_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
# Offline and quiet: see ../shared/STACK.md "A browser"; Playwright gives each launch a fresh profile.
FLAGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@pytest.fixture(scope="module")
def browser():
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="the Python package `playwright` is not installed (pip install playwright)"
    )
    if not Path(CHROMIUM).is_file():
        pytest.skip(f"no Chromium at {CHROMIUM}: install Debian's `chromium` package or set INTERLEAF_CHROMIUM")
    with sync_api.sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=FLAGS, headless=True)
        yield chromium
        chromium.close()


def test_report_in_chromium(browser, tmp_path: Path) -> None:
    data = RealData()
    views = [
        answer_view(data, "q1", "Which verifier is best on text in Table 2?"),
        answer_view(data, "q2", "What share of questions seek information?"),
        replace(answer_view(data, "q3", "Unanswered?"), error="timed out after 60 s"),
    ]
    report = tmp_path / "report.html"
    report.write_text(render_report(views, "Interleaf answers"), encoding="utf-8")

    page = browser.new_page(viewport={"width": 1100, "height": 1400})
    requests: list[str] = []
    problems: list[str] = []
    page.on("request", lambda r: requests.append(r.url))
    page.on("console", lambda m: problems.append(m.text) if m.type in ("error", "warning") else None)
    page.on("pageerror", lambda e: problems.append(str(e)))
    page.goto(report.as_uri())
    page.wait_for_function("[...document.images].every((img) => img.complete)")

    images = page.evaluate("[...document.images].map((img) => [img.alt, img.naturalWidth, img.naturalHeight])")
    assert len(images) == 2 + 8  # the crop in both answers; four cards with the page in each
    assert all(w > 0 and h > 0 for _, w, h in images), images
    assert [u for u in requests if not u.startswith(("file:", "data:"))] == []
    assert problems == []  # no script error, no policy violation
    assert page.evaluate("window.__pwned") is None

    # the second answer's [3] cites the hostile quote: its card opens with text, document, page and box
    card = page.locator("#a1-t3")
    assert not card.locator(".qtext").is_visible()
    page.locator('#a1 a.cite[href="#a1-t3"]').click()
    assert card.locator(".qtext").is_visible()
    assert card.locator(".qtext").inner_text().endswith(PAYLOAD)
    assert card.locator(".doc").inner_text() == "mavis-aaai2026.pdf"
    assert card.locator(".pg").inner_text() == "page 4"
    page_image = card.locator(".page img")
    assert page_image.is_visible()
    assert page_image.evaluate("(img) => img.naturalWidth") == 680

    # the table's card: the quote's box drawn over the page image, inside it
    page.locator('#a0 a.cite[href="#a0-i1"]').click()
    table_card = page.locator("#a0-i1")
    box = table_card.locator(".page .box").bounding_box()
    shown = table_card.locator(".page img").bounding_box()
    assert box and shown and box["width"] > 20 and box["height"] > 10
    assert shown["x"] <= box["x"] and box["x"] + box["width"] <= shown["x"] + shown["width"]
    assert shown["y"] <= box["y"] and box["y"] + box["height"] <= shown["y"] + shown["height"]

    # the unsupported sentence's flag shows its reason when clicked
    flag = page.locator("#a0 .flag").first
    assert not flag.locator(".why").is_visible()
    flag.click()
    assert flag.locator(".why").is_visible()
    assert "numbers 12 not found" in flag.locator(".why").inner_text()

    page.locator("#a0").scroll_into_view_if_needed()
    page.screenshot(path=str(tmp_path / "report.png"), full_page=True)
    assert (tmp_path / "report.png").stat().st_size > 10_000
    assert data.page_loads == [(DOC_ID, 3)]
    page.close()
