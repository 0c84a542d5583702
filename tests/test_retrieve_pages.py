"""A page the question names is searched first (interleaf/structure/pages.py): the file's page of that
number and the page printed with it, on the session's ingested corpus. docs/cancer-guide.pdf has an
unnumbered cover and inside cover, so its printed page 20 is the file's page 22."""

from __future__ import annotations

import json
import re

import pyarrow as pa

from interleaf.structure.pages import (
    PageReference,
    float_on_named_page,
    page_references,
    pages_named,
    printed_page_numbers,
)
from tests.conftest import IngestedWarehouse, run_cli, sql_rows

DOC = "cancer-guide.pdf"


def test_the_pages_a_question_names_are_read() -> None:
    # the benchmark's askers write the page every way: "on page 9", "page(1)", "the first page"
    assert page_references("What is the title of the diagram on page 9?") == [PageReference("page 9", 9, True)]
    assert page_references("What date is mentioned at the beginning of page(1)?")[0].number == 1
    assert page_references("Is there a signature present on the last page?") == [
        PageReference("last page", None, False)
    ]
    assert page_references("How many websites are present on the cover page?")[0].number == 1
    assert page_references("What is on the second page?")[0].number == 2
    # "the pages introducing ..." and a page count name no page
    assert page_references("Tell me all the pages introducing how to reinstall the software.") == []
    assert page_references("How many pages does the report have?") == []


def test_a_page_named_in_words_from_the_end_or_past_a_blank_one() -> None:
    assert page_references("What are the words in the first rectangle on the top of the page two?") == [
        PageReference("page two", 2, True)
    ]
    assert page_references("What is the figure on the second last page?")[0].from_end == 1
    assert page_references("Who signed the penultimate slide?")[0].from_end == 1
    assert page_references("Is the page-two spread in colour?") == []
    # an instruction's example pages name no page (a dev-half question's own words)
    formatted = (
        "Tell me all the pages introducing how to reinstall the software. Your answer should be formatted "
        'as a list about "Page X",  for example,  ["Page 17", "Page 25"]'
    )
    assert page_references(formatted) == []
    pages = {0, 2, 3, 4}  # the file's second page is blank: no quote holds anything on it
    (second,) = page_references("What date is mentioned on the second page?")
    assert pages_named(second, pages, {}) == {2}
    assert pages_named(second, pages | {1}, {}) == {1}
    (second_last,) = page_references("What is on the second-to-last page?")
    assert pages_named(second_last, pages, {}) == {3}
    # "the cover" is the first page, "the back cover" the last; a verb, or a cover letter, is none
    (cover,) = page_references("How many people are there in the images on the cover?")
    assert (cover.text, pages_named(cover, pages, {})) == ("the cover", {0})
    (back,) = page_references("Which website is printed on the back cover of the brochure?")
    assert pages_named(back, pages, {}) == {4}
    assert page_references("Does the policy cover floods?") == []
    assert page_references("Who signed the cover letter?") == []


def test_the_numbers_a_document_prints_on_its_pages(corpus_warehouse: IngestedWarehouse) -> None:
    quotes = sql_rows(
        corpus_warehouse.root,
        "select q.doc_id, q.page_idx, q.text, q.furniture from quotes q join documents d on d.doc_id = q.doc_id "
        f"where d.name = '{DOC}'",
    )
    (doc_id,) = {q["doc_id"] for q in quotes}
    printed = printed_page_numbers(pa.Table.from_pylist(quotes))[doc_id]
    assert len(printed) >= 40, sorted(printed)  # most of its 76 pages print their number in a foot
    # every number is printed on the file's page two further on, and on that page only
    assert all(pages == {number + 1} for number, pages in printed.items()), printed
    pages = {q["page_idx"] for q in quotes}
    assert pages_named(PageReference("page 20", 20, True), pages, printed) == {19, 21}
    assert pages_named(PageReference("the last page", None, False), pages, printed) == {max(pages)}
    assert pages_named(PageReference("the cover page", 1, False), pages, printed) == {0}
    # a foot the parser took for text still counts, as its number sits as far from the file's count
    # as the other pages' do; a lone number in the text (a callout "7" on page 4) does not
    missed = [q | {"furniture": False} if q["page_idx"] == 21 and q["furniture"] else q for q in quotes]
    callout = {"doc_id": doc_id, "page_idx": 3, "text": "7", "furniture": False}
    reread = printed_page_numbers(pa.Table.from_pylist([*missed, callout]))[doc_id]
    assert reread[20] == {21} and reread[7] == {8}, (reread[20], reread[7])


def _context_pages(root, question: str, *scope: str) -> list[int]:
    answer = json.loads(run_cli(root, "ask", question, *scope, "--json").stdout)
    return [int(c["page"]) for c in answer["context"]]


def test_a_named_page_is_searched_first(corpus_warehouse: IngestedWarehouse) -> None:
    root = corpus_warehouse.root
    # "the table on page 20" is on the page printed 20, the file's 22nd
    assert _context_pages(root, "What does the table on page 20 show?", "--doc", DOC)[0] == 22
    assert _context_pages(root, "What is on the last page?", "--doc", DOC)[0] == 76
    assert _context_pages(root, "What is on the cover page?", "--doc", DOC)[0] == 1
    # the named page's quotes come first, though the reranker finds the question's words elsewhere
    # (retrieve.named_pages_first); without it they are spread among other pages' quotes
    question = "Who wrote the words on the second page?"
    first = _context_pages(root, question, "--doc", DOC)
    on_page = first.count(2)
    assert on_page >= 3 and first[:on_page] == [2] * on_page, first
    spread = _context_pages(root, question, "--doc", DOC, "--set", "retrieve.named_pages_first=false")
    assert spread[:on_page] != [2] * on_page, spread
    # read by score (generate.quote_order: relevance), past pages taking turns, they still lead: their
    # scores were raised above the rest's
    by_score = _context_pages(
        root, question, "--doc", DOC, "--set", "retrieve.pages_take_turns=20", "--set", "generate.quote_order=relevance"
    )
    held = by_score.count(2)
    assert held >= 3 and by_score[:held] == [2] * held, by_score
    # each is one more list asked within the page (the stored clauses say so); across the corpus a
    # page number names no page, and no such list is asked
    run_cli(root, "ask", "What is on the last page?")
    asked = sql_rows(
        root,
        "select scope, kind from asked_clauses where text = 'What is on the last page?' and kind like 'scope:%'",
    )
    assert {(a["scope"], a["kind"]) for a in asked} == {("doc", "scope:last page")}, asked


def test_pages_take_turns_in_a_real_ranking(corpus_warehouse: IngestedWarehouse) -> None:
    # the guide's page on chemotherapy's side effects holds most of the question's words in several
    # paragraphs, which fill the head of the context; with the turns, other pages come between them
    root, question = corpus_warehouse.root, "What are the side effects of chemotherapy?"
    plain = _context_pages(root, question, "--doc", DOC, "--set", "retrieve.pages_take_turns=0")
    turned = _context_pages(root, question, "--doc", DOC, "--set", "retrieve.pages_take_turns=20")
    assert len(set(plain[:5])) < 5, plain
    assert turned[0] == plain[0] and len(set(turned[:5])) == 5, turned
    assert plain.count(plain[0]) > 1 and turned.count(plain[0]) > 1  # the top page's others stay, later
    # read by score, the turned context's quotes are the same and the top page's come first again
    by_score = _context_pages(
        root, question, "--doc", DOC, "--set", "retrieve.pages_take_turns=20", "--set", "generate.quote_order=relevance"
    )
    top = turned.count(plain[0])
    assert sorted(by_score) == sorted(turned) and by_score[:top] == [plain[0]] * top, by_score


def test_the_offline_answer_does_not_move_with_the_contexts_order(corpus_warehouse: IngestedWarehouse) -> None:
    # the offline composer reads its context most relevant first, by the quotes' retrieval scores
    # (offline.most_relevant_first): given the same quotes in the pages' turns, or shuffled, it cites
    # the same quotes and gives the same short answer; only the citations' numbers follow the order
    root = corpus_warehouse.root
    # questions of the corpus's dev sets on this guide whose answers moved with a shuffled context
    # before the composer read it by score
    questions = [
        "According to Understanding Breast Cancer, how long is tamoxifen commonly taken compared with "
        "aromatase inhibitors?",
        "According to the 'How cancer spreads' diagram in Understanding Breast Cancer, how do cancer cells "
        "reach other parts of the body in metastasis?",
        "What is the five-year survival rate for early breast cancer according to Understanding Breast Cancer?",
        "What are the four stages depicted, in order, in the 'How cancer starts' diagram of Understanding "
        "Breast Cancer?",
    ]

    def cited(question: str, *settings: str) -> tuple[list[str], str, str, list[int]]:
        answer = json.loads(run_cli(root, "ask", question, "--doc", DOC, "--json", *settings).stdout)
        unnumbered = re.sub(r"\[\d+\]|image\d+", "#", answer["answer"])
        sources = sorted(s["quote_id"] for s in answer["sources"])
        return sources, answer["short_answer"], unnumbered, [c["page"] for c in answer["context"]]

    orders = []
    for question in questions:
        plain = cited(question, "--set", "retrieve.pages_take_turns=0")
        turned = cited(question, "--set", "retrieve.pages_take_turns=10")
        shuffled = cited(question, "--set", "generate.quote_order=shuffled")
        assert sorted(plain[3]) == sorted(turned[3]) == sorted(shuffled[3]), question  # the same quotes
        assert plain[:3] == turned[:3] == shuffled[:3], question
        orders.append((plain[3], turned[3], shuffled[3]))
    # the orders differ: the turns and the shuffle did move the quotes
    assert any(p != t for p, t, _ in orders) and all(p != s for p, _, s in orders), orders


def test_a_float_asked_of_a_page_that_holds_none_is_said_missing(corpus_warehouse: IngestedWarehouse) -> None:
    # the guide's file page 14 holds a table and no figure, and its page printed 14 (the file's 16th)
    # neither; its pages 15 and 17 hold no float. Its staging table, printed 20 (the file's 22nd), is
    # parsed as a figure: a table asked of that page is answered (the next test)
    root = corpus_warehouse.root

    def answer(question: str) -> str:
        return json.loads(run_cli(root, "ask", question, "--doc", DOC, "--json").stdout)["answer"]

    assert answer("What does the figure on page 14 show?").endswith("page 14 holds no figure.")
    assert answer("What does the table on page 15 show?").endswith("page 15 holds no table.")
    assert "holds no" not in answer("What does the table on page 14 show?")
    assert "holds no" not in answer("What does the table on page 20 show?")
    assert float_on_named_page("What is the table of contents on page 2?") is None
    assert float_on_named_page("How many people are in the images on the cover?") == ("figure", "the cover")


def test_a_question_naming_a_page_is_answered_from_it(corpus_warehouse: IngestedWarehouse) -> None:
    # the fitted ranker weighs a candidate off the pages the question may mean (the file's 20th, the
    # page printed 20: the file's 22nd) down (answer_features "off_named_page"); without the page,
    # the same questions are answered from other pages of the guide
    root = corpus_warehouse.root

    def cited(question: str, *scope: str) -> set[int]:
        answer = json.loads(run_cli(root, "ask", question, *scope, "--json").stdout)
        return {int(s["page"]) for s in answer["sources"]}

    named = cited("What does the table on page 20 show?", "--doc", DOC)
    assert named and named <= {20, 22}, named
    assert not cited("What does the table show?", "--doc", DOC) <= {20, 22}
    assert cited("What phone number does the last page give?", "--doc", DOC) == {76}
    assert 76 not in cited("What phone number does the booklet give?", "--doc", DOC)
