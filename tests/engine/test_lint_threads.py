"""Two lints at once: each lint's record of what it read of its project is its own.

The language server lints on one thread while a workspace lint runs on another; the findings cache
keys each document's entry by the files its lint read (and whether it scanned the whole project).
With that record on the shared project index, one lint's reads leaked into or were cleared from
the other's list.
"""

from __future__ import annotations

import shutil
import sys
import threading
from pathlib import Path

from fixture_expectations import FIXTURES
from torchlint.engine.runner import lint_text
from torchlint.registry import rules


def _deps(path: Path) -> tuple[str, ...]:
    return lint_text(str(path), path.read_text(), list(rules().values())).dependencies


def test_two_threads_keep_their_own_dependency_lists(tmp_path):
    shutil.copytree(FIXTURES / "projects" / "ddp_entry", tmp_path, dirs_exist_ok=True)
    files = [tmp_path / "trainkit" / "trainer.py", tmp_path / "clean_main.py"]  # one project, one index
    expected = [_deps(f) for f in files]
    assert expected[0] and expected[0] != expected[1], "the trainer's findings rest on a scan of its project"

    wrong: list[str] = []
    barrier = threading.Barrier(2)

    def lint_many(index: int) -> None:
        barrier.wait()
        for _ in range(20):
            got = _deps(files[index])
            if got != expected[index]:
                wrong.append(f"{files[index].name}: {got} != {expected[index]}")

    threads = [threading.Thread(target=lint_many, args=(i,)) for i in range(2)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads often, as a loaded server does
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(interval)
    assert wrong == []
