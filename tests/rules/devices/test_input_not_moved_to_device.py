"""TL301 input-not-moved-to-device beyond its embedded examples."""

from __future__ import annotations


def test_tl301_fix_reuses_cuda_call_of_the_model(fixed):
    src = "import torch\nloader = torch.utils.data.DataLoader(data)\ncriterion = torch.nn.CrossEntropyLoss()\nmodel = torch.nn.Linear(4, 2).cuda()\nfor x, y in loader:\n    loss = criterion(model(x), y)\n"
    out = fixed(src, "TL301")
    assert out == (
        "import torch\nloader = torch.utils.data.DataLoader(data)\ncriterion = torch.nn.CrossEntropyLoss()\nmodel = torch.nn.Linear(4, 2).cuda()\nfor x, y in loader:\n"
        "    x = x.cuda()\n    y = y.cuda()\n    loss = criterion(model(x), y)\n"
    )


def test_tl301_follows_names_derived_from_the_batch(findings):
    src = (
        "import torch\nloader = torch.utils.data.DataLoader(data)\ncriterion = torch.nn.CrossEntropyLoss()\nmodel = torch.nn.Linear(4, 2)\n"
        "model.to(device)\nfor batch in loader:\n    inputs = batch['x'].float()\n    labels = batch['y']\n"
        "    labels = labels.to(device)\n    out = model(inputs)\n    loss = criterion(out, labels)\n"
    )
    (f,) = findings(src, "TL301")
    assert (f.line, "`inputs`" in f.message) == (10, True)


def test_tl301_helper_that_moves_in_place_clears_the_batch(findings):
    src = "import torch\nloader = torch.utils.data.DataLoader(data)\ncriterion = torch.nn.CrossEntropyLoss()\nmodel = torch.nn.Linear(4, 2)\nmodel.to(device)\nfor batch in loader:\n    move_to(batch, device)\n    out = model(**batch)\n"
    assert findings(src, "TL301") == []


def test_tl301_needs_the_called_model_to_be_moved(findings):
    src = "import torch\nloader = torch.utils.data.DataLoader(data)\ncriterion = torch.nn.CrossEntropyLoss()\nencoder, head = torch.nn.Linear(4, 4), torch.nn.Linear(4, 2)\nencoder.to(device)\nfor x in loader:\n    out = head(x)\n"
    assert findings(src, "TL301") == []


def test_tl301_no_fix_when_device_expression_is_out_of_scope(findings):
    src = (
        "import torch\nloader = torch.utils.data.DataLoader(data)\ncriterion = torch.nn.CrossEntropyLoss()\ndef build(device):\n    global model\n    model = torch.nn.Linear(4, 2).to(device)\n"
        "def train():\n    for x, y in loader:\n        out = model(x)\n"
    )
    (f,) = findings(src, "TL301")
    assert f.fix is None


def test_tl301_fix_when_the_device_is_a_parameter_of_the_training_function(fixed):
    src = (
        "import torch\ndef main(device):\n    model.to(device)\n    train(model, loader, device)\n"
        "def train(model: torch.nn.Module, loader: torch.utils.data.DataLoader, device):\n"
        "    for x in loader:\n        out = model(x)\n"
    )
    out = fixed(src, "TL301")
    assert "    for x in loader:\n        x = x.to(device)\n        out = model(x)\n" in out


def test_tl301_silent_when_the_dataset_puts_its_samples_on_cuda(findings):
    """The batches of a Dataset whose `__getitem__` calls `.cuda()` are already on the GPU (that dataset is
    TL504's business when workers run it)."""
    src = (
        "import torch\nfrom torch import nn\nfrom torch.utils.data import DataLoader, Dataset\n"
        "class OnGpu(Dataset):\n    def __len__(self):\n        return 8\n"
        "    def __getitem__(self, i):\n        return torch.randn(4).cuda(), torch.tensor(1).cuda()\n"
        "model = nn.Linear(4, 2).cuda()\nloader = DataLoader(OnGpu(), batch_size=2)\n"
        "for x, y in loader:\n    out = model(x)\n"
    )
    assert findings(src, "TL301") == []
    on_cpu = src.replace(".cuda(), torch.tensor(1).cuda()", ", torch.tensor(1)")
    assert [f.line for f in findings(on_cpu, "TL301")] == [12]


LOOP = (
    "import torch\nmodel = torch.nn.Linear(4, 1).to(device)\nloader = torch.utils.data.DataLoader(data)\n"
    "for x, y in loader:\n    x, y = x.to(device), y.to(device)\n"
)


def test_tl301_tensor_made_in_the_loop_is_named_with_its_factory(findings):
    src = LOOP + "    noise = torch.randn(x.shape).float()\n    out = model(noise + x)\n"
    (f,) = findings(src, "TL301")
    assert (f.line, "`noise` is created by `torch.randn(...)`" in f.message) == (7, True)


def test_tl301_tensor_made_in_the_loop_and_moved_later_is_silent(findings):
    src = LOOP + "    noise = torch.randn(x.shape)\n    noise = noise.cuda()\n    out = model(x + noise)\n"
    assert findings(src, "TL301") == []


def test_tl301_scalar_tensors_and_empty_shapes_mix_with_any_device(findings):
    src = LOOP + "    a = torch.tensor(0.1)\n    b = torch.zeros(())\n    out = model(x * a + b)\n"
    assert findings(src, "TL301") == []


def test_tl301_follows_a_batch_through_arithmetic(findings):
    src = (
        "import torch\nmodel = torch.nn.Linear(4, 1).to(device)\nloader = torch.utils.data.DataLoader(data)\n"
        "for x, y in loader:\n    out = model(x / 255.0)\n"
    )
    (f,) = findings(src, "TL301")
    assert (f.line, "`x` comes from the DataLoader" in f.message) == (5, True)


def test_tl301_another_functions_local_is_not_this_one(findings):
    # `net` in evaluate() is its own local, built on the CPU: main's moved `net` says nothing of it
    src = (
        "import torch\nfrom torch import nn\n"
        "def main(loader):\n    net = nn.Linear(4, 2).to('cuda')\n    for x in loader:\n        net(x.cuda())\n"
        "def evaluate(loader: torch.utils.data.DataLoader):\n    net = nn.Linear(4, 2)\n"
        "    for x in loader:\n        net(x)\n"
    )
    assert findings(src, "TL301") == []


def test_tl301_a_parameter_is_moved_when_every_caller_passes_a_moved_model(findings):
    body = (
        "import torch\nfrom torch import nn\n"
        "def fit(net, loader: torch.utils.data.DataLoader):\n    for x in loader:\n        net(x)\n"
        "def main(loader):\n    model = nn.Linear(4, 2).to('cuda')\n    fit(model, loader)\n"
    )
    (f,) = findings(body, "TL301")
    assert f.line == 5
    # one caller passes a model left on the CPU: nothing proves `net` is on the GPU
    assert findings(body + "    fit(nn.Linear(4, 2), loader)\n", "TL301") == []


def test_tl301_a_model_moved_to_the_cpu_is_with_its_batches(findings):
    src = (
        "import torch\nfrom torch import nn\nloader = torch.utils.data.DataLoader(data)\n"
        "model = nn.Linear(4, 2).to({device})\nfor x, y in loader:\n    model(x)\n"
    )
    assert findings(src.format(device='"cpu"'), "TL301") == []
    assert findings(src.format(device='torch.device("cpu")'), "TL301") == []
    assert [f.line for f in findings(src.format(device='"cuda"'), "TL301")] == [6]


def test_tl301_ctc_lengths_stay_on_the_cpu_by_api(findings):
    # CTCLoss takes its input/target lengths on the CPU (cuDNN requires it): only the log-probs must move
    src = (
        "import torch\nloader = torch.utils.data.DataLoader(data)\n"
        "criterion = torch.nn.CTCLoss(zero_infinity=True).to('cuda')\n"
        "for x, targets, target_lengths in loader:\n"
        "    preds = x.cuda()\n"
        "    preds_size = torch.IntTensor([preds.size(1)] * x.size(0))\n"
        "    loss = criterion(preds, targets.cuda(), preds_size, target_lengths)\n"
    )
    assert findings(src, "TL301") == []
    # the log-probs are not a length: a CPU tensor there still fails
    wrong = src.replace("criterion(preds,", "criterion(x,")
    assert [f.line for f in findings(wrong, "TL301")] == [7]


def test_tl301_a_forward_that_moves_its_input_itself_takes_a_cpu_batch(findings):
    model = (
        "import torch\nfrom torch import nn\n"
        "class Net(nn.Module):\n    def forward(self, inputs):\n"
        "        return self.body(torch.cat(inputs[0:2]){move})\n"
        "model = Net().cuda()\nloader = torch.utils.data.DataLoader(data)\n"
        "for inputs in loader:\n    out = model(inputs)\n"
    )
    assert findings(model.format(move=".cuda(non_blocking=True)"), "TL301") == []
    # a dtype change is not a move: the batch is still on the CPU
    assert [f.line for f in findings(model.format(move=".to(torch.float16)"), "TL301")] == [9]


_TENSOR_DATASET = (
    "import torch\nfrom torch.utils.data import DataLoader, TensorDataset\ndevice = torch.device('cuda')\n"
    "xs = torch.tensor(a, device={x})\nys = {y}\nloader = DataLoader(TensorDataset(xs, ys), batch_size=8)\n"
    "model = torch.nn.Linear(4, 2).to(device)\nfor x, y in loader:\n    out = model(x)\n"
)


def test_tl301_tensor_dataset_of_tensors_made_on_the_device_yields_device_batches(findings):
    src = _TENSOR_DATASET.format(x="device).unsqueeze(1", y="torch.tensor(b).to(device)")
    assert findings(src, "TL301") == []


def test_tl301_tensor_dataset_with_a_cpu_or_unknown_tensor_still_reports(findings):
    for x, y in (("'cpu'", "torch.tensor(b).to(device)"), ("device", "load(b)")):
        (f,) = findings(_TENSOR_DATASET.format(x=x, y=y), "TL301")
        assert f.line == 9


_REDEFINED = (
    "import torch\nloader = torch.utils.data.DataLoader(data)\ndef train(model):\n    for x, y in loader:\n"
    "        out = model(x)\n{early}def train(model):\n    for x, y in loader:\n        out = model(x.to(device))\n"
    "model = torch.nn.Linear(4, 2).to(device)\ntrain(model)\n"
)


def test_tl301_a_call_after_a_redefinition_runs_the_new_def(findings):
    assert findings(_REDEFINED.format(early=""), "TL301") == []


def test_tl301_a_call_before_the_redefinition_runs_the_first_def(findings):
    early = "model = torch.nn.Linear(4, 2).to(device)\ntrain(model)\n"
    (f,) = findings(_REDEFINED.format(early=early), "TL301")
    assert f.line == 5


_MOVED_LATER = (
    "import torch\nloader = torch.utils.data.DataLoader(data)\nnet = torch.nn.Linear(4, 2)\n{early}"
    "for epoch in range(3):\n    for x, y in loader:\n        out = net(x)\n"
    "net = net.to(device)\n"
)


def test_tl301_a_module_level_move_in_a_later_statement_has_not_run(findings):
    # issue 26: a notebook's CPU-only first version; the device version (a later cell) moves the same global
    assert findings(_MOVED_LATER.format(early=""), "TL301") == []
    (f,) = findings(_MOVED_LATER.format(early="net.to(device)\n"), "TL301")
    assert f.line == 7


def test_tl301_a_move_later_in_the_same_loop_reaches_the_next_iteration(findings):
    src = (
        "import torch\nloader = torch.utils.data.DataLoader(data)\nnet = torch.nn.Linear(4, 2)\n"
        "for x, y in loader:\n    out = net(x)\n    net.to(device)\n"
    )
    assert [f.line for f in findings(src, "TL301")] == [5]


_UNPACKED = (
    "import torch\nfrom torch.utils.data import DataLoader, TensorDataset\ndevice = torch.device('cuda')\n"
    "xs, ys = {moved}\nloader = DataLoader(TensorDataset(xs, ys), batch_size=8)\n"
    "model = torch.nn.Linear(4, 2).to(device)\nfor x, y in loader:\n    out = model(x)\n"
    "xs, ys = torch.tensor(a), torch.tensor(b)\n"
)


def test_tl301_tensors_moved_by_a_map_before_the_dataset_yield_device_batches(findings):
    # issue 26: `map(lambda t: t.to(device), ...)` moves every tensor; a later CPU rebinding is not what the
    # dataset was built from
    src = _UNPACKED.format(moved="map(lambda t: t.clone().detach().to(device), (xs, ys))")
    assert findings(src, "TL301") == []
    (f,) = findings(_UNPACKED.format(moved="map(lambda t: t.clone().detach(), (xs, ys))"), "TL301")
    assert f.line == 8


def test_tl301_an_index_of_a_device_tensor_stays_on_the_device(findings):
    src = _TENSOR_DATASET.replace("ys = {y}\n", "ys = {y}\nxs_train = xs[idx]\n").replace(
        "TensorDataset(xs, ys)", "TensorDataset(xs_train, ys)"
    )
    assert findings(src.format(x="device", y="torch.tensor(b).to(device)"), "TL301") == []
    assert [f.line for f in findings(src.format(x="'cpu'", y="torch.tensor(b).to(device)"), "TL301")] == [10]


_CALLED_BEFORE_THE_MOVE = (
    "import torch\nloader = torch.utils.data.DataLoader(data)\ndef train(model):\n    for x, y in loader:\n"
    "        out = model(x)\nmodel = torch.nn.Linear(4, 2)\n{early}train(model)\nmodel = model.to(device)\n"
)


def test_tl301_a_helper_called_before_the_module_level_move_gets_the_cpu_model(findings):
    # issue 26 (dlwpt-code): the first training_loop runs with the CPU model of its cell; a later cell moves it
    assert findings(_CALLED_BEFORE_THE_MOVE.format(early=""), "TL301") == []
    (f,) = findings(_CALLED_BEFORE_THE_MOVE.format(early="model.to(device)\n"), "TL301")
    assert f.line == 5


def test_tl301_dataparallel_scatters_a_cpu_batch_itself_but_the_loss_target_must_move(findings):
    """`DataParallel(model).cuda()` moves its inputs to device 0 in forward; the gathered output then meets
    the target on the GPU, so an unmoved target is still a device mismatch."""
    src = (
        "import torch\nfrom torch.utils.data import DataLoader\n\n\n"
        "def main(data):\n    model = torch.nn.DataParallel(torch.nn.Linear(4, 2)).cuda()\n"
        "    criterion = torch.nn.CrossEntropyLoss().cuda()\n    validate(DataLoader(data), model, criterion)\n\n\n"
        "def validate(loader, model, criterion):\n    for x, y in loader:\n        y = y.cuda()\n"
        "        loss = criterion(model(x), y)\n"
    )
    assert findings(src, "TL301") == []
    (f,) = findings(src.replace("        y = y.cuda()\n", ""), "TL301")
    assert "`y`" in f.message
    (f,) = findings(src.replace("torch.nn.DataParallel(torch.nn.Linear(4, 2))", "torch.nn.Linear(4, 2)"), "TL301")
    assert "`x`" in f.message
