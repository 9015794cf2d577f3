"""Collect runtime observations, one per (kind, site, key), counting the steps they fired in."""

from __future__ import annotations

from dataclasses import dataclass, field

from torchlint.probe.json_types import Facts, ObservationJson, SiteJson, SpanJson
from torchlint.probe.sites import Site

# One observation per (kind, path, line, key): the key tells apart what one line does several times.
_Key = tuple[str, str, int, object]

KINDS = (
    "device-mismatch",
    "module-device-split",
    "non-contiguous-view",
    "implicit-copy",
    "memory-format-mismatch",
    "host-sync",
    "grads-not-cleared",
    "grads-zero-at-step",
    "eval-mode-in-training",
    "graph-retained",
    "param-never-updated",
    "crash",
    "ddp-before-device-move",
    "process-group-missing",
    "sampler-epoch-not-set",
)


@dataclass
class Observation:
    kind: str
    path: str
    line: int
    message: str
    first_step: int
    facts: Facts
    steps: set[int] = field(default_factory=set)
    stack: list[SiteJson] = field(default_factory=list)  # the user's call chain, innermost first (Site.stack)
    span: tuple[int, int, int, int] | None = None  # the expression at `line` (Site.span), for editors

    def to_json(self) -> ObservationJson:
        if self.span is None:
            where: SpanJson = {}
        else:
            where = {"column": self.span[1], "end_line": self.span[2], "end_column": self.span[3]}
        return {
            "kind": self.kind,
            "path": self.path,
            "line": self.line,
            **where,
            "message": self.message,
            "count": len(self.steps),
            "first_step": self.first_step,
            "facts": self.facts,
            "stack": self.stack,
        }


class Observations:
    """The store. `step` is the 1-based index of the optimizer step being worked towards."""

    def __init__(self) -> None:
        self._items: dict[_Key, Observation] = {}
        self.summaries: dict[_Key, Observation] = {}  # end-of-run observations, recomputed as a whole
        self.step = 1
        self.events = 0  # every add(): a step that adds none showed nothing (sampling.py)

    def add(
        self, kind: str, site: Site | None, message: str, facts: Facts, key: object = None, step: int | None = None
    ) -> Observation | None:
        if site is None:
            return None
        assert kind in KINDS, kind
        step = self.step if step is None else step
        self.events += 1
        k = (kind, site.path, site.line, key)
        obs = self._items.get(k)
        if obs is None:
            if site.via and "via" not in facts:
                facts = {**facts, "via": site.via}
            obs = self._items[k] = Observation(
                kind, site.path, site.line, message, step, facts, stack=site.stack(), span=site.span()
            )
        obs.steps.add(step)
        return obs

    def replace(
        self, kind: str, site: Site | None, key: object, message: str, facts: Facts, steps: set[int], first: int
    ) -> None:
        """Set an observation computed as a whole (end-of-run summaries); as `add`, none without a site."""
        if site is None:
            return
        self.summaries[(kind, site.path, site.line, key)] = Observation(
            kind, site.path, site.line, message, first, facts, set(steps), site.stack(), site.span()
        )

    def items(self) -> list[Observation]:
        return sorted([*self._items.values(), *self.summaries.values()], key=lambda o: (o.path, o.line, o.kind))
