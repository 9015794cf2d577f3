"""TL501 persistent-workers-without-workers beyond its embedded examples."""

from __future__ import annotations


def test_tl501_keyword_num_workers_variable_is_silent(findings):
    src = "from torch.utils.data import DataLoader\ndl = DataLoader(ds, num_workers=args.workers, persistent_workers=True)\n"
    assert findings(src, "TL501") == []
