"""TL301 input-not-moved-to-device beyond its embedded examples."""

from __future__ import annotations


def test_tl301_fix_reuses_cuda_call_of_the_model(fixed):
    src = "model = Net().cuda()\nfor x, y in loader:\n    loss = criterion(model(x), y)\n"
    out = fixed(src, "TL301")
    assert (
        out
        == "model = Net().cuda()\nfor x, y in loader:\n    x = x.cuda()\n    y = y.cuda()\n    loss = criterion(model(x), y)\n"
    )


def test_tl301_follows_names_derived_from_the_batch(findings):
    src = (
        "model.to(device)\nfor batch in loader:\n    inputs = batch['x'].float()\n    labels = batch['y']\n"
        "    labels = labels.to(device)\n    out = model(inputs)\n    loss = criterion(out, labels)\n"
    )
    (f,) = findings(src, "TL301")
    assert (f.line, "`inputs`" in f.message) == (6, True)


def test_tl301_helper_that_moves_in_place_clears_the_batch(findings):
    src = "model.to(device)\nfor batch in loader:\n    move_to(batch, device)\n    out = model(**batch)\n"
    assert findings(src, "TL301") == []


def test_tl301_needs_the_called_model_to_be_moved(findings):
    src = "encoder.to(device)\nfor x in loader:\n    out = head(x)\n"
    assert findings(src, "TL301") == []


def test_tl301_no_fix_when_device_expression_is_out_of_scope(findings):
    src = (
        "def build(device):\n    global model\n    model = Net().to(device)\n"
        "def train():\n    for x, y in loader:\n        out = model(x)\n"
    )
    (f,) = findings(src, "TL301")
    assert f.fix is None


def test_tl301_fix_when_the_device_is_a_parameter_of_the_training_function(fixed):
    src = (
        "def main(device):\n    model.to(device)\n"
        "def train(model, loader, device):\n    for x in loader:\n        out = model(x)\n"
    )
    out = fixed(src, "TL301")
    assert "    for x in loader:\n        x = x.to(device)\n        out = model(x)\n" in out
