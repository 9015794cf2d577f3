"""The survival set in CI (issue 29, item 2): gpytorch's example notebooks, from its sdist pinned by
version and sha256, run under `torchlint probe` with simulated CUDA as they run plainly: no exception,
not stopped by a limit, the same exit status, the same optimizer steps (bench/survival_pypi.py).

A download that fails, or an sdist whose hash is not the pinned one, fails the test: the set must not
quietly shrink to nothing on a machine that cannot reach PyPI.
"""

from __future__ import annotations

import pytest
from bench import survival_pypi
from bench.survival_runs import table


@pytest.fixture(scope="module")
def rows(tmp_path_factory) -> list[dict]:
    chosen = [s for s in survival_pypi.SCRIPTS if s.name in survival_pypi.IN_CI]
    work = tmp_path_factory.mktemp("survival")
    try:
        return survival_pypi.run_all(chosen, survival_pypi.CACHE, work, jobs=2, timeout=300)
    except survival_pypi.DownloadError as e:
        pytest.fail(f"the survival set could not be downloaded (PyPI is needed): {e}")


def test_every_script_survives_simulated_cuda(rows):
    failed = [r for r in rows if not r["survives"]]
    assert not failed, "did not survive the probe:\n" + table(failed)


def test_the_set_trains_and_takes_the_gpu_path(rows):
    """At least ten programs ran, they took optimizer steps, and some took their CUDA path (a set whose
    scripts never reach the simulated device would prove nothing about the simulation)."""
    assert len(rows) == len(survival_pypi.IN_CI) >= 10
    assert sum(1 for r in rows if r["probe"]["steps"]) >= 10
    assert {r["name"] for r in rows if "cuda:0" in (r["probe"].get("devices_used") or [])} >= {
        "gp-simple-cuda",
        "gp-additive",
    }


def test_an_sdist_whose_hash_is_not_the_pinned_one_is_refused(tmp_path, monkeypatch):
    key = next(iter(survival_pypi.SDISTS))
    monkeypatch.setitem(survival_pypi.SDISTS, key, "0" * 64)
    with pytest.raises(survival_pypi.DownloadError, match="pinned 0000"):
        survival_pypi.sdist_source(*key, tmp_path)
    assert not (tmp_path / "src").exists()


def test_a_download_that_fails_is_an_error_not_a_skip(tmp_path):
    with pytest.raises(survival_pypi.DownloadError, match="pip download"):
        survival_pypi.sdist_source("gpytorch", "0.0.0-no-such-version", tmp_path)
