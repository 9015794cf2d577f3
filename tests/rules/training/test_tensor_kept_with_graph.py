"""TL117 tensor-kept-with-graph beyond its embedded examples: outputs kept in classes, helpers and
dicts, and the look-alikes that must stay silent (no_grad callers, Lightning hooks, a module's forward,
losses, indices, returned or back-propagated containers)."""

from __future__ import annotations

import textwrap

import pytest

from torchlint.engine.rule import SAFE, UNSAFE

CASES = [
    # (id, source, expected lines)
    (
        "cpu-copy-keeps-the-graph",
        """
        import torch
        model = torch.nn.Linear(16, 4)
        kept = []
        for x in loader:
            kept.append(model(x).cpu())
        """,
        [5],
    ),
    (
        "extend-with-a-list",
        """
        import torch
        model = torch.nn.Linear(16, 4)
        kept = []
        for x in loader:
            out = model(x)
            kept.extend([out, out * 2])
        """,
        [6, 6],
    ),
    (
        "returned-container-may-be-back-propagated-by-the-caller",
        """
        import torch
        model = torch.nn.Linear(16, 4)

        def run_chunks(chunks):
            outs = []
            for c in chunks:
                outs.append(model(c))
            return torch.cat(outs)
        """,
        [],
    ),
    (
        "helper-only-called-from-a-no-grad-function",
        """
        import torch
        model = torch.nn.Linear(16, 4)

        def gather(loader):
            outs = []
            for x in loader:
                outs.append(model(x))
            print(torch.cat(outs).mean())

        @torch.inference_mode()
        def evaluate(loader):
            gather(loader)
        """,
        [],
    ),
    (
        "helper-also-called-with-autograd-on",
        """
        import torch
        model = torch.nn.Linear(16, 4)

        def gather(loader):
            outs = []
            for x in loader:
                outs.append(model(x))
            print(torch.cat(outs).mean())

        with torch.no_grad():
            gather(val_loader)
        gather(train_loader)
        """,
        [7],
    ),
    (
        "losses-are-tl105s",
        """
        import torch
        model = torch.nn.Linear(16, 4)
        losses = []
        for x, y in loader:
            losses.append(torch.nn.functional.cross_entropy(model(x), y))
        """,
        [],
    ),
    (
        "indices-and-comparisons-carry-no-graph",
        """
        import torch
        model = torch.nn.Linear(16, 4)
        kept = []
        for x in loader:
            out = model(x)
            kept.append(out.max(1)[1])
            kept.append(out > 0)
            kept.append(out.topk(2).indices)
        """,
        [],
    ),
    (
        "a-modules-forward-keeps-its-memory-on-purpose",
        """
        import torch

        class Recurrent(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.cell = torch.nn.Linear(8, 8)

            def forward(self, xs):
                memory = []
                for x in xs:
                    memory.append(self.cell(x))
                print(len(memory))
        """,
        [],
    ),
    (
        "lightning-training-step-keeps-outputs",
        """
        import lightning as L
        import torch

        class Net(L.LightningModule):
            def __init__(self):
                super().__init__()
                self.layer = torch.nn.Linear(16, 4)
                self.seen = []

            def training_step(self, batch, batch_idx):
                x, y = batch
                logits = self.layer(x)
                self.seen.append(logits.softmax(-1))
                return torch.nn.functional.cross_entropy(self.layer(x), y)
        """,
        [13],
    ),
    (
        "unpacked-outputs-are-unknown",
        """
        import torch
        model = torch.nn.LSTM(8, 8)
        kept = []
        for x in loader:
            out, state = model(x)
            kept.append(out)
        """,
        [],
    ),
]


@pytest.mark.parametrize("case,src,expected", CASES, ids=[c[0] for c in CASES])
def test_case(case, src, expected, findings):
    got = findings(textwrap.dedent(src).lstrip("\n"), "TL117")
    assert [f.line for f in got] == expected, [f"{f.line}: {f.message}" for f in got]


@pytest.mark.parametrize(
    "store,applicability",
    [("", SAFE), ("self.archive = kept\n", UNSAFE)],
)
def test_a_container_handed_to_an_attribute_gets_an_unsafe_fix(store, applicability, findings):
    src = (
        "import torch\n"
        "class Runner:\n"
        "    def run(self, loader):\n"
        "        model = torch.nn.Linear(16, 4)\n"
        "        kept = []\n"
        "        for x in loader:\n"
        "            kept.append(model(x))\n" + ("        " + store if store else "")
    )
    (got,) = findings(src, "TL117")
    assert got.fix is not None and got.fix.applicability is applicability
