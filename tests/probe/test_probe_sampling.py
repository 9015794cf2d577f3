"""Sampled steps: the probe watches the first steps and short windows after them in full."""

import sys
import textwrap

import pytest
from probe_helpers import SCRIPTS, only, probe

from torchlint.probe.coverage import LineCoverage
from torchlint.probe.sampling import PERIOD, QUIET_WARM_UP, WARM_UP, WINDOW, Sampling

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


def test_a_quiet_step_from_the_third_on_ends_the_warm_up():
    sampling = Sampling(enabled=True)
    sampling.quiet(2)  # too early: a kept graph is told by its size over three steps
    assert sampling.watches(3)
    sampling.quiet(3)
    assert [step for step in range(1, 2 * PERIOD) if sampling.watches(step)] == [1, 2, 3, 57, 58]
    assert sampling.watched_between(1, 60) == 3 + WINDOW
    every = Sampling(enabled=False)
    every.quiet(3)
    assert all(every.watches(step) for step in range(1, 60))


def test_a_clean_loop_is_watched_for_three_steps_and_a_loop_with_a_problem_in_every_step_for_all_eight():
    clean, proc = probe(SCRIPTS / "sampled_recurrent_clean.py", "--simulate-cuda", "--max-steps", "100")
    assert clean is not None, proc.stderr
    assert (clean["steps"], clean["watched_steps"], clean["observations"]) == (70, 3 + WINDOW, [])
    report, proc = probe(SCRIPTS / "long_run_without_zero_grad.py", "--no-simulate-cuda", "--max-steps", "120")
    assert report is not None, proc.stderr
    assert report["watched_steps"] == WARM_UP + 2 * WINDOW == Sampling(enabled=True).watched_between(1, 120)


def test_optimizer_state_is_where_its_options_put_it_on_a_gpu_in_every_step():
    """`capturable=True` asserts an accelerator inside its step, so that step runs under the simulation;
    steps that run without it (default and fused Adam) leave their state tagged as a GPU holds it."""
    report, proc = probe(SCRIPTS / "optimizer_state_devices_clean.py", "--simulate-cuda", "--max-steps", "100")
    assert report is not None, proc.stderr
    assert (report["steps"], report["stopped_by"], report["observations"]) == (60, "end", [])
    assert proc.stderr.count("state on cuda:0 cuda:0") == 2 and "state on cpu cuda:0" in proc.stderr


def test_a_closure_runs_under_the_simulation_between_windows_too():
    report, proc = probe(SCRIPTS / "lbfgs_closure.py", "--simulate-cuda", "--max-steps", "100")
    assert report is not None, proc.stderr
    assert (report["steps"], report["stopped_by"]) == (30, "end")
    assert "closure outputs on ['cuda:0']" in proc.stderr
    assert {o["kind"] for o in report["observations"]} == {"host-sync"}  # LBFGS's float(loss) and truth test


def test_a_library_optimizer_step_runs_without_the_probes_modes_even_when_watched(monkeypatch):
    """Nothing is checked inside torch's own optimizer step, and it was most of a small model's intercepted
    calls: it runs without the modes. A closure, a step of the user's own and the optimizer's own step hooks
    run user code there: those steps keep the modes."""
    import torch
    from torch.optim import adam
    from torch.utils._python_dispatch import _get_current_dispatch_mode

    from torchlint.probe.instrument import Probe

    seen = []
    real = adam.adam  # what Adam.step calls with its tensors

    def spy(*args, **kwargs):
        seen.append((torch._C._len_torch_function_stack() > 0, _get_current_dispatch_mode() is not None))
        return real(*args, **kwargs)

    class Mine(torch.optim.Adam):
        def step(self, closure=None):
            return super().step(closure)

    monkeypatch.setattr(adam, "adam", spy)
    probe = Probe(__file__, None, False, every_step=True)
    probe.install(compile("", __file__, "exec"))
    try:
        with probe.modes():
            model = torch.nn.Linear(4, 2)
            x = torch.randn(8, 4)

            def closure():
                optimizer.zero_grad()
                loss = model(x).sum()
                loss.backward()
                return loss

            hooked = torch.optim.Adam(model.parameters())
            hooked.register_step_post_hook(lambda *args: None)
            for optimizer, with_closure in (
                (torch.optim.Adam(model.parameters()), False),
                (torch.optim.Adam(model.parameters()), True),
                (Mine(model.parameters()), False),
                (hooked, False),
            ):
                closure()
                optimizer.step(closure) if with_closure else optimizer.step()
    finally:
        probe.uninstall()
    assert seen == [(False, False), (True, True), (True, True), (True, True)]


def test_new_code_is_watched_from_its_first_line_and_while_it_shows_something():
    """eval_mode.py is quiet in its first epoch (steps 1-3); `model.eval()` at its end runs for the first time
    in step 4, in the script's own frame: watched from there, as before, in all three steps it happens in."""
    report, proc = probe(SCRIPTS / "eval_mode.py", "--simulate-cuda")
    assert report is not None, proc.stderr
    (seen,) = only(report, "eval-mode-in-training")
    assert (report["steps"], report["watched_steps"], seen["count"], seen["first_step"]) == (6, 6, 3, 4)


def test_new_code_inside_a_module_call_is_watched_from_the_next_step():
    """The branch runs first inside `forward` (step 5), where a half-done module call cannot start a watch:
    step 6 is watched, and the steps after it while the mismatch goes on (to the end, step 12)."""
    report, proc = probe(SCRIPTS / "late_branch_in_forward.py", "--simulate-cuda")
    assert report is not None, proc.stderr
    (mismatch,) = only(report, "device-mismatch")
    assert (mismatch["line"], mismatch["first_step"], mismatch["count"]) == (18, 6, 7)
    assert report["watched_steps"] == 3 + 7


def test_torch_functions_between_windows_give_their_outputs_the_simulated_device():
    """Between watched windows only the function mode's `_follow` keeps the tags: a new output of one tensor
    (`torch.cat` of a list of tagged tensors) or several (`torch.sort`), a view, an in-place result, a
    `device=` factory, moves and the gradients `backward()` made; no aten op is intercepted there."""
    import torch
    from torch.utils._python_dispatch import _get_current_dispatch_mode

    from torchlint.probe.instrument import Probe

    probe = Probe(__file__, None, True)
    probe.install(compile("", __file__, "exec"))
    try:
        with probe.modes():
            model = torch.nn.Linear(4, 4).to("cuda")
            optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
            x = torch.randn(2, 4).to("cuda")
            for _ in range(QUIET_WARM_UP + 2):
                optimizer.zero_grad()
                model(x).sum().backward()
                optimizer.step()
            between = (probe.state.watching, _get_current_dispatch_mode())
            h = torch.tanh(model(x))
            parts = torch.sort(torch.cat([h, x]))
            made = torch.zeros(3, device="cuda")
            grown = made.add_(1)
            back = h.cpu()
            devices = [str(t.device) for t in (h, *parts, h.detach(), made, grown, torch.ones(3, device=x.device))]
            devices += [str(back.device), str((back + 1).device), str(model.weight.grad.device)]
    finally:
        probe.uninstall()
    assert between == (False, None)
    assert devices == ["cuda:0"] * 7 + ["cpu", "cpu", "cuda:0"]
