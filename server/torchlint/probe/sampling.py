"""Which optimizer steps the probe watches in full.

A training loop repeats itself: what step 9 does, step 10 does too, and intercepting every op of
every step made a small model's step several times slower. So the probe watches the first steps
in full, then a short window of consecutive steps every `period` steps (two, so that a gradient
carried from one step into the next is still seen). Off with `--every-step`. Under simulated CUDA
the device tags still follow every torch function between windows (`modes.FunctionMode._follow`).
"""

from __future__ import annotations

WARM_UP = 8
PERIOD = 50
WINDOW = 2


class Sampling:
    def __init__(self, enabled: bool):
        self.enabled = enabled

    def watches(self, step: int) -> bool:
        """Is the 1-based `step` one the probe watches in full?"""
        return not self.enabled or step <= WARM_UP or (step - WARM_UP - 1) % PERIOD >= PERIOD - WINDOW

    def watched_between(self, first: int, last: int) -> int:
        return sum(1 for step in range(first, last + 1) if self.watches(step))
