"""Simulated CUDA answers what scripts ask: torch.accelerator, properties, memory, streams, events, pinning."""

import re

import pytest
from probe_helpers import reports  # noqa: F401 - the fixture

pytest.importorskip("torch")


def test_an_accelerator_script_with_memory_logging_runs_on_the_simulated_gpu(reports):
    report, proc = reports("accelerator_memory_stats.py")
    assert proc.returncode == 0, proc.stderr
    assert report["stopped_by"] == "end" and report["steps"] == 8
    assert report["observations"] == []
    assert "cuda:0" in report["devices_used"]  # torch.accelerator picked the simulated device
    assert "(1x NVIDIA H100 80GB HBM3 (simulated by torchlint probe), sm_90, torch.bfloat16)" in proc.stderr
    steps = re.findall(
        r"step \d: ([\d.]+) ms, allocated ([\d.]+) MiB \(stats (\d+)\), peak ([\d.]+) MiB, reserved (\d+) MiB, "
        r"free ([\d.]+)/80 GiB",
        proc.stderr,
    )
    assert len(steps) == 8
    for elapsed, allocated, stats, peak, reserved, free in steps:
        assert float(elapsed) > 0
        # parameters, gradients and two AdamW moments of a 256-512-10 MLP: about 2.1 MiB
        assert 2.0 < float(allocated) < 2.5
        assert abs(int(stats) / 2**20 - float(allocated)) < 0.01
        assert float(peak) >= float(allocated) and int(reserved) >= float(peak)
        assert float(free) <= 80.0
    assert "simulated CUDA memory summary" in proc.stderr


def test_a_script_that_never_reaches_the_simulated_device_is_not_a_pass(reports):
    report, _ = reports("raises.py")  # plain CPU tensors only
    assert report["simulated_cuda"] is True
    assert not [d for d in report["devices_used"] if d.startswith("cuda")]


def test_text_report_warns_when_the_device_was_never_used():
    from torchlint.probe import render

    report = {
        "script": "/x/t.py",
        "steps": 2,
        "seconds": 1.0,
        "stopped_by": "end",
        "simulated_cuda": True,
        "devices_used": [],
        "exception": None,
        "observations": [],
        "findings": [],
    }
    assert "never put a tensor on the simulated CUDA device" in render.to_text(report)
    report["devices_used"] = ["cuda:0"]
    assert "never put" not in render.to_text(report)
