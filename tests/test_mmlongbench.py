"""MMLongBench-Doc scoring (interleaf.evaluate.mmlongbench) on the benchmark's own dev questions, and against the
benchmark's released scorer (shared/benchmarks/mmlongbench-dev/eval_score.py) on perturbed answers."""

from __future__ import annotations

import ast
import contextlib
import importlib.util
import io
import json
import random
import re
from pathlib import Path
from types import ModuleType

import pytest

from interleaf.evaluate.mmlongbench import (
    FAIL_TO_ANSWER,
    NOT_ANSWERABLE,
    SOURCE_NAMES,
    Sample,
    accuracy_and_f1,
    breakdown,
    extraction_messages,
    page_recall,
    parse_extraction,
    read_samples,
    score,
)
from interleaf.questions.mmlongbench import must_include

BENCH = Path(__file__).resolve().parents[2] / "shared" / "benchmarks" / "mmlongbench-dev"  # ../shared, as conftest
SAMPLES = BENCH / "samples.json"
RELEASED = BENCH / "eval_score.py"
PROMPT = BENCH / "prompt_for_answer_extraction.md"
needs_bench = pytest.mark.skipif(not SAMPLES.exists(), reason=f"MMLongBench-Doc dev half not at {BENCH}")


@pytest.fixture(scope="module")
def samples() -> list[Sample]:
    if not SAMPLES.exists():
        pytest.skip(f"MMLongBench-Doc dev half not at {BENCH}")
    return read_samples(SAMPLES)


@pytest.fixture(scope="module")
def released() -> ModuleType:
    """The released eval_score.py, imported from its path (it is not a package)."""
    if not RELEASED.exists():
        pytest.skip(f"the benchmark's released scorer not at {RELEASED}")
    spec = importlib.util.spec_from_file_location("mmlongbench_released_eval_score", RELEASED)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def released_score(module: ModuleType, gold: str, pred: str | list[object], answer_format: str) -> float:
    with contextlib.redirect_stdout(io.StringIO()):  # its List branch prints every comparison
        return float(module.eval_score(gold, pred, answer_format))


def by_answer(samples: list[Sample], answer: str, answer_format: str) -> Sample:
    (sample,) = [s for s in samples if (s.answer, s.answer_format) == (answer, answer_format)]
    return sample


# --- reading -------------------------------------------------------------------------------------------------------


def test_read_samples_real_file(samples: list[Sample]) -> None:
    assert len(samples) == 298
    assert len({s.doc_id for s in samples}) == 35
    formats = {f: sum(s.answer_format == f for s in samples) for f in ("Int", "Float", "Str", "List", "None")}
    assert formats == {"Int": 75, "Float": 65, "Str": 60, "List": 34, "None": 64}
    assert all(s.answerable == (s.answer_format != "None") for s in samples)
    assert {src for s in samples for src in s.evidence_sources} == set(SOURCE_NAMES)
    first = samples[0]
    assert first.evidence_pages == (2,) and first.evidence_sources == ("Pure-text (Plain-text)",)


@needs_bench
def test_read_samples_malformed_names_file_and_index(tmp_path: Path) -> None:
    rows = json.loads(SAMPLES.read_text(encoding="utf-8"))[:3]
    rows[1]["evidence_pages"] = "[2, "  # a truncated literal
    bad = tmp_path / "samples.json"
    bad.write_text(json.dumps(rows), encoding="utf-8")
    with pytest.raises(ValueError, match=rf"{re.escape(str(bad))}: sample 1: "):
        read_samples(bad)
    rows[1] = {k: v for k, v in rows[1].items() if k != "answer_format"}
    bad.write_text(json.dumps(rows), encoding="utf-8")
    with pytest.raises(ValueError, match="sample 1: 'answer_format'"):
        read_samples(bad)


# --- score, format by format ------------------------------------------------------------------------------------


def test_every_gold_scores_itself_except_the_non_integer_int_golds(samples: list[Sample]) -> None:
    misses = {(s.answer, s.answer_format) for s in samples if score(s.answer, s.answer, s.answer_format) != 1.0}
    # Three Int golds are not integers; the released int(gold) fails on them and they can never score.
    assert misses == {("21%", "Int"), ("14:04 CET", "Int"), ("yes", "Int")}


def test_the_gold_strings_an_answer_holds(samples: list[Sample]) -> None:
    by_format = {f: next(s for s in samples if s.answer_format == f) for f in ("Str", "List", "None")}
    assert must_include(by_format["Str"]) == [by_format["Str"].answer.strip()]
    assert must_include(by_format["List"]) == [str(i).strip() for i in ast.literal_eval(by_format["List"].answer)]
    assert must_include(by_format["None"]) == []
    # a Str answer the benchmark writes as a one-item list: its item, not the brackets
    (listed,) = [s for s in samples if s.answer_format == "Str" and s.answer.startswith("[")]
    assert must_include(listed) == [ast.literal_eval(listed.answer)[0]]


def test_int(samples: list[Sample]) -> None:
    gold = samples[38]
    assert (gold.answer, gold.answer_format) == ("9", "Int")
    assert score(gold.answer, "9", "Int") == 1.0
    assert score(gold.answer, " 9.0 ", "Int") == 1.0
    assert score(gold.answer, "9.7", "Int") == 1.0  # int(float(pred)) truncates, as released
    assert score(gold.answer, "10", "Int") == 0.0
    assert score(gold.answer, "nine", "Int") == 0.0
    assert score(gold.answer, ["9"], "Int") == 0.0


def test_float_percent_forms(samples: list[Sample]) -> None:
    gold = by_answer(samples, "15.9%", "Float")
    for pred in ("15.9", "15.9%", "0.159", "1590", "16.0", "$15.9"):  # 16.0 is within rel_tol 0.01
        assert score(gold.answer, pred, "Float") == 1.0, pred
    for pred in ("16.5", "0.17", "15.9 percent", "n/a"):
        assert score(gold.answer, pred, "Float") == 0.0, pred
    # rounding to max(min(decimals), 2) places: 0.1 (index 10) matches 0.104 but not 0.11
    assert samples[10].answer == "0.1"
    assert score("0.1", "0.104", "Float") == 1.0
    assert score("0.1", "0.11", "Float") == 0.0


def test_str_anls_threshold(samples: list[Sample]) -> None:
    gold = samples[0].answer
    assert gold == "Berlin School of Experimental Psychology"
    near = "Berlin School of Experimental Psych"
    assert score(gold, near, "Str") == pytest.approx(1 - 5 / len(gold))
    assert score(gold, near.upper(), "Str") == pytest.approx(1 - 5 / len(gold))  # compared lower-cased
    assert score(gold, "Berlin School", "Str") == 0.0  # similarity 13/40 is under the 0.5 threshold
    assert score(gold, f"'{gold}' (Germany)", "Str") == 1.0  # quotes and parentheses are cleaned away


def test_exact_match_strings(samples: list[Sample]) -> None:
    date = by_answer(samples, "2003-10-07", "Str")
    assert score(date.answer, "2003-10-07", "Str") == 1.0
    assert score(date.answer, "2003-10-08", "Str") == 0.0  # ANLS would give 0.9
    number = by_answer(samples, "18", "Str")
    assert score(number.answer, "18", "Str") == 1.0
    assert score(number.answer, "180", "Str") == 0.0
    time = by_answer(samples, "1884 April 5, 10 45 a.m.", "Str")
    assert score(time.answer, "1884 April 5, 10 45 p.m.", "Str") == 0.0
    # The released phone pattern allows one "-" group only: a toll-free number falls back to ANLS.
    phone = by_answer(samples, "1-800-275-2273", "Str")
    assert score(phone.answer, "1-800-275-2274", "Str") == pytest.approx(1 - 1 / 14)


def test_list(samples: list[Sample]) -> None:
    shapes = by_answer(samples, "['Circle', 'Rectangle']", "List")
    assert score(shapes.answer, "['Rectangle', 'Circle']", "List") == 1.0
    assert score(shapes.answer, ["rectangle", "circle"], "List") == 1.0
    assert score(shapes.answer, "['Circle']", "List") == 0.0
    assert score(shapes.answer, "['Circle', 'Rectangle', 'Square']", "List") == 0.0
    assert score(shapes.answer, "['Circle', 'Rectangl']", "List") == pytest.approx(1 - 1 / 9)  # the lowest ANLS
    numbers = by_answer(samples, "['3', '4']", "List")
    assert score(numbers.answer, "['4', '3']", "List") == 1.0
    assert score(numbers.answer, "['4', '5']", "List") == 0.0  # numbers compare exactly
    assert score("[62, 30]", "['30', '62']", "List") == 1.0  # ints and strings clean to the same text
    # Never eval: a pred that is not a literal is one plain element.
    assert score(shapes.answer, "[__import__('os').getcwd(), 'x']", "List") == 0.0
    assert score("['a']", "[a]", "List") == 0.0


def test_not_answerable(samples: list[Sample]) -> None:
    gold = next(s for s in samples if not s.answerable)
    assert (gold.answer, gold.answer_format) == (NOT_ANSWERABLE, "None")
    assert score(gold.answer, NOT_ANSWERABLE, "None") == 1.0
    assert score(gold.answer, "not answerable", "None") == 1.0
    assert score(gold.answer, FAIL_TO_ANSWER, "None") == 0.0
    with pytest.raises(ValueError, match="answer_format"):
        score(gold.answer, NOT_ANSWERABLE, "Integer")


# --- the released scorer, side by side ----------------------------------------------------------------------------


def perturbations(sample: Sample, others: list[Sample], rng: random.Random) -> list[str | list[object]]:
    """Predictions near and far from the gold: shifted numbers, truncated strings, reordered / shortened lists, and
    other questions' golds."""
    gold = sample.answer
    preds: list[str | list[object]] = [gold, gold.upper(), f'"{gold}"', NOT_ANSWERABLE, FAIL_TO_ANSWER]
    preds += [other.answer for other in rng.sample(others, 3)]
    if sample.answer_format in ("Int", "Float"):
        try:
            value = float(gold.strip().rstrip("%"))
        except ValueError:
            value = 0.0
        factors = (1.0, 1.005, 0.98, 1.02, 1.1, 0.5, rng.uniform(0.97, 1.03))
        preds += [f"{value * f}" for f in factors] + [f"{value / 100}", f"{value * 100}", f"{value}%"]
        preds += [f"{round(value, 1)}", f"{value + 1:.0f}", f"{value - 0.01}", f"${value}", f"{value} (about)"]
    elif sample.answer_format in ("Str", "None"):
        preds += [gold[: len(gold) // 2], gold[: 3 * len(gold) // 4], gold[:-1], gold + "s", gold[::-1]]
        preds += [gold.replace("e", "a"), f"{gold} (page 3)"]
    else:
        items = ast.literal_eval(gold)
        shuffled = rng.sample(items, len(items))
        preds += [repr(items[::-1]), repr(shuffled), repr(items[:-1]), list(shuffled), ", ".join(map(str, items))]
        preds += [repr([str(item)[: max(1, len(str(item)) - 2)] for item in items]), repr([*items, "extra"])]
        preds += [repr([f"{item}".upper() for item in shuffled]), repr([str(item) + "0" for item in items])]
    return preds


def test_scores_equal_the_released_scorer(samples: list[Sample], released: ModuleType) -> None:
    rng = random.Random(20240601)
    pairs = [(s.answer, p, s.answer_format) for s in samples for p in perturbations(s, samples, rng)]
    assert len(pairs) > 2000
    ours = [score(gold, pred, fmt) for gold, pred, fmt in pairs]
    theirs = [released_score(released, gold, pred, fmt) for gold, pred, fmt in pairs]
    differ = [(pair, a, b) for pair, a, b in zip(pairs, ours, theirs, strict=True) if a != b]
    assert not differ, differ[:10]
    # the pairs reach every outcome: misses, partial ANLS credit and full marks
    assert {0.0, 1.0} <= set(ours) and sum(0.0 < v < 1.0 for v in ours) > 50


def hand_scored(samples: list[Sample]) -> list[tuple[Sample, str, float]]:
    answerable = [s for s in samples if s.answerable][:3]
    unanswerable = [s for s in samples if not s.answerable][:3]
    return [
        (answerable[0], "a", 1.0),
        (answerable[1], NOT_ANSWERABLE, 0.0),
        (answerable[2], "b", 0.6),
        (unanswerable[0], NOT_ANSWERABLE, 1.0),
        (unanswerable[1], "c", 0.0),
        (unanswerable[2], "d", 0.0),
    ]


def test_accuracy_and_f1_by_hand(samples: list[Sample]) -> None:
    scored = hand_scored(samples)
    # accuracy 2.6 / 6; recall 1.6 / 3 answerable golds; precision 1.6 / 4 preds that are not "Not answerable"
    recall, precision = 1.6 / 3, 1.6 / 4
    accuracy, f1 = accuracy_and_f1(scored)
    assert accuracy == pytest.approx(2.6 / 6)
    assert f1 == pytest.approx(2 * recall * precision / (recall + precision))
    assert accuracy_and_f1([]) == (0.0, 0.0)
    assert accuracy_and_f1(scored[3:4]) == (1.0, 0.0)  # no answerable gold: F1 0, as released


def test_accuracy_and_f1_equal_the_released(samples: list[Sample], released: ModuleType) -> None:
    scored = hand_scored(samples)
    rows = [{"answer": s.answer, "pred": p, "score": v} for s, p, v in scored]
    assert accuracy_and_f1(scored) == pytest.approx(released.eval_acc_and_f1(rows))


def test_breakdown_equals_released_show_results(samples: list[Sample], released: ModuleType, tmp_path: Path) -> None:
    rng = random.Random(7)
    scored = []
    for sample in samples:
        pred = rng.choice(perturbations(sample, samples, rng))
        scored.append((sample, str(pred), score(sample.answer, str(pred), sample.answer_format)))
    rows = [
        {**raw, "pred": pred, "score": value}
        for raw, (_, pred, value) in zip(json.loads(SAMPLES.read_text(encoding="utf-8")), scored, strict=True)
    ]
    shown = tmp_path / "results.txt"
    released.show_results(rows, show_path=str(shown))
    lines: dict[str, tuple[float, int]] = {}
    for line in shown.read_text(encoding="utf-8").splitlines():
        parts = line.split(" | ")  # "Name | Accuracy: x | Question Number: n" or "Overall Acc: x | Question Number: n"
        if len(parts) == 3:
            lines[parts[0]] = (float(parts[1].split(": ")[1]), int(parts[2].split(": ")[1]))
        elif len(parts) == 2:
            name, value = parts[0].rsplit(": ", 1)
            lines[name] = (float(value), int(parts[1].split(": ")[1]))

    result = breakdown(scored)
    assert lines["Overall Acc"] == pytest.approx((result.overall.accuracy, result.overall.n))
    assert lines["Overall F1-score"][0] == pytest.approx(result.f1)
    assert [(name, group.n) for name, group in result.by_pages.items()] == [
        ("Single-page", 135),
        ("Cross-page", 101),
        ("Unanswerable", 64),
    ]
    for name, group in result.by_pages.items():
        assert lines[name] == pytest.approx((group.accuracy, group.n)), name
    sources = {k.removeprefix("Evidence Sources: ") for k in lines if k.startswith("Evidence Sources: ")}
    assert {SOURCE_NAMES[s] for s in sources} == set(result.by_source)
    for source in sources:
        group = result.by_source[SOURCE_NAMES[source]]
        assert lines[f"Evidence Sources: {source}"] == pytest.approx((group.accuracy, group.n)), source
    doc_types = {k.removeprefix("Document Type: ") for k in lines if k.startswith("Document Type: ")}
    assert doc_types == set(result.by_doc_type)
    for doc_type, group in result.by_doc_type.items():
        assert lines[f"Document Type: {doc_type}"] == pytest.approx((group.accuracy, group.n)), doc_type
    assert {name: group.n for name, group in result.by_format.items()} == {
        "Int": 75,
        "Float": 65,
        "Str": 60,
        "List": 34,
        "None": 64,
    }
    assert 0.0 < (result.overall.accuracy or 0.0) < 1.0


# --- answer extraction ----------------------------------------------------------------------------------------------


def test_parse_extraction() -> None:
    assert parse_extraction("Extracted answer: 10\nAnswer format: Integer") == ("10", "Integer")
    fenced = "```\nExtracted answer: ['Circle', 'Rectangle']\nAnswer format: List\n```"
    assert parse_extraction(fenced) == ("['Circle', 'Rectangle']", "List")
    assert parse_extraction("**EXTRACTED ANSWER:** Not answerable\n**answer format:** String") == (
        NOT_ANSWERABLE,
        "String",
    )
    assert parse_extraction("extracted answer: 15.9%") == ("15.9%", "String")  # no format line
    assert parse_extraction("I cannot help with that.") == (FAIL_TO_ANSWER, "String")
    assert parse_extraction("Extracted answer:\nAnswer format: Float") == (FAIL_TO_ANSWER, "Float")
    extracted, _ = parse_extraction("```text\nExtracted answer: ['Rectangle', 'Circle']\nAnswer format: List\n```")
    assert score("['Circle', 'Rectangle']", extracted, "List") == 1.0


@pytest.mark.skipif(not PROMPT.exists(), reason=f"the benchmark's extraction prompt not at {PROMPT}")
def test_extraction_messages_and_the_prompts_own_examples() -> None:
    prompt = PROMPT.read_text(encoding="utf-8")
    messages = extraction_messages(prompt, "How many datasets?", "The paper uses 9 datasets.")
    assert messages == [
        {"role": "user", "content": prompt},
        {"role": "assistant", "content": "\n\nQuestion:How many datasets?\nAnalysis:The paper uses 9 datasets.\n"},
    ]
    (single,) = extraction_messages(prompt, "Q", "A", single_turn=True)
    assert single == {"role": "user", "content": prompt + "\n\nQuestion:Q\nAnalysis:A\n"}
    # the prompt's worked examples parse to their own answers
    examples = re.findall(r"^(Extracted answer: .*\nAnswer format: .*)$", prompt, re.M)
    assert [parse_extraction(e) for e in examples][1:] == [  # [0] is the "[answer]" template
        (
            "['Is the servife safe?', 'Is the service effective', 'Is the serve caring?', "
            "'Is the service responsive?', 'Is the service well-led?']",
            "List",
        ),
        ("10", "Integer"),
        (NOT_ANSWERABLE, "String"),
        (FAIL_TO_ANSWER, "String"),
    ]


# --- retrieval: evidence pages among the retrieved quotes --------------------------------------------------------


def test_page_recall(samples: list[Sample]) -> None:
    evidence = [s.evidence_pages for s in samples]
    with_pages = [pages for pages in evidence if pages]
    # 62 unanswerable questions and one answerable one (index 257) give no page: left out
    assert len(with_pages) == 235
    # every question's first evidence page, as a 0-based page_idx, at rank 3 behind pages far away
    contexts = [(900, 901, pages[0] - 1, 902) if pages else (0, 1, 2) for pages in evidence]
    shares, n = page_recall(contexts, evidence, ks=(1, 2, 3, 20))
    assert n == 235
    assert shares == {1: 0.0, 2: 0.0, 3: 1.0, 20: 1.0}
    # 1-based pages passed as 0-based page_idx name the next page: a hit only where that page is evidence too
    off_by_one = [tuple(pages) for pages in evidence]
    shares, _ = page_recall(off_by_one, evidence, ks=(1,))
    assert shares[1] == pytest.approx(sum(pages[0] + 1 in pages for pages in with_pages) / 235)
    assert 0.0 < shares[1] < 0.5
    assert page_recall([(), ()], [(), ()]) == (dict.fromkeys((1, 5, 10, 20)), 0)
    with pytest.raises(ValueError):
        page_recall([(1,)], [])
