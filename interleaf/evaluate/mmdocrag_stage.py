"""`interleaf eval --mmdocrag FILE` as two stages of the one stage contract, run by pipeline/stage_task.py's
`run_unit` like every other (cache, ledger rows, rejects, atomic writes):

- `mmdocrag_generate`: the file's fixed 15- or 20-quote contexts answered by the configured
  generator -> `answers` and `citations`, written as the generate stage writes them (scope "fixed").
  A malformed line of the file is a reject naming the file and line; so is a generator error.
- `mmdocrag_evaluate`: the stored answers, read back through interleaf/stored_answers.py, against
  the file's gold quotes and answers -> `eval_metrics` (every metric of the papers, both citation
  parsings of citation_sets.py, the breakdowns of MMDocRAG's appendix).

The unit is the file's content (`mmdocrag_unit`): an edited file is a new unit, the same file asked
again computes nothing. The file itself, already read, is the unit's `source`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa

from interleaf.evaluate.answers import Answered, answer_record, metric_rows
from interleaf.evaluate.config import EvaluateConfig
from interleaf.evaluate.metric_rows import measured_by
from interleaf.evaluate.metrics import ByModality
from interleaf.evaluate.mmdocrag import MMDocRAGFile, image_loader
from interleaf.evaluate.stage import judge_prompts, judge_version
from interleaf.fingerprint import sha256_file
from interleaf.generate.citations import check_answer
from interleaf.generate.config import GenerateConfig
from interleaf.generate.protocol import Generator
from interleaf.generate.registry import get_chat_model
from interleaf.generate.stage import GenerateStage, answer_row, citation_rows
from interleaf.stage import StageInput, StageOutput
from interleaf.stored_answers import stored_answers
from warehouse import schemas

SCOPE = "fixed"  # MMDocRAG's given contexts: nothing is retrieved


def mmdocrag_unit(path: str | Path) -> str:
    """The question set's id: the file's name and a prefix of its content hash."""
    return f"mmdocrag-{Path(path).stem}-{sha256_file(Path(path))[:12]}"


class MMDocRAGAnswerStage:
    """An MMDocRAG file (the unit's source) -> `answers` and `citations` of its fixed contexts."""

    name = "mmdocrag_generate"
    unit = "question_set"
    page_work = False
    inputs: tuple[str, ...] = ()
    outputs = ("citations", "answers")
    upstream: tuple[str, ...] = ()
    sources = (
        *GenerateStage.sources,
        "interleaf.evaluate.mmdocrag",
        "interleaf.evaluate.mmdocrag_stage",
        "interleaf.evaluate.breakdowns",
    )
    retries = 0
    retry_on: tuple[type[BaseException], ...] = ()

    def __init__(self, config: GenerateConfig, generator: Generator | None = None) -> None:
        # the generate stage's own configuration, prompts and version: the same answer, the same name
        self._generate = GenerateStage(config, SCOPE, generator)

    def config(self) -> dict[str, Any]:
        return self._generate.config()

    def prompt_hashes(self) -> list[str]:
        return self._generate.prompt_hashes()

    def version(self) -> dict[str, str]:
        return self._generate.version()

    def run(self, given: StageInput) -> StageOutput:
        file: MMDocRAGFile = given.source
        generator = self._generate.generator
        mode = self._generate.settings.input_mode
        requests = [item.request(mode, file.images_root) for item in file.items]
        generated = generator.generate(requests, image_loader(file.images_root))
        prompt_hash = ",".join(sorted(self.prompt_hashes())) or None
        answers, citations = [], []
        rejects: list[tuple[str | None, str]] = [(None, str(r)) for r in file.rejects]
        for request, answer in zip(requests, generated, strict=True):
            checked = check_answer(answer.markdown, request.quotes)
            key = {"qset_id": given.unit, "question_id": request.question_id, "scope": SCOPE}
            answers.append(key | answer_row(request, answer, checked, generator, prompt_hash))
            citations += [key | row for row in citation_rows(checked, request)]
            if answer.error:
                rejects.append((request.question_id, f"generate ({generator.name}): {answer.error}"))
        return StageOutput(
            {
                "citations": pa.Table.from_pylist(citations, schema=schemas.CITATIONS),
                "answers": pa.Table.from_pylist(answers, schema=schemas.ANSWERS),
            },
            rejects=rejects,
            counts={"answers": len(answers), "lines_rejected": len(file.rejects)},
        )


class MMDocRAGEvaluateStage:
    """Stored answers of an MMDocRAG file against its gold -> `eval_metrics`."""

    name = "mmdocrag_evaluate"
    unit = "question_set"
    inputs = ("answers", "citations")
    outputs = ("eval_metrics",)
    upstream = ("mmdocrag_generate",)
    sources = ("interleaf.evaluate", "interleaf.stored_answers", "interleaf.evidence")
    retries = 0
    retry_on: tuple[type[BaseException], ...] = ()

    def __init__(self, config: EvaluateConfig) -> None:
        self.settings = config

    def config(self) -> dict[str, Any]:
        return {"variant": self.settings.variant, "judge": self.settings.judge.fingerprint_config()}

    def prompt_hashes(self) -> list[str]:
        return judge_prompts(self.settings.judge)

    def version(self) -> dict[str, str]:
        return judge_version(self.settings.judge)

    def run(self, given: StageInput) -> StageOutput:
        file: MMDocRAGFile = given.source
        items = {item.question_id: item for item in file.items}
        contexts = {qid: item.request("text").quotes for qid, item in items.items()}
        answered = []
        for stored in stored_answers(given.tables["answers"], given.tables["citations"], contexts):
            item = items[stored.question_id]
            gold = ByModality(item.gold_text_ids, item.gold_image_ids)
            record = answer_record(stored, gold, item.answer_short, item.answer_interleaved, item.question_type)
            answered.append(Answered(record, item.facts()))
        judge = self.settings.judge
        model = get_chat_model(judge.as_generate()) if judge.backend != "none" else None
        load_image = image_loader(file.images_root) if judge.images else None
        rows = metric_rows(answered, model, judge.families, judge.max_tokens, load_image)
        key = {"run_id": given.run_id, "qset_id": given.unit, "variant": self.settings.variant, "scope": SCOPE}
        key |= {"measured_by": measured_by()}
        table = pa.Table.from_pylist([key | r for r in rows], schema=schemas.EVAL_METRICS)
        return StageOutput({"eval_metrics": table}, counts={"metrics": table.num_rows})
