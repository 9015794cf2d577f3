"""TL307 packed-lengths-on-device beyond its embedded examples."""

from __future__ import annotations

PACK = "import torch\nfrom torch.nn.utils.rnn import pack_padded_sequence\n"


def test_tl307_dtype_conversion_is_not_a_move(findings):
    src = PACK + "lengths = lengths.to(torch.int64)\npacked = pack_padded_sequence(x, lengths)\n"
    assert findings(src, "TL307") == []


def test_tl307_copied_back_before_the_call(findings):
    src = PACK + "lengths = lengths.cuda()\nlengths = lengths.cpu()\npacked = pack_padded_sequence(x, lengths)\n"
    assert findings(src, "TL307") == []


def test_tl307_inline_move_is_fixed_with_a_copy_back(fixed):
    src = PACK + "packed = pack_padded_sequence(x, lengths.cuda(), batch_first=True)\n"
    assert fixed(src, "TL307").endswith("pack_padded_sequence(x, lengths.cuda().cpu(), batch_first=True)\n")


def test_tl307_keyword_lengths(findings):
    src = (
        PACK
        + "lens = torch.ones(4, dtype=torch.long, device='cuda:1')\npacked = pack_padded_sequence(x, lengths=lens)\n"
    )
    (f,) = findings(src, "TL307")
    assert f.line == 4


def test_tl307_model_whose_forward_copies_is_silent_but_one_that_passes_through_is_not(findings):
    model = (
        "from torch import nn\nclass Enc(nn.Module):\n    def forward(self, x, lengths):\n"
        "        return pack_padded_sequence(x, {arg})\n"
        "model = Enc().cuda()\nout = model(x.cuda(), lengths.cuda())\n"
    )
    assert findings(PACK + model.format(arg="lengths.cpu()"), "TL307") == []
    assert len(findings(PACK + model.format(arg="lengths"), "TL307")) == 1
