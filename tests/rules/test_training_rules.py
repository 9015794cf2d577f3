"""TL1xx precision beyond the rules' own examples: look-alikes that must stay silent,
bugs that hide in classes, helpers and nested blocks, and where each finding lands."""

from __future__ import annotations

import textwrap

import pytest

from torchlint.engine import lint_text
from torchlint.registry import rules

CASES = [
    # (id, code, path, source, expected lines)
    (
        "rl-env-step-is-not-an-optimizer",
        "TL101",
        "a.py",
        """
        for episode in range(10):
            obs, reward, done, info = env.step(policy(obs))
            loss = -reward * log_prob
            loss.backward()
    """,
        [],
    ),
    (
        "deepspeed-engine-clears-itself",
        "TL101",
        "a.py",
        """
        for batch in loader:
            loss = model_engine(batch)
            model_engine.backward(loss)
            model_engine.step()
    """,
        [],
    ),
    (
        "one-optimizer-cleared-through-the-model",
        "TL101",
        "a.py",
        """
        for real in loader:
            netD.zero_grad()
            errD(real).backward()
            optimizerD.step()
            netG.zero_grad()
            errG().backward()
            optimizerG.step()
    """,
        [],
    ),
    (
        "zero-grad-before-the-loop-only",
        "TL101",
        "a.py",
        """
        optimizer.zero_grad()
        for x, y in loader:
            criterion(model(x), y).backward()
            optimizer.step()
    """,
        [2],
    ),
    (
        "while-loop-over-steps",
        "TL101",
        "a.py",
        """
        import torch
        optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
        step = 0
        while step < 1000:
            x, y = next(batches)
            criterion(model(x), y).backward()
            optimizer.step()
            step += 1
    """,
        [4],
    ),
    (
        "loss-times-batch-size",
        "TL105",
        "a.py",
        """
        def train(model, loader, optimizer):
            running_loss = 0.0
            for inputs, labels in loader:
                optimizer.zero_grad()
                loss = model(inputs).mean()
                loss.backward()
                optimizer.step()
                running_loss += loss * inputs.size(0)
            return running_loss.item()
    """,
        [8],
    ),
    (
        "hugging-face-output-loss",
        "TL105",
        "a.py",
        """
        def train(model, loader, optimizer):
            losses = []
            for batch in loader:
                outputs = model(**batch)
                loss = outputs.loss
                loss.backward()
                optimizer.step()
                optimizer.zero_grad()
                losses.append(loss)
            return len(losses)
    """,
        [9],
    ),
    (
        "loss-detached-before-accumulating",
        "TL105",
        "a.py",
        """
        total = 0
        for x, y in loader:
            loss = criterion(model(x), y)
            loss.backward()
            loss = loss.detach()
            total += loss
    """,
        [],
    ),
    (
        "power-of-a-leaf",
        "TL109",
        "a.py",
        """
        import torch
        x = torch.tensor([1.0, 2.0], requires_grad=True)
        y = x ** 2
        y.sum().backward()
        print(y.grad)
    """,
        [5],
    ),
    (
        "zero-grad-inside-with-before-step",
        "TL102",
        "a.py",
        """
        import torch
        for x, y in loader:
            with torch.autocast("cuda"):
                loss = criterion(model(x), y)
            scaler.scale(loss).backward()
            with timer("step"):
                optimizer.zero_grad()
                scaler.step(optimizer)
            scaler.update()
    """,
        [7],
    ),
    (
        "step-in-other-branch-than-backward",
        "TL103",
        "a.py",
        """
        for i, (x, y) in enumerate(loader):
            if i % 2:
                optimizer.step()
            else:
                criterion(model(x), y).backward()
    """,
        [],
    ),
    (
        "scheduler-per-batch-at-start",
        "TL104",
        "a.py",
        """
        for x, y in loader:
            lr_scheduler.step()
            optimizer.zero_grad()
            criterion(model(x), y).backward()
            optimizer.step()
    """,
        [2],
    ),
    (
        "timm-style-scheduler-with-epoch-argument",
        "TL104",
        "a.py",
        """
        for epoch in range(epochs):
            lr_scheduler.step(epoch)
            train_one_epoch(model, loader, optimizer)
    """,
        [],
    ),
    (
        "eval-loss-under-no-grad-decorator",
        "TL105",
        "a.py",
        """
        import torch
        @torch.no_grad()
        def evaluate(model, loader):
            total = 0
            for x, y in loader:
                total += criterion(model(x), y)
            return total
    """,
        [],
    ),
    (
        "accumulated-loss-returned-for-the-caller",
        "TL105",
        "a.py",
        """
        def closure(model, chunks):
            total = 0
            for x, y in chunks:
                loss = criterion(model(x), y)
                total += loss
            return total
    """,
        [],
    ),
    (
        "loss-rebound-to-a-number",
        "TL105",
        "a.py",
        """
        total = 0
        for x, y in loader:
            loss = criterion(model(x), y)
            loss.backward()
            loss = loss.item()
            total += loss
    """,
        [],
    ),
    (
        "sum-over-dict-values-of-unknown-kind",
        "TL106",
        "a.py",
        """
        losses = sum(loss for loss in loss_dict.values())
    """,
        [],
    ),
    (
        "recurrent-state-recomputed-each-iteration",
        "TL107",
        "a.py",
        """
        def run(model, seq, h):
            for x in seq:
                out, h = model(x, h)
                criterion(out).backward()
    """,
        [],
    ),
    (
        "same-loss-twice",
        "TL107",
        "a.py",
        """
        def step(model, x):
            loss = model(x).sum()
            loss.backward()
            loss.backward()
    """,
        [3],
    ),
    (
        "backward-in-a-loop-over-listed-losses",
        "TL107",
        "a.py",
        """
        def step(model, x, y, z):
            out = model(x)
            loss_a = crit(out, y)
            loss_b = crit(out, z)
            for loss in (loss_a, loss_b):
                loss.backward()
    """,
        [6],
    ),
    (
        "loop-over-losses-from-separate-forwards",
        "TL107",
        "a.py",
        """
        def step(model, x, y, z):
            for loss in (crit(model(x), y), crit(model(x), z)):
                loss.backward()
    """,
        [],
    ),
    (
        "grad-read-after-retain-grad-in-a-helper-scope",
        "TL109",
        "a.py",
        """
        def f(model, x):
            h = model(x)
            h.retain_grad()
            h.sum().backward()
            return h.grad
    """,
        [],
    ),
    (
        "grad-of-unknown-tensor",
        "TL109",
        "a.py",
        """
        def f(x):
            x.sum().backward()
            return x.grad
    """,
        [],
    ),
    (
        "pytest-function-in-a-test-file",
        "TL110",
        "tests/test_model.py",
        """
        def test_forward_shapes():
            model.eval()
            for shape in [(1, 3), (2, 3)]:
                assert model(torch.zeros(shape)).shape[0] == shape[0]
    """,
        [],
    ),
    (
        "test-function-of-a-training-script",
        "TL110",
        "train.py",
        """
        def test(model, loader):
            model.eval()
            correct = 0
            for x, y in loader:
                correct += (model(x).argmax(1) == y).sum().item()
            return correct
    """,
        [4],
    ),
    (
        "saliency-loop-needs-gradients",
        "TL110",
        "a.py",
        """
        def predict_saliency(model, images):
            maps = []
            for image in images:
                image.requires_grad_()
                model(image).max().backward()
                maps.append(image.grad)
            return maps
    """,
        [],
    ),
    (
        "nested-eval-loops-report-the-outer",
        "TL110",
        "a.py",
        """
        model.eval()
        for split in splits:
            for x in split:
                model(x)
    """,
        [2],
    ),
    (
        "validation-helper-never-restores",
        "TL111",
        "a.py",
        """
        def validate(model, loader):
            model.eval()
            return [model(x) for x in loader]

        for epoch in range(3):
            for x, y in train_loader:
                optimizer.zero_grad()
                criterion(model(x), y).backward()
                optimizer.step()
            validate(model, val_loader)
    """,
        [2],
    ),
    (
        "train-at-epoch-start-inside-helper",
        "TL111",
        "a.py",
        """
        def train_epoch(model, loader):
            model.train()
            for x, y in loader:
                optimizer.zero_grad()
                criterion(model(x), y).backward()
                optimizer.step()

        for epoch in range(3):
            train_epoch(model, train_loader)
            model.eval()
    """,
        [],
    ),
    (
        "detect-anomaly-in-a-test-file",
        "TL113",
        "tests/test_grad.py",
        """
        import torch
        torch.autograd.set_detect_anomaly(True)
    """,
        [],
    ),
    (
        "detect-anomaly-in-main-guard",
        "TL113",
        "train.py",
        """
        import torch
        if __name__ == "__main__":
            torch.autograd.set_detect_anomaly(True)
            main()
    """,
        [3],
    ),
    (
        "empty-cache-once-per-epoch",
        "TL114",
        "a.py",
        """
        import torch
        for epoch in range(3):
            for x, y in loader:
                optimizer.zero_grad()
                criterion(model(x), y).backward()
                optimizer.step()
            torch.cuda.empty_cache()
    """,
        [],
    ),
]


@pytest.mark.parametrize("case,code,path,src,lines", CASES, ids=[c[0] for c in CASES])
def test_case(case, code, path, src, lines):
    text = textwrap.dedent(src).lstrip("\n")
    findings = lint_text(path, text, [rules()[code]]).findings
    assert [f.line for f in findings] == lines, [f"{f.line}: {f.message}" for f in findings]


@pytest.mark.parametrize("code", [c for c in rules() if c.startswith("TL1")])
def test_rule_command_prints_the_docs(code, run_cli):
    out = run_cli("rule", code)
    assert out.returncode == 0, out.stderr
    cls = rules()[code]
    for text in (cls.name, cls.what.split(".")[0], cls.example.splitlines()[0]):
        assert text in out.stdout
