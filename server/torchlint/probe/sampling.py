"""Which optimizer steps the probe watches in full.

A training loop repeats itself: what step 9 does, step 10 does too, and intercepting every op of
every step made a small model's step several times slower. So the probe watches the first steps
in full, then a short window of consecutive steps every `period` steps (two, so that a gradient
carried from one step into the next is still seen). Off with `--every-step`. Under simulated CUDA
the device tags still follow every torch function between windows (`modes.FunctionMode._follow`).

The first steps are watched while they show something: a watched step from the third on that
recorded nothing (no observation, no training record, no graph that grew) and ran no line of the
script for the first time ends the warm-up there. A clean loop is watched for 3 steps, a loop with
a problem in every step for all 8, so that its counts stay those of every step. Three, because a
graph kept alive is told from one that is not by its size over three steps. And new code is watched:
a step in which a line of the script runs for the first time (an epoch's end, a validation pass, a
branch taken late) is watched from that line on (`instrument.Probe._new_line`), and the steps after
it while they show something (up to 8).
"""

from __future__ import annotations

WARM_UP = 8
QUIET_WARM_UP = 3  # a quiet step ends the warm-up from this step on
PERIOD = 50
WINDOW = 2


class Sampling:
    def __init__(self, enabled: bool):
        self.enabled = enabled
        self.warm_up = WARM_UP  # the last step of the warm-up: lowered by a quiet step
        self.extra: set[int] = set()  # steps watched because a line of the script ran for the first time

    def watches(self, step: int) -> bool:
        """Is the 1-based `step` one the probe watches in full?"""
        if not self.enabled or step <= self.warm_up or step in self.extra:
            return True
        return step > WARM_UP and (step - WARM_UP - 1) % PERIOD >= PERIOD - WINDOW

    def in_warm_up(self, step: int) -> bool:
        return self.enabled and step < self.warm_up

    def quiet(self, step: int) -> None:
        """The watched `step` showed nothing new: from `QUIET_WARM_UP` on, the warm-up ends with it."""
        if self.in_warm_up(step) and step >= QUIET_WARM_UP:
            self.warm_up = step

    def extend(self, step: int) -> None:
        self.extra.add(step)

    def go_on(self, step: int) -> None:
        """The watched new code of `step` showed something: the next step is watched too, up to `WARM_UP`
        steps in a row."""
        run = 0
        while step - run in self.extra:
            run += 1
        if run < WARM_UP:
            self.extra.add(step + 1)

    def watched_between(self, first: int, last: int) -> int:
        return sum(1 for step in range(first, last + 1) if self.watches(step))
