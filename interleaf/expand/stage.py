"""The expand stage: each question of a set -> weighted clauses (MMDocRAG §4.8 multi-clause queries)."""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from interleaf.expand.config import ExpandConfig
from interleaf.expand.protocol import Clause
from interleaf.expand.registry import get_expander
from interleaf.prompts import load_prompt
from interleaf.stage import StageInput, StageOutput
from interleaf.versions import package_versions
from warehouse import schemas

STAGE = "expand"


class ExpandStage:
    name = STAGE
    unit = "question_set"
    page_work = False
    inputs = ("questions",)
    outputs = ("clauses",)
    upstream = ("questions",)
    sources = ("interleaf.expand", "interleaf.text")
    retries = 0
    retry_on: tuple[type[BaseException], ...] = ()

    def __init__(self, config: ExpandConfig) -> None:
        self.settings = config

    def config(self) -> dict[str, Any]:
        # prf runs inside retrieval (it needs a first ranking): it is part of retrieve's fingerprint
        return self.settings.model_dump(exclude={"prf": True, "prf_docs": True, "prf_terms": True, "llm": {"device"}})

    def prompt_hashes(self) -> list[str]:
        return [load_prompt("expand_query").hash] if self.settings.backend == "llm" else []

    def version(self) -> dict[str, str]:
        if self.settings.backend != "llm":
            return {}
        return {"model": self.settings.llm.model or "", **package_versions(("transformers", "torch"))}

    def run(self, given: StageInput) -> StageOutput:
        expander = get_expander(self.settings)
        rows = []
        for q in given.tables["questions"].to_pylist():
            alone = [Clause(q["question"], "question", self.settings.weights.question)]
            clauses = expander.expand(q["question"]) if expander else alone
            if q.get("context") and expander:  # a chat's follow-up: what was asked before narrows it
                clauses = [*clauses, Clause(q["context"], "context", self.settings.weights.context)]
            rows += [
                {"qset_id": q["qset_id"], "question_id": q["question_id"], "clause_id": i, "text": c.text}
                | {"kind": c.kind, "weight": c.weight, "expander": expander.name if expander else "none"}
                for i, c in enumerate(clauses)
            ]
        return StageOutput({"clauses": pa.Table.from_pylist(rows, schema=schemas.CLAUSES)})


def clauses_by_question(table: pa.Table) -> dict[str, list[Clause]]:
    out: dict[str, list[tuple[int, Clause]]] = {}
    for r in table.to_pylist():
        out.setdefault(r["question_id"], []).append((r["clause_id"], Clause(r["text"], r["kind"], r["weight"])))
    return {q: [c for _, c in sorted(cs, key=lambda x: x[0])] for q, cs in out.items()}
