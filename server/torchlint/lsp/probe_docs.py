"""What each runtime-probe observation kind means, for the in-editor docs of a probe diagnostic
(its code is the kind). The same words as the table in docs/probe.md (a test keeps them so); which
rules a kind confirms comes from the probe's own table, probe/merge.KIND_CODES."""

from __future__ import annotations

from torchlint.probe.merge import KIND_CODES

KIND_DOCS: dict[str, str] = {
    "device-mismatch": (
        "an op or module call got inputs on different devices; facts: op, inputs, devices, shapes, "
        "`sites` (where the odd input was made)"
    ),
    "module-device-split": (
        "a called module's parameters/buffers/plain tensor attributes are not all on one device; "
        "facts: the stray tensors, where they were assigned, every `.to()` in the tree"
    ),
    "non-contiguous-view": "`.view` on a non-contiguous tensor raised (shape, strides, error)",
    "implicit-copy": (
        "`reshape`/`flatten`/`matmul`/`einsum` copied a non-contiguous input of 64 KiB or more (bytes per call)"
    ),
    "memory-format-mismatch": "a convolution got a channels-last input with a contiguous weight, or the reverse",
    "host-sync": (
        "`.item()`, truth tests, `float()/int()`, printing, `.tolist()`, `.numpy()`, `.cpu()`, "
        "`nonzero`, boolean-mask indexing, `unique`... on a CUDA tensor, in at least two steps and "
        "in at least half of the steps between its first and last (a print every 100 steps or a "
        "per-epoch accuracy is not reported); `facts.via` names the library function that did it; "
        "the syncs GradScaler/AMP make by design are not reported"
    ),
    "grads-not-cleared": (
        "at a `step()`, a parameter got new gradients on top of the gradient it already had at the "
        "previous step: its `.grad` was neither set to None, replaced, nor zeroed in between "
        "(GAN-style cross-accumulation cleared before the next step, and a head used only on some "
        "steps, are fine)"
    ),
    "grads-zero-at-step": "every gradient was None or zero at `step()`: cleared between backward and step",
    "eval-mode-in-training": "a model called in eval mode while an optimizer steps its parameters (at the `eval()` line)",
    "graph-retained": "a tensor made at this line carries an autograd graph that grows every step",
    "param-never-updated": (
        "parameters that get gradients but no optimizer holds, or that an optimizer holds but never"
        " get a gradient (at the line that made them)"
    ),
    "crash": (
        "the script raised here; facts: `type`, `message` and, when the error is one of the "
        'problems above, `shows` (e.g. `device-mismatch` for "Expected all tensors to be on the '
        'same device" on a real GPU)'
    ),
    "ddp-before-device-move": (
        "`DistributedDataParallel(model)` while the model's parameters were on the CPU, then the "
        "model was moved (at the wrap; `sites`: the move)"
    ),
    "process-group-missing": (
        "`DistributedDataParallel` or a `DistributedSampler` without `num_replicas`/`rank` created "
        "before `init_process_group`"
    ),
    "sampler-epoch-not-set": (
        "a shuffling `DistributedSampler` iterated again with the same epoch: the same order as before"
    ),
}


def kind_markdown(kind: str) -> str:
    """The documentation page of one observation kind, as the editor shows it."""
    confirms = ", ".join(KIND_CODES.get(kind, ())) or "no static rule (the probe alone sees it)"
    return (
        f"# Runtime probe: {kind}\n\n"
        f"## What happened\n\n{KIND_DOCS[kind][0].upper()}{KIND_DOCS[kind][1:]}.\n\n"
        f"## Confirms\n\n{confirms}\n\n"
        "The probe ran your script for a few optimizer steps under instrumentation and saw this at the "
        "marked expression. See `docs/probe.md` for what the probe observes and how it confirms findings.\n"
    )
