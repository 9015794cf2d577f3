"""TL503 workers-without-main-guard beyond its embedded examples."""

from __future__ import annotations

LOADER = "from torch.utils.data import DataLoader\n"


def test_tl503_follows_the_chain_of_calls_from_module_level_and_names_its_start(findings):
    src = (
        LOADER + "def epoch(loader):\n    for batch in loader:\n        step(batch)\n"
        "def main():\n    epoch(DataLoader(ds, num_workers=3))\nmain()\n"
    )
    (f,) = findings(src, "TL503")
    assert f.line == 3 and "`main()` runs it" in f.message and "3 worker processes" in f.message


def test_tl503_silent_for_functions_only_the_main_guard_runs(findings):
    src = (
        LOADER + "loader = DataLoader(ds, num_workers=4)\ndef main():\n    for b in loader:\n        step(b)\n"
        "if __name__ == '__main__':\n    main()\n"
    )
    assert findings(src, "TL503") == []


def test_tl503_silent_for_a_loader_whose_workers_are_not_a_literal(findings):
    src = LOADER + "loader = DataLoader(ds, num_workers=args.workers)\nfor b in loader:\n    step(b)\n"
    assert findings(src, "TL503") == []


def test_tl503_silent_in_a_library_module(findings):
    src = LOADER + "def batches(ds):\n    for b in DataLoader(ds, num_workers=2):\n        yield b\n"
    assert findings(src, "TL503") == []


def test_tl503_a_start_method_is_chosen_by_a_call_not_a_mention(findings):
    """The start method is read from the file's calls (its summary), not from its text."""
    src = LOADER + "loader = DataLoader(ds, num_workers=2)\nfor b in loader:\n    step(b)\n"
    (f,) = findings(src + "# set_start_method('spawn') breaks this on macOS\n", "TL503")
    assert f.line == 3
    called = "import multiprocessing as mp\nmp.set_start_method('fork')\n" + src
    assert findings(called, "TL503") == []


def test_tl503_silent_in_a_file_of_cells(findings):
    src = "# %%\n" + LOADER + "loader = DataLoader(ds, num_workers=2)\n# %%\nfor b in loader:\n    step(b)\n"
    assert findings(src, "TL503") == []
    assert len(findings(src.replace("# %%\n", ""), "TL503")) == 1
