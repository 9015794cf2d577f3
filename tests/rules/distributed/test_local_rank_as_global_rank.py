"""TL409 local-rank-as-global-rank beyond its embedded examples."""

from __future__ import annotations

HEAD = "import os\nimport torch.distributed as dist\n"


def test_tl409_positional_rank(findings):
    src = HEAD + 'dist.init_process_group("nccl", None, None, 16, int(os.environ["LOCAL_RANK"]))\n'
    (f,) = findings(src, "TL409")
    assert f.line == 3


def test_tl409_local_world_size_is_single_node(findings):
    src = HEAD + (
        'dist.init_process_group("nccl", rank=int(os.environ["LOCAL_RANK"]), '
        'world_size=int(os.environ["LOCAL_WORLD_SIZE"]))\n'
    )
    assert findings(src, "TL409") == []


def test_tl409_variable_is_not_rewritten(findings):
    src = HEAD + 'lr = int(os.environ["LOCAL_RANK"])\ndist.init_process_group("nccl", rank=lr)\n'
    (f,) = findings(src, "TL409")
    assert f.fix is None


def test_tl409_fix_keeps_the_quotes(fixed):
    src = HEAD + "dist.init_process_group('gloo', rank=int(os.environ['LOCAL_RANK']))\n"
    assert "os.environ['RANK']" in fixed(src, "TL409")
