"""The one base of every configuration shape: unknown keys are refused, values are frozen.

Every option either does what it says or is refused with a message naming it. An option that only
one backend reads is refused on the others when it is given a value other than its default (a
default stated in configs/default.yaml must not break switching backends with one `--set`).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    def changed(self, *names: str) -> list[str]:
        """Those of `names` whose value differs from their default."""
        fields = type(self).model_fields
        return [n for n in names if getattr(self, n) != fields[n].get_default(call_default_factory=True)]

    def refuse_changed(self, names: tuple[str, ...], reason: str) -> None:
        """Raise (pydantic reports it as a validation error) when any of `names` was changed."""
        if changed := self.changed(*names):
            raise ValueError(f"{', '.join(changed)}: {reason}")
