"""V-RAG's LMM filter applied to a ranking (dochaystack-vrag §4 LMM-filter module).

V-RAG pairs each of its top-m images with the question, asks an open-source VLM "Can this image
provide answers to this question? Respond only with yes or no" and keeps only the pairs answered
yes. Here the candidates are the image quotes among the first `top_m` of the fused (and reranked)
ranking; text quotes are never sent. Quotes answered no leave the ranking before the modality
quotas cut the contexts, so the image slots go to the next candidates. A failed call or an
unreadable answer keeps its candidate (`on_error: keep`): an outage must not remove evidence.

Pure given its arguments: image bytes come through `load_image` (the caller reads the crops), the
VLM through the `ImageFilter`.
"""

from __future__ import annotations

from collections.abc import Callable

from interleaf.retrieve.config import LMMFilterConfig
from interleaf.retrieve.loaded_index import LoadedIndex
from interleaf.retrieve.protocol import FilterRequest, ImageFilter, Verdict

ImageLoader = Callable[[str], bytes]  # a quote's img_path (relative to the warehouse) -> PNG bytes


def candidates(index: LoadedIndex, ranking: list[tuple[str, float]], top_m: int) -> list[str]:
    """The image quotes with a crop among the first `top_m` of the ranking, best first."""
    pos = index.position
    return [q for q, _ in ranking[:top_m] if index.modalities[pos[q]] == "image" and index.corpus.img_paths[pos[q]]]


def kept(verdict: Verdict, on_error: str) -> bool:
    return verdict.keep if verdict.keep is not None else on_error == "keep"


def filter_ranking(
    index: LoadedIndex,
    question: str,
    ranking: list[tuple[str, float]],
    image_filter: ImageFilter,
    load_image: ImageLoader | None,
    config: LMMFilterConfig,
) -> tuple[list[tuple[str, float]], list[Verdict]]:
    """The ranking without the image quotes judged no, and every verdict in ranking order."""
    if load_image is None:
        raise ValueError("the LMM filter needs `load_image` to read the image quotes' crops")
    pos = index.position
    targets = candidates(index, ranking, config.top_m)
    requests: list[FilterRequest] = []
    unread: dict[str, Verdict] = {}
    for quote_id in targets:
        path = str(index.corpus.img_paths[pos[quote_id]])
        try:
            requests.append(FilterRequest(quote_id, load_image(path)))
        except OSError as exc:  # a crop deleted since indexing: unjudged, like a failed call
            unread[quote_id] = Verdict(quote_id, None, None, f"cannot read {path}: {exc}")
    judged = image_filter.judge(question, requests) if requests else []
    if [v.quote_id for v in judged] != [r.quote_id for r in requests]:
        raise ValueError(f"LMM filter {image_filter.name!r} answered {len(judged)} verdicts for {len(requests)} images")
    by_quote = {v.quote_id: v for v in judged} | unread
    verdicts = [by_quote[q] for q in targets]
    dropped = {v.quote_id for v in verdicts if not kept(v, config.on_error)}
    return [(q, s) for q, s in ranking if q not in dropped], verdicts
