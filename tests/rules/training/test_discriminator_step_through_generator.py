"""TL116 discriminator-step-through-generator beyond its embedded examples: GAN steps in functions,
trainer classes and step functions, the look-alikes that must stay silent, and error versus warning."""

from __future__ import annotations

import textwrap

import pytest

from torchlint.engine.rule import DISPLAY
from torchlint.findings import Severity

SETUP = """
import torch
from torch import nn

G = nn.Sequential(nn.Linear(16, 64), nn.Tanh())
D = nn.Sequential(nn.Linear(64, 1))
opt_G = torch.optim.Adam(G.parameters(), lr=2e-4)
opt_D = torch.optim.Adam(D.parameters(), lr=2e-4)
"""

CASES = [
    # (id, source after SETUP, expected (line, severity) pairs; lines count from SETUP's first line)
    (
        "reset-helper-before-each-backward",
        """
        def reset():
            opt_D.zero_grad()
            opt_G.zero_grad()

        for real, z in loader:
            fake = G(z)
            d_loss = D(real).mean() - D(fake).mean()
            reset()
            d_loss.backward()
            opt_D.step()
            g_loss = -D(G(z)).mean()
            reset()
            g_loss.backward()
            opt_G.step()
        """,
        [(14, Severity.WARNING)],
    ),
    (
        "generator-zeroed-only-at-the-top-of-the-iteration",
        """
        for real, z in loader:
            opt_G.zero_grad()
            opt_D.zero_grad()
            fake = G(z)
            d_loss = D(real).mean() - D(fake).mean()
            d_loss.backward(retain_graph=True)
            opt_D.step()
            g_loss = -D(fake).mean()
            g_loss.backward()
            opt_G.step()
        """,
        [(12, Severity.ERROR)],
    ),
    (
        "critic-steps-then-a-generator-step-under-a-condition",
        """
        for i, (real, z) in enumerate(loader):
            opt_D.zero_grad()
            fake = G(z)
            d_loss = D(fake).mean() - D(real).mean()
            d_loss.backward()
            opt_D.step()
            if i % 5 == 0:
                opt_G.zero_grad()
                (-D(G(z)).mean()).backward()
                opt_G.step()
        """,
        [(11, Severity.WARNING)],
    ),
    (
        "step-function-called-per-batch",
        """
        def step(engine, batch):
            real, z = batch
            opt_G.zero_grad()
            fake = G(z)
            opt_D.zero_grad()
            err_d = D(fake).mean() - D(real).mean()
            err_d.backward(retain_graph=True)
            opt_D.step()
            err_g = -D(fake).mean()
            err_g.backward()
            opt_G.step()
        """,
        [(13, Severity.ERROR)],
    ),
    (
        "only-the-discriminator-is-cleared-before-the-generator-step",
        """
        for real, z in loader:
            opt_G.zero_grad()
            fake = G(z)
            (D(fake).mean() - D(real).mean()).backward(retain_graph=True)
            opt_D.step()
            D.zero_grad()
            (-D(fake).mean()).backward()
            opt_G.step()
        """,
        [(11, Severity.ERROR)],
    ),
    (
        "generator-gradients-set-to-none-by-hand",
        """
        for real, z in loader:
            fake = G(z)
            opt_D.zero_grad()
            (D(fake).mean() - D(real).mean()).backward()
            opt_D.step()
            for p in G.parameters():
                p.grad = None
            (-D(G(z)).mean()).backward()
            opt_G.step()
        """,
        [(11, Severity.WARNING)],
    ),
    (
        "gradient-penalty-on-detached-interpolates",
        """
        for real, z in loader:
            opt_D.zero_grad()
            fake = G(z)
            alpha = torch.rand(real.size(0), 1)
            mixed = (alpha * real + (1 - alpha) * fake.data).requires_grad_(True)
            grads = torch.autograd.grad(D(mixed).sum(), mixed, create_graph=True)[0]
            penalty = ((grads.norm(2, dim=1) - 1) ** 2).mean()
            d_loss = D(fake.detach()).mean() - D(real).mean() + 10 * penalty
            d_loss.backward()
            opt_D.step()
            opt_G.zero_grad()
            (-D(fake).mean()).backward()
            opt_G.step()
        """,
        [],
    ),
    (
        "generator-frozen-by-a-parameter-loop",
        """
        for real, z in loader:
            for p in G.parameters():
                p.requires_grad = False
            opt_D.zero_grad()
            (D(G(z)).mean() - D(real).mean()).backward()
            opt_D.step()
            for p in G.parameters():
                p.requires_grad = True
            opt_G.zero_grad()
            (-D(G(z)).mean()).backward()
            opt_G.step()
        """,
        [],
    ),
    (
        "generator-frozen-by-a-helper",
        """
        def set_requires_grad(net, flag):
            for p in net.parameters():
                p.requires_grad = flag

        for real, z in loader:
            set_requires_grad(G, False)
            opt_D.zero_grad()
            (D(G(z)).mean() - D(real).mean()).backward()
            opt_D.step()
            set_requires_grad(G, True)
            opt_G.zero_grad()
            (-D(G(z)).mean()).backward()
            opt_G.step()
        """,
        [],
    ),
    (
        "no-generator-optimizer-in-the-loop",
        """
        for real, z in loader:
            opt_D.zero_grad()
            (D(G(z)).mean() - D(real).mean()).backward()
            opt_D.step()
        """,
        [],
    ),
]


@pytest.mark.parametrize("case,src,expected", CASES, ids=[c[0] for c in CASES])
def test_case(case, src, expected, findings):
    got = findings(SETUP.lstrip("\n") + textwrap.dedent(src).lstrip("\n"), "TL116")
    assert [(f.line, f.severity) for f in got] == expected, [f"{f.line}: {f.message}" for f in got]


def test_a_trainer_class_with_optimizers_built_in_init(findings):
    src = textwrap.dedent(
        """
        import torch
        from torch import nn

        class GANTrainer:
            def __init__(self):
                self.G = nn.Linear(16, 64)
                self.D = nn.Linear(64, 1)
                self.opt_g = torch.optim.Adam(self.G.parameters())
                self.opt_d = torch.optim.Adam(self.D.parameters())

            def fit(self, loader):
                for real, z in loader:
                    self.opt_g.zero_grad()
                    self.opt_d.zero_grad()
                    fake = self.G(z)
                    (self.D(fake).mean() - self.D(real).mean()).backward(retain_graph=True)
                    self.opt_d.step()
                    (-self.D(fake).mean()).backward()
                    self.opt_g.step()
        """
    ).lstrip("\n")
    got = findings(src, "TL116")
    assert [(f.line, f.severity, f.column) for f in got] == [(16, Severity.ERROR, 21)]


def test_every_use_of_the_generator_output_in_the_loss_is_detached(fixed):
    src = SETUP.lstrip("\n") + textwrap.dedent(
        """
        for real, z in loader:
            fake = G(z)
            opt_D.zero_grad()
            d_loss = (D(fake) - fake.mean()).abs().mean() - D(real).mean()
            d_loss.backward()
            opt_D.step()
            opt_G.zero_grad()
            (-D(G(z)).mean()).backward()
            opt_G.step()
        """
    ).lstrip("\n")
    after = fixed(src, "TL116")
    assert "d_loss = (D(fake.detach()) - fake.detach().mean()).abs().mean() - D(real).mean()" in after


def test_a_penalty_taken_with_respect_to_the_generator_output_makes_the_fix_display_only(findings):
    src = SETUP.lstrip("\n") + textwrap.dedent(
        """
        for real, z in loader:
            fake = G(z)
            opt_D.zero_grad()
            fake_score = D(fake)
            (slope,) = torch.autograd.grad(fake_score.sum(), fake, create_graph=True)
            d_loss = fake_score.mean() - D(real).mean() + slope.pow(2).mean()
            d_loss.backward()
            opt_D.step()
            opt_G.zero_grad()
            (-D(G(z)).mean()).backward()
            opt_G.step()
        """
    ).lstrip("\n")
    (got,) = findings(src, "TL116")
    assert got.fix is not None and got.fix.applicability is DISPLAY
