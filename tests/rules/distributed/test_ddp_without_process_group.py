"""TL402 ddp-without-process-group beyond its embedded examples."""

from __future__ import annotations

DDP = "from torch.nn.parallel import DistributedDataParallel as DDP\n"


def test_tl402_reports_once_and_respects_launchers(findings):
    src = DDP + "from torch.utils.data import DistributedSampler\ns = DistributedSampler(ds)\nm = DDP(net)\n"
    assert len(findings(src, "TL402")) == 1
    assert findings("import lightning\n" + src, "TL402") == []
    assert findings(src + "torch.distributed.init_process_group('gloo')\n", "TL402") == []
