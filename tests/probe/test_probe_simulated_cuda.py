"""Simulated CUDA answers what scripts ask: torch.accelerator, properties, memory, streams, events, pinning."""

import re

import pytest
from probe_helpers import SCRIPTS, only, probe, reports  # noqa: F401 - the fixture

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


def test_the_survey_of_cuda_and_accelerator_calls_runs_as_on_a_one_gpu_machine(reports):
    report, proc = reports("cuda_survey.py")
    assert proc.returncode == 0, proc.stderr
    assert "SURVEY MISMATCH" not in proc.stderr, proc.stderr
    (summary,) = re.findall(r"SURVEY (\d+) calls, (\d+) mismatches", proc.stderr)
    assert int(summary[0]) >= 100 and summary[1] == "0"
    assert report["exception"] is None and report["observations"] == []


def test_gpu_idioms_run_clean_and_a_checkpoint_saved_in_simulation_is_a_gpu_checkpoint(tmp_path):
    import torch

    checkpoint = tmp_path / "model.pt"
    report, proc = probe(SCRIPTS / "gpu_idioms_clean.py", args=[str(checkpoint)])
    assert proc.returncode == 0, proc.stderr
    assert (report["steps"], report["stopped_by"], report["observations"]) == (6, "end", [])
    assert "loaded ['cuda:0']" in proc.stderr  # torch.load without map_location: back on the GPU
    with pytest.raises(RuntimeError, match="CUDA"):  # as a checkpoint written on a GPU would
        torch.load(checkpoint, weights_only=True)
    assert all(t.device.type == "cpu" for t in torch.load(checkpoint, map_location="cpu").values())


def test_a_device_index_past_the_simulated_devices_fails_as_on_a_gpu(reports):
    report, proc = reports("wrong_device_index.py")
    assert proc.returncode == 3
    (crash,) = only(report, "crash")
    assert crash["line"] == 5 and "invalid device ordinal" in crash["message"]


def test_a_crash_the_simulation_causes_names_what_it_lacks_and_is_not_the_scripts(reports):
    report, proc = reports("unsupported_cuda_graph.py")
    assert proc.returncode == 4
    assert report["exception"]["unsupported"] == "torch.cuda.graphs.CUDAGraph"
    assert report["exception"]["line"] == 5  # where it was called, for context
    assert only(report, "crash") == []  # not attributed to the user's line
    from torchlint.probe import render

    text = render.to_text(report)
    assert "simulation does not support `torch.cuda.graphs.CUDAGraph`" in text
    assert "no runtime problems observed" not in text


def test_fsdp2_is_refused_under_simulation_not_run_with_false_mismatches(reports):
    """A real FSDP2 script ran to its end under simulation with a device mismatch at every layer: the
    sharded parameters live on a device mesh of the real (CPU) devices, which no tag follows."""
    report, proc = reports("fsdp2_sharded.py")
    assert proc.returncode == 4, proc.stderr[-2000:]
    assert report["exception"]["unsupported"] == "torch.distributed.fsdp.fully_shard (FSDP2)"
    assert report["exception"]["line"] == 20
    assert report["observations"] == []  # no false device-mismatch, no crash at the user's line


def test_simulation_gaps_are_told_from_the_scripts_own_errors():
    from torchlint.probe import crashes

    assert crashes.simulation_gap("Torch not compiled with CUDA enabled")
    assert crashes.simulation_gap("module 'torch._C' has no attribute '_cuda_getDevice'")
    assert not crashes.simulation_gap("CUDA error: invalid device ordinal")
    assert not crashes.simulation_gap("corrupt batch 2")


def test_a_process_started_with_spawn_runs_under_the_same_simulation(reports):
    report, proc = reports("spawned_ranks.py")
    assert proc.returncode == 0, proc.stderr
    assert "rank 0 trained on cuda:0 of 1" in proc.stderr
    assert report["exception"] is None
