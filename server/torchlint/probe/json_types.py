"""The shapes of the JSON the probe writes: the child's result, its observations, and the report the
parent makes of them (see docs/probe.md). TypedDicts for the type checker; at run time they are the
plain dicts `json` writes and reads. Keys a shape may lack sit in a `total=False` base."""

from __future__ import annotations

from typing import Any, TypedDict


class ChildRequest(TypedDict):
    """What the launcher tells the child (one JSON argument)."""

    script: str
    args: list[str]
    max_steps: int | None
    max_seconds: float | None
    simulate: bool | None  # None: simulate CUDA when there is none
    gpu: str
    per_rank: bool  # under torch.distributed.run: each rank writes `result.RANK`
    every_step: bool
    source: str | None  # the program to run instead of the script's bytes (a notebook's code cells)
    result: str  # the path the result is written to


class SiteJson(TypedDict):
    """A user source line: an observation's call stack, a related site in its facts."""

    path: str
    line: int


class Facts(TypedDict, total=False):
    """What an observation saw; which keys depends on its kind (see the `Observations.add` calls)."""

    op: str
    function: str
    via: str  # the library function between the user's line and the event
    shows: str  # a crash: the observation kind its error message stands for
    type: str
    message: str
    error: str
    module: str
    majority: str
    optimizer: str
    reason: str
    what: str
    inputs: list[str]
    devices: list[str]
    shapes: list[list[int]]
    strides: list[list[int]]
    formats: list[str]
    size: list[object]  # `.view`'s arguments: sizes, or one shape
    tensors: list[dict[str, str]]
    sites: list[SiteJson]
    steps: list[int]
    parameters: int | list[str]  # how many accumulated, or the names of those never updated
    graph_nodes: list[int]
    bytes: int
    epoch: int
    iterations: int


class SpanJson(TypedDict, total=False):
    """Where on its line an observation's expression is, when Python says (3.11+)."""

    column: int
    end_line: int
    end_column: int


class ObservationJson(SpanJson):
    kind: str
    path: str
    line: int
    message: str
    count: int
    first_step: int
    facts: Facts
    stack: list[SiteJson]  # the user's call chain, innermost first, `path:line` included


class RankedObservation(ObservationJson, total=False):
    ranks: list[int]  # the ranks that saw it, in a merged multi-rank report


class _ExceptionExtras(TypedDict, total=False):
    unsupported: str  # what simulated CUDA does not stand in for, when that caused the crash
    rank: int


class ExceptionJson(_ExceptionExtras):
    type: str
    message: str
    path: str | None
    line: int | None


class _Watched(TypedDict, total=False):
    watched_steps: int  # the steps watched in full (see sampling.py)
    step_kind: str  # "optimizer", or "backward" in a loop without an optimizer


class Progress(_Watched):
    """What the probe has seen so far: the part of the result it rewrites at each checkpoint."""

    steps: int
    observations: list[ObservationJson]
    devices_used: list[str]
    executed_lines: list[int]


class _ResultExtras(TypedDict, total=False):
    devices_checked: bool
    exit_status: int
    partial: bool  # written at a checkpoint: the child may have died after it
    ranks: list[int]


class ChildResult(Progress, _ResultExtras):
    """The child's result file (one per rank under torch.distributed.run, merged by ranks.py)."""

    seconds: float
    stopped_by: str
    simulated_cuda: bool
    exception: ExceptionJson | None
    error: str | None


# A static finding in the report: `Finding.to_json()` plus its runtime "status".
FindingJson = dict[str, Any]


class ReportRanks(TypedDict, total=False):
    ranks: list[int]  # a run under torch.distributed.run: the ranks it merged


class Report(ReportRanks):
    """What `torchlint probe` prints (`--output-format json`) and the editor reads."""

    script: str
    steps: int
    watched_steps: int
    step_kind: str
    seconds: float
    stopped_by: str
    simulated_cuda: bool
    devices_used: list[str]
    exception: ExceptionJson | None
    exit_status: int
    devices_checked: bool
    observations: list[ObservationJson]
    findings: list[FindingJson]
