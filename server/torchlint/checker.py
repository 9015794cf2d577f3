"""Checking many files: discovery, per-file settings, parallel linting, fixing.

Shared by the CLI and (for workspace lints) the language server. Output order
is deterministic whatever the number of worker processes.
"""

from __future__ import annotations

import errno
import gc
import os
import re
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from torchlint import cache
from torchlint.config import ConfigResolver, Overrides
from torchlint.discovery import Candidate, discover
from torchlint.findings import Finding, Severity
from torchlint.registry import rules

if TYPE_CHECKING:
    from torchlint.engine.rule import Rule

_LINE = re.compile(r"[^\n]*\n|[^\n]+\Z")


@dataclass(frozen=True)
class Job:
    path: str
    codes: tuple[str, ...]
    severity: tuple[tuple[str, str], ...]
    mode: str  # "check" | "fix" | "diff"
    torch_version: str | None = None  # the target torch the settings resolve to (None: the project's)
    cache_dir: str | None = None  # check mode only
    unsafe_fixes: bool = False  # fix/diff modes apply unsafe fixes too


@dataclass
class FileResult:
    path: str
    findings: list[Finding]
    fixed: int = 0
    diff: str = ""
    error: str | None = None  # a file we could not write back
    dependencies: tuple[str, ...] = ()  # other project files its findings depend on (the cache checks them)
    unsafe_fixes: bool = False  # whether `--fix` applies this file's unsafe fixes


@dataclass
class RunResult:
    files: list[FileResult] = field(default_factory=list)

    @property
    def findings(self) -> list[Finding]:
        return [f for r in self.files for f in r.findings]

    @property
    def fixed(self) -> int:
        return sum(r.fixed for r in self.files)

    @property
    def unsafe_paths(self) -> set[str]:
        """Finding paths (a notebook's carry their cell) whose unsafe fixes `--fix` applies."""
        return {f.path for r in self.files if r.unsafe_fixes for f in r.findings}


def _apply_severity(findings: list[Finding], severity: Iterable[tuple[str, str]]) -> list[Finding]:
    overrides = dict(severity)
    for f in findings:
        if f.code in overrides:
            f.severity = Severity(overrides[f.code])
    return findings


def run_job(job: Job) -> FileResult:
    result = _read_and_run(job)
    result.unsafe_fixes = job.unsafe_fixes
    return result


def _read_and_run(job: Job) -> FileResult:
    from torchlint.engine.runner import error_finding

    try:
        data = read_source(job.path)
    except IsADirectoryError:
        return FileResult(job.path, [error_finding(job.path, "is a directory, not a Python file")])
    except OSError as exc:
        return FileResult(job.path, [error_finding(job.path, f"cannot read file: {exc.strerror or exc}")])
    if job.mode == "check" and job.cache_dir is not None:
        store = cache.Cache(Path(job.cache_dir))
        k = cache.key(data, job.path, job.codes, job.severity, job.torch_version)
        hit = store.get(k, job.path)
        if hit is not None:
            return FileResult(job.path, hit)
        from torchlint.engine.semantic.project import keep_index_in

        keep_index_in(Path(job.cache_dir), job.path)
        result = _run_job_guarded(job, data)
        store.put(k, job.path, result.findings, result.dependencies)
        return result
    return _run_job_guarded(job, data)


def _run_job_guarded(job: Job, data: bytes) -> FileResult:
    """A bug of torchlint's on one file is a finding on that file, never the end of the run: the other
    files are still checked, and --fix writes nothing to this one."""
    from torchlint.engine.runner import error_finding

    try:
        return _run_job(job, data)
    except Exception as exc:
        message = f"internal error, the file was not checked: {type(exc).__name__}: {exc} (please report it)"
        return FileResult(job.path, [error_finding(job.path, message)])


def read_source(path: str) -> bytes:
    """The file's bytes; refuses FIFOs, sockets and devices, which can block forever or never end."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))  # a FIFO opens at once this way
    with os.fdopen(fd, "rb") as fh:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, "is a directory", path)
        if not stat.S_ISREG(mode):
            raise OSError(errno.EINVAL, "not a regular file (a FIFO, socket or device)", path)
        return fh.read()


def _run_job(job: Job, data: bytes) -> FileResult:
    from torchlint.engine import fix_text, lint_bytes
    from torchlint.engine.core.source import SourceError, decode
    from torchlint.engine.runner import source_error_finding

    catalogue = rules()
    selected = [catalogue[c] for c in job.codes if c in catalogue]
    if job.path.endswith(".ipynb"):
        return _run_notebook(job, data, selected)
    if job.mode == "check":
        result, _ = lint_bytes(job.path, data, selected, torch_version=job.torch_version)
        return FileResult(job.path, _apply_severity(result.findings, job.severity), dependencies=result.dependencies)
    try:
        source = decode(data)
    except SourceError as exc:
        return FileResult(job.path, [source_error_finding(job.path, exc)])
    fixed = fix_text(job.path, source.text, selected, unsafe=job.unsafe_fixes, torch_version=job.torch_version)
    out = FileResult(job.path, _apply_severity(fixed.remaining, job.severity), fixed.applied)
    if fixed.applied == 0 or fixed.text == source.text:
        out.fixed = 0
        return out
    return _deliver(job, out, data, source.encode(fixed.text), source.encoding)


def _deliver(job: Job, out: FileResult, data: bytes, new: bytes, encoding: str = "utf-8") -> FileResult:
    """`--fix` writes the fixed file; `--diff` shows the patch that would write it."""
    if job.mode == "diff":
        out.diff = unified_diff(job.path, data, new, encoding)
        return out
    try:
        write_atomic(Path(job.path), data, new)
    except (OSError, ValueError) as exc:
        out.error = f"{job.path}: not written: {exc}"
        out.fixed = 0
    return out


def unified_diff(path: str, before: bytes, after: bytes, encoding: str = "utf-8") -> str:
    """A patch that `git apply` and `patch -p1` take where `path` is relative to.

    Lines are split where those tools split them (at `\\n` only), a last line
    without a newline is followed by `\\ No newline at end of file` (else the
    next line of the patch is glued onto it), a UTF-8 BOM stays on line 1, and
    a name with a space ends with a tab, as git writes it (else `patch` stops
    reading the name at the space).
    """
    text = "utf-8" if encoding == "utf-8-sig" else encoding
    try:
        name = os.path.relpath(path)
    except ValueError:  # another drive
        name = path
    name = Path(path if name.startswith("..") else name).as_posix() + ("\t" if " " in path else "")
    import difflib  # not at import: --diff only

    out = []
    for line in difflib.unified_diff(
        _lines(before.decode(text)), _lines(after.decode(text)), fromfile=f"a/{name}", tofile=f"b/{name}"
    ):
        out.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(out)


def _lines(text: str) -> list[str]:
    """Lines with their `\\n` endings; a lone `\\r` stays inside its line, as git and patch see it."""
    return _LINE.findall(text)


def _run_notebook(job: Job, data: bytes, selected: list[type[Rule]]) -> FileResult:
    """A notebook's code cells checked as one program (see torchlint.notebook)."""
    from torchlint import notebook

    nb = notebook.check(
        job.path, data, selected, fix=job.mode != "check", unsafe=job.unsafe_fixes, torch_version=job.torch_version
    )
    out = FileResult(job.path, _apply_severity(nb.findings, job.severity), nb.applied)
    return out if nb.data is None else _deliver(job, out, data, nb.data)


def write_atomic(path: Path, original: bytes, new: bytes) -> None:
    """Replace `path` with `new` unless it changed since we read `original`.

    The new content goes to a temporary file in the same directory (same
    permissions) and is renamed over the original, so a crash leaves either
    the old file or the new one, never half of each. A symlink is kept: its
    target is what gets replaced. The file is compared again just before the
    rename, as an editor may save it while the temporary file is synced.
    """
    path = Path(os.path.realpath(path))
    if path.read_bytes() != original:
        raise ValueError("file changed on disk while torchlint was fixing it")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".torchlint", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(new)
            fh.flush()
            os.fsync(fh.fileno())
        shutil.copymode(path, tmp)
        if path.read_bytes() != original:
            raise ValueError("file changed on disk while torchlint was fixing it")
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def plan(
    paths: list[Path],
    resolver: ConfigResolver,
    mode: str,
    overrides: Overrides | None = None,
    cache_dir: Path | None = None,
    unsafe_fixes: bool | None = None,
) -> list[Job]:
    """One job per file with its effective rule codes and severities; `unsafe_fixes`
    (from the command line) replaces each file's configured `unsafe-fixes` when given."""
    candidates: list[Candidate] = discover(paths, resolver)
    jobs = []
    for c in candidates:
        resolved = resolver.resolve(c.path, overrides)
        severity = tuple(sorted((k, v.value) for k, v in resolved.selection.severity.items()))
        unsafe = resolved.settings.unsafe_fixes if unsafe_fixes is None else unsafe_fixes
        store = str(cache_dir) if cache_dir and mode == "check" else None
        jobs.append(Job(str(c.path), resolved.selection.codes, severity, mode, resolved.torch.spec, store, unsafe))
    return jobs


def tune_gc() -> None:
    """libcst builds hundreds of thousands of short-lived, acyclic nodes per file, and CPython's
    default GC thresholds rescan them (and everything loaded before) over and over. A lint leaves
    no cycles behind (FileContext.release), so rarer collections cost no memory: the CLI, its
    workers and the language server (after its first lint) all run this way."""
    gc.freeze()
    gc.set_threshold(50_000, 50, 50)


def _start_worker(files_unchanging: bool) -> None:
    tune_gc()
    if files_unchanging:  # as its parent: the CLI's workers check the same snapshot of the files
        from torchlint.engine.semantic.project import files_unchanging as unchanging

        unchanging().__enter__()  # for the worker's life


def _size(job: Job) -> int:
    try:
        return os.stat(job.path).st_size
    except OSError:
        return 0


def run(jobs: list[Job], workers: int = 1, progress: Callable[[int, int], None] | None = None) -> RunResult:
    results: list[FileResult] = []
    if workers > 1 and len(jobs) > 1:
        # Largest files first, in small chunks: no worker is left alone with a big file at
        # the end while the others idle. Output order is restored by sorting below.
        ordered = sorted(jobs, key=_size, reverse=True)
        chunk = max(1, min(8, len(jobs) // (workers * 16)))
        from concurrent.futures import ProcessPoolExecutor  # only with workers (~20 ms to import)

        from torchlint.engine.semantic import project

        with ProcessPoolExecutor(
            max_workers=workers, initializer=_start_worker, initargs=(project.files_are_unchanging(),)
        ) as pool:
            for i, r in enumerate(pool.map(run_job, ordered, chunksize=chunk), 1):
                results.append(r)
                if progress:
                    progress(i, len(jobs))
    else:
        for i, job in enumerate(jobs, 1):
            results.append(run_job(job))
            if progress:
                progress(i, len(jobs))
    for r in results:
        r.findings.sort(key=Finding.sort_key)
    results.sort(key=lambda r: r.path)
    return RunResult(results)
