"""Sampled steps: the probe watches the first steps and short windows after them in full."""

import sys
import textwrap

import pytest
from probe_helpers import SCRIPTS, only, probe

from torchlint.probe.coverage import LineCoverage
from torchlint.probe.sampling import PERIOD, WARM_UP, WINDOW, Sampling

pytest.importorskip("torch")


def test_sampling_watches_the_warm_up_then_a_window_each_period():
    sampling = Sampling(enabled=True)
    watched = [step for step in range(1, 2 * PERIOD + WARM_UP + 1) if sampling.watches(step)]
    window = list(range(WARM_UP + PERIOD - WINDOW + 1, WARM_UP + PERIOD + 1))
    second = [step + PERIOD for step in window]
    assert watched == [*range(1, WARM_UP + 1), *window, *second]
    assert sampling.watched_between(WARM_UP, WARM_UP + PERIOD) == 1 + WINDOW
    assert all(Sampling(enabled=False).watches(step) for step in range(1, 500))


@pytest.mark.parametrize("every_step", [False, True])
def test_repeated_observations_count_watched_steps_and_summaries_still_hold(every_step):
    steps = 120
    options = ("--no-simulate-cuda", "--max-steps", str(steps), *(("--every-step",) if every_step else ()))
    report, proc = probe(SCRIPTS / "long_run_without_zero_grad.py", *options)
    assert report is not None, proc.stderr
    assert report["steps"] == steps
    watched = Sampling(enabled=not every_step).watched_between(1, steps)
    (copy,) = only(report, "implicit-copy")
    assert (copy["line"], copy["count"]) == (11, watched)
    (carried,) = only(report, "grads-not-cleared")
    assert carried["line"] == 14 and "never cleared" in carried["message"]


def test_simulated_devices_stay_right_between_watched_windows():
    """Hidden state, targets moved to `logits.device` and gradients are made between windows: all on cuda."""
    report, proc = probe(SCRIPTS / "sampled_recurrent_clean.py", "--simulate-cuda", "--max-steps", "100")
    assert report is not None, proc.stderr
    assert (report["steps"], report["stopped_by"]) == (70, "end")
    assert report["observations"] == []
    assert "['cuda:0']" in proc.stderr  # what the script read from `.device` at its last, unwatched step
    assert not Sampling(enabled=True).watches(70)


def test_a_gradient_made_between_windows_and_read_in_the_next_one_is_on_its_leafs_device():
    report, proc = probe(SCRIPTS / "sampled_new_leaf_clean.py", "--simulate-cuda", "--max-steps", "100")
    assert report is not None, proc.stderr
    assert (report["steps"], report["stopped_by"]) == (70, "end")
    assert report["observations"] == []


def test_optimizer_state_made_in_an_unwatched_step_is_on_its_parameters_device():
    """Between windows an optimizer step runs without device following; the state it creates is tagged
    afterwards, so the simulated GPU memory counts it and later reads see it on the GPU."""
    report, proc = probe(SCRIPTS / "sampled_late_optimizer_clean.py", "--simulate-cuda", "--max-steps", "200")
    assert report is not None, proc.stderr
    assert (report["steps"], report["stopped_by"]) == (20 + 2 * 50, "end")  # both optimizers step from step 20 on
    assert report["observations"] == []
    assert "state bytes on the GPU: 544" in proc.stderr  # 2 x (64 + 4) floats, counted by the simulated allocator


def test_a_bug_that_starts_between_windows_is_seen_in_the_next_window():
    report, proc = probe(SCRIPTS / "sampled_late_batch_not_moved.py", "--simulate-cuda", "--max-steps", "100")
    assert report is not None, proc.stderr
    (mismatch,) = only(report, "device-mismatch")
    first_window = next(step for step in range(31, 71) if Sampling(enabled=True).watches(step))
    assert (mismatch["line"], mismatch["first_step"]) == (15, first_window)
    assert mismatch["count"] == Sampling(enabled=True).watched_between(31, 70)


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="3.12+ records lines with sys.monitoring, not markers")
def test_statement_markers_keep_docstrings_future_imports_and_lines(tmp_path):
    source = textwrap.dedent(
        '''\
        """Module doc."""
        from __future__ import annotations

        def used(x):
            """Used."""
            return (x +
                    1)

        @staticmethod
        def unused():
            return 0

        class Config:
            """Config."""
            size = 1

        def only_doc():
            """Only."""

        result = (__doc__, used.__doc__, Config.__doc__, only_doc.__doc__, used(
            1))
        '''
    )
    coverage = LineCoverage(str(tmp_path / "script.py"))
    code = coverage.compile(source.encode())
    namespace: dict = {"__name__": "__main__"}
    coverage.start(code)
    try:
        exec(code, namespace)
    finally:
        coverage.stop()
    assert namespace["result"] == ("Module doc.", "Used.", "Config.", "Only.", 2)
    ran = coverage.lines
    assert {1, 2, 4, 6, 7, 9, 10, 13, 14, 15, 17, 20, 21} <= ran
    assert not ran & {11, 18}  # the bodies of functions never called
