"""One source of defaults: the configuration models' defaults are the defaults; configs/default.yaml
is written from them (interleaf/config_reference.py), states every option, and loads to the same
settings; options that would do nothing are refused with a message naming them."""

from __future__ import annotations

from typing import Any, get_args

import pytest
import yaml
from pydantic import BaseModel, ValidationError

from interleaf.config import DEFAULT_CONFIG, MODEL_PRESETS, Settings, load_settings, model_overrides
from interleaf.config_reference import reference_yaml
from interleaf.describe.config import CroppedKind
from interleaf.errors import ConfigError
from interleaf.index.config import IndexConfig
from interleaf.kinds import CROPPED_KINDS

# every section but `warehouse` (a path: --warehouse)
DOCUMENTED = tuple(name for name in Settings.model_fields if name != "warehouse")


def test_default_yaml_is_the_one_written_from_the_models() -> None:
    assert DEFAULT_CONFIG.read_text() == reference_yaml(), (
        "configs/default.yaml differs from the models: run `python -m interleaf.config_reference --write`"
    )
    assert load_settings(DEFAULT_CONFIG) == Settings()


def _missing(model: BaseModel, stated: Any, path: str) -> list[str]:
    """Options of `model` (and of its nested models) that the YAML mapping `stated` leaves out."""
    if not isinstance(stated, dict):
        return [path]
    missing = []
    for name in type(model).model_fields:
        value = getattr(model, name)
        where = f"{path}.{name}"
        if name not in stated:
            missing.append(where)
        elif isinstance(value, BaseModel):
            missing += _missing(value, stated[name], where)
        elif isinstance(value, list) and value and isinstance(value[0], BaseModel):
            missing += [m for i, item in enumerate(value) for m in _missing(item, stated[name][i], f"{where}[{i}]")]
    return missing


def test_default_yaml_states_every_option_of_its_sections() -> None:
    stated = yaml.safe_load(DEFAULT_CONFIG.read_text())
    settings = Settings()
    assert [m for section in DOCUMENTED for m in _missing(getattr(settings, section), stated[section], section)] == []


def test_every_model_preset_is_a_valid_configuration() -> None:
    for name in yaml.safe_load(MODEL_PRESETS.read_text()):
        load_settings(overrides=model_overrides(name))


def test_describe_kinds_are_the_kinds_a_parser_crops() -> None:
    assert set(get_args(CroppedKind)) == CROPPED_KINDS
    with pytest.raises(ConfigError, match=r"describe\.kinds"):
        load_settings(overrides=["describe.kinds=[figure, text]"])  # a text quote has no crop to read


def retriever(**options: Any) -> None:
    IndexConfig.model_validate({"retrievers": [{"name": "r", **options}]})


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"kind": "dense", "model": "m", "k1": 1.5}, "dense.k1"),  # a BM25 option on a dense retriever
        ({"kind": "bm25", "model": "m"}, "bm25.model"),
        ({"kind": "bm25", "device": "cuda"}, "bm25.device"),
        ({"kind": "dense"}, "dense.model"),  # a dense retriever without a model
        ({"kind": "dense", "model": "m", "pooling": "cls"}, "sentence-transformers pools as the model folder says"),
        ({"kind": "dense", "model": "m", "threads": 4}, "threads apply to backend onnx"),
        ({"kind": "dense", "model": "m", "precision": "int8"}, "precision applies to backend onnx"),
        ({"kind": "dense", "model": "m", "backend": "onnx", "precision": "int4"}, "dense.precision"),
        ({"kind": "dense", "model": "m", "backend": "onnx", "device": "cuda"}, "the onnx backend runs on the CPU"),
        ({"kind": "sparse"}, "does not match any of the expected tags"),
    ],
)
def test_retriever_options_of_another_kind_or_backend_are_refused(options: dict[str, Any], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        retriever(**options)


def test_retriever_names_are_unique_and_backend_options_apply_where_read() -> None:
    with pytest.raises(ValidationError, match="unique"):
        IndexConfig.model_validate({"retrievers": [{"name": "a", "kind": "bm25"}, {"name": "a", "kind": "bm25"}]})
    retriever(kind="dense", model="m", backend="onnx", threads=4)
    retriever(kind="dense", model="m", backend="transformers", pooling="last_token", device="cuda")


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("retrieve.quotas={5: [2, 2]}", "add up to the budget"),
        ("retrieve.lmm_filter.backend=openai", None),  # the yaml's default threshold is no change
        ("retrieve.lmm_filter={backend: openai, threshold: 0.7}", "not a probability"),
        ("describe.transformers.min_pixels=900000", "above max_pixels"),
        ("parse.backend=pdf", "parse.backend"),
    ],
)
def test_overrides_that_cannot_work_are_refused(override: str, message: str | None) -> None:
    if message is None:
        load_settings(overrides=[override])
        return
    with pytest.raises(ConfigError, match=message):
        load_settings(overrides=[override])


def test_set_reaches_a_retriever_by_its_name_or_position() -> None:
    settings = load_settings(overrides=["index.retrievers.minilm.precision=int8", "index.retrievers.0.k1=1.5"])
    by_name = {r.name: r for r in settings.index.retrievers}
    assert by_name["minilm"].precision == "int8"
    assert by_name["bm25"].k1 == 1.5
    assert load_settings().index.retrievers[0].k1 != 1.5  # the override changed one run's settings only


@pytest.mark.parametrize(
    ("override", "message"),
    [
        # a wrong value inside an item is shown by the item's name, without pydantic's union tag
        (
            "index.retrievers.1.precision=int4",
            r"--set index\.retrievers\.1\.precision=int4: index\.retrievers\.minilm\.precision = 'int4'",
        ),
        (
            "index.retrievers.minilm.precison=int8",
            r"unknown key index\.retrievers\.minilm\.precison \(did you mean precision\?\); "
            r"index\.retrievers\.minilm accepts: .*precision",
        ),
        ("index.retrievers.bm25.k1=abc", r"index\.retrievers\.bm25\.k1 = 'abc' is not accepted; it takes float"),
        (
            "index.retrievers.clip.model=x",
            r"index\.retrievers has no item 'clip'; name one \(bm25, minilm\) or give its position \(0 to 1\)",
        ),
        ("parse.backend.x=1", r"parse\.backend is a value \('layout'\), not a section with keys"),
    ],
)
def test_set_into_a_list_or_a_value_is_refused_in_the_users_terms(override: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_settings(overrides=[override])
