"""TL603 whole-model-saved beyond its embedded examples."""

from __future__ import annotations


def test_tl603_state_dict_tensors_and_parameters_are_not_modules(findings):
    src = (
        "import torch\nx = torch.zeros(3)\nw = torch.nn.Parameter(x)\ntorch.save(x, 'x.pt')\n"
        "torch.save(w, 'w.pt')\ntorch.save(model.state_dict(), 'm.pt')\n"
    )
    assert findings(src, "TL603") == []
