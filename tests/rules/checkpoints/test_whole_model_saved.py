"""TL603 whole-model-saved beyond its embedded examples."""

from __future__ import annotations


def test_tl603_state_dict_tensors_and_parameters_are_not_modules(findings):
    src = (
        "import torch\nx = torch.zeros(3)\nw = torch.nn.Parameter(x)\ntorch.save(x, 'x.pt')\n"
        "torch.save(w, 'w.pt')\ntorch.save(model.state_dict(), 'm.pt')\n"
    )
    assert findings(src, "TL603") == []


def test_tl603_each_module_value_of_a_saved_dict_is_reported(findings):
    src = (
        "import torch\nenc = torch.nn.Linear(2, 2)\ndec = torch.nn.Linear(2, 2)\n"
        "torch.save({'enc': enc, 'dec': dec, 'step': 3, 'state': enc.state_dict()}, 'm.pt')\n"
    )
    assert [(f.line, f.column) for f in findings(src, "TL603")] == [(4, 20), (4, 32)]


def test_tl603_dict_values_of_unknown_kind_are_silent(findings):
    src = "import torch\ndef save(model, path):\n    torch.save({'model': model, 'epoch': 1}, path)\n"
    assert findings(src, "TL603") == []


def test_tl603_fix_is_display_only(findings):
    # issue 27: the project's own loader expects a whole model; `--unsafe-fixes` broke it (x3)
    (f,) = findings("import torch\nnet = torch.nn.Linear(2, 2)\ntorch.save(net, path)\n", "TL603")
    assert f.fix is not None and f.fix.applicability.value == "display"
