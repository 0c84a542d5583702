"""Prompts live in prompts/*.md; they are rendered strictly and named by the hash of their text.

Placeholders are written `{{ name }}`. Rendering fails on a missing variable and on an unused
one, so a prompt and the code that fills it cannot drift apart silently. The hash goes into the
stage fingerprint and into every row the prompt produced.
"""

from __future__ import annotations

import functools
import hashlib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from interleaf.errors import InterleafError

PROMPTS_DIR = Path(__file__).resolve().parent.parent / "prompts"
_PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")


class PromptError(InterleafError):
    pass


@dataclass(frozen=True)
class Prompt:
    name: str
    text: str

    @property
    def hash(self) -> str:
        return hashlib.sha256(self.text.encode()).hexdigest()[:16]

    @property
    def variables(self) -> frozenset[str]:
        return frozenset(_PLACEHOLDER.findall(self.text))

    def render(self, **values: Any) -> str:
        missing = sorted(self.variables - values.keys())
        unused = sorted(values.keys() - self.variables)
        if missing or unused:
            raise PromptError(f"prompt {self.name}: missing variables {missing}, unused variables {unused}")
        return _PLACEHOLDER.sub(lambda m: str(values[m.group(1)]), self.text).strip()


@functools.cache
def load_prompt(name: str, directory: Path = PROMPTS_DIR) -> Prompt:
    path = directory / (name if name.endswith(".md") else f"{name}.md")
    try:
        return Prompt(path.stem, path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise PromptError(f"cannot read prompt {path}: {exc}") from exc
