"""Notebooks as users write them: exercise cells that do not parse, IPython syntax
(`files = !ls`, `%%time`, `obj?`), syntax errors where CPython puts them, the
checkpoints Jupyter leaves behind, and the cache."""

from __future__ import annotations

import ast
import json

import pytest

from selecting import extend_select
from torchlint import checker, notebook
from torchlint.config import ConfigResolver
from torchlint.engine import lint_text
from torchlint.ipython_syntax import stand_ins
from torchlint.registry import known_codes, rules

TRAIN_CELL = (
    "for x, y in loader:\n"
    "    loss = torch.nn.functional.mse_loss(model(x), y)\n"
    "    loss.backward()\n"
    "    optimizer.step()\n"
)
SETUP_CELL = (
    "import torch\n"
    "model = torch.nn.Linear(4, 2)\n"
    "optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
    "loader = [(torch.randn(8, 4), torch.randn(8, 2)) for _ in range(5)]\n"
)


def write_notebook(path, sources):
    """A notebook in Jupyter's layout; a source starting with "md:" is a markdown cell."""
    cells = []
    for src in sources:
        if src.startswith("md:"):
            cells.append({"cell_type": "markdown", "metadata": {}, "source": src[3:].splitlines(True)})
        else:
            cells.append(
                {
                    "cell_type": "code",
                    "execution_count": None,
                    "metadata": {},
                    "outputs": [],
                    "source": src.splitlines(True),
                }
            )
    nb = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path.write_text(json.dumps(nb, indent=1) + "\n")
    return path


# An exercise notebook as a course hands it out: the setup ran, one cell waits for the student.
LAB = [
    ("markdown", "# Lab 3: a tiny regression\n\nFill in the cells marked TODO, then run the training cell."),
    ("code", "import torch\n%matplotlib inline\nfiles = !ls data\nprint(len(files))"),
    ("code", SETUP_CELL.split("\n", 1)[1]),
    ("markdown", "**Exercise:** pick a learning rate."),
    ("code", "lr = # TODO\n"),
    ("code", "%%time\n" + TRAIN_CELL),
    ("code", "model?\n??optimizer\nelapsed = %time sum(range(3))\n!pip install tqdm \\\n    rich"),
    ("code", "%%bash\nls -la\n"),
    ("code", "state = torch.load('weights.pt')\nnote = ('step %d'\n        % 3)"),
]


def write_lab(path):
    """The lab in Jupyter's own layout, with the output of the cell that ran."""
    cells = []
    for kind, src in LAB:
        cell = {"cell_type": kind, "metadata": {}, "source": src.splitlines(True)}
        if kind == "code":
            cell.update(execution_count=None, outputs=[])
        cells.append(cell)
    cells[1].update(execution_count=1, outputs=[{"name": "stdout", "output_type": "stream", "text": ["3\n"]}])
    nb = {"cells": cells, "metadata": {"kernelspec": {"name": "python3"}}, "nbformat": 4, "nbformat_minor": 5}
    path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n")
    return path


def check(path, mode="check", cache_dir=None, unsafe_fixes=None):
    jobs = checker.plan(
        [path], ConfigResolver(known_codes(), None), mode, cache_dir=cache_dir, unsafe_fixes=unsafe_fixes
    )
    return checker.run(jobs)


def found(path, **kw):
    return [(f.path.rsplit(":", 1)[-1], f.line, f.column, f.code) for f in check(path, **kw).findings]


def test_the_lab_notebook_reports_every_cell(tmp_path):
    (tmp_path / "pyproject.toml").write_text(extend_select("TL601"))
    lab = write_lab(tmp_path / "lab.ipynb")
    assert found(lab) == [
        ("cell_5", 1, 6, "TL000"),  # `lr = # TODO`: Python points at the comment
        ("cell_6", 2, 1, "TL101"),  # the `%%time` cell's loop is still analysed
        ("cell_9", 1, 9, "TL601"),  # after `x = %time ...`, `obj?`, `!pip ... \` and a `%%bash` cell
    ]


def test_an_unparsable_cell_is_left_out_and_the_rest_is_analysed(tmp_path):
    nb = write_notebook(tmp_path / "nb.ipynb", [SETUP_CELL, "x = # TODO\n", "md:# Train", TRAIN_CELL])
    (error, finding) = check(nb).findings
    assert (error.path, error.line, error.column, error.end_line, error.end_column) == (f"{nb}:cell_2", 1, 5, 1, 11)
    assert error.message == "syntax error: invalid syntax"
    assert (finding.path, finding.line, finding.code) == (f"{nb}:cell_4", 1, "TL101")


@pytest.mark.parametrize(
    "cell,position,message",
    [
        ("def f(x):\n    y = x\n    return x +\n\n\n", (3, 15), "invalid syntax"),
        ("a = 1\nb = (a,\n", (2, 5), "'(' was never closed"),
        ("import torch\ndef g():\n", (2, 9), "expected an indented block after function definition on line 2"),
        ("x = 1\n  y = 2", (2, 2), "unexpected indent"),  # a cell indented as a whole runs: IPython dedents it
        ("s = 'abc\nt = 2\n", (1, 5), "unterminated string literal (detected at line 1)"),
    ],
)
def test_syntax_errors_in_cells_are_where_python_says(tmp_path, cell, position, message):
    nb = write_notebook(tmp_path / "nb.ipynb", ["md:intro", SETUP_CELL, cell, TRAIN_CELL])
    findings = check(nb).findings
    (error,) = [f for f in findings if f.code == "TL000"]
    assert (error.path, (error.line, error.column)) == (f"{nb}:cell_3", position)
    assert error.message == f"syntax error: {message}"
    lines = cell.splitlines()
    assert error.end_line <= len(lines) and error.end_column <= len(lines[error.end_line - 1]) + 1, "past the cell"
    assert [f.code for f in findings if f.code != "TL000"] == ["TL101"]


@pytest.mark.parametrize(
    "text,position,message",
    [
        ("import torch\ndef f(x):\n    y = 1\n    return x +\n\n\n", (4, 15), "invalid syntax"),
        ("x = [1,\n     2\ny = 3\n", (1, 5), "'[' was never closed"),
        ("print 'hi'\n", (1, 1), "Missing parentheses in call to 'print'. Did you mean print(...)?"),
    ],
)
def test_syntax_errors_in_python_files_are_where_python_says(tmp_path, text, position, message):
    f = tmp_path / "broken.py"
    f.write_text(text)
    (error,) = check(f).findings
    assert (error.code, (error.line, error.column), error.message) == ("TL000", position, f"syntax error: {message}")


def test_files_and_cells_that_parse_give_no_tl000(tmp_path):
    nb = write_notebook(tmp_path / "nb.ipynb", [SETUP_CELL, "await asyncio.sleep(0)\n", "x = 1"])
    assert found(nb) == []


@pytest.mark.parametrize(
    "metadata",
    [
        {"kernelspec": {"name": "julia-1.5", "language": "julia", "display_name": "Julia 1.5"}},
        {"language_info": {"name": "R"}},
    ],
)
def test_a_notebook_of_another_kernel_language_is_not_linted_as_python(tmp_path, metadata):
    """A Julia notebook's cells are valid Julia: reporting each as a Python syntax error would be false."""
    nb = write_notebook(tmp_path / "nb.ipynb", ["using Flux\nx = [1 2; 3 4]\n", SETUP_CELL + TRAIN_CELL])
    assert [f.code for f in check(nb).findings] == ["TL000", "TL101"]
    data = json.loads(nb.read_text())
    data["metadata"] = metadata
    nb.write_text(json.dumps(data))
    assert check(nb).findings == []
    data["metadata"] = {"kernelspec": {"name": "python3", "language": "python"}}
    nb.write_text(json.dumps(data))
    assert [f.code for f in check(nb).findings] == ["TL000", "TL101"]


def masked(cell):
    lines = cell.split("\n")
    return [stand_ins(lines).get(i, line) for i, line in enumerate(lines)]


@pytest.mark.parametrize(
    "line,python",
    [
        ("files = !ls -la", "files = ..."),
        ("a, b.c = !git log", "a, b.c = ..."),
        ("elapsed = %time train()", "elapsed = ..."),
        ("%matplotlib inline", "pass"),
        ("!nvidia-smi", "pass"),
        ("!!ls", "pass"),
        ("model?", "pass"),
        ("model.forward??", "pass"),
        ("?torch.nn", "pass"),
        ("??optimizer", "pass"),
        ("%timeit?", "pass"),
        ("torch.*Loss?", "pass"),
        ("x = 5 % 3", "x = 5 % 3"),
        ("ok = a != b", "ok = a != b"),
        ("flag = not x", "flag = not x"),
    ],
)
def test_ipython_lines_get_python_stand_ins(line, python):
    assert masked(line) == [python]


def test_ipython_syntax_only_where_a_logical_line_starts():
    cell = (
        "msg = ('step %d'\n"
        "       % 3)\n"  # inside brackets: Python's modulo
        "doc = '''\n"
        "%not a magic\n"  # inside a string
        "'''\n"
        "for i in range(3):\n"
        "    !echo $i\n"  # indented in a block: a statement there
        "!pip install a \\\n"
        "    b"  # the shell command goes on
    )
    assert masked(cell) == [
        "msg = ('step %d'",
        "       % 3)",
        "doc = '''",
        "%not a magic",
        "'''",
        "for i in range(3):",
        "    pass",
        "pass",
        "",
    ]
    ast.parse("\n".join(masked(cell)))


def test_cell_magics():
    assert masked("%%bash\nls\nx = (") == ["", "", ""]  # not Python at all: comments
    assert masked("%%time\n!ls\ny = 1") == ["", "pass", "y = 1"]  # the body is Python


def test_stand_ins_keep_columns_and_are_restored_by_fixes():
    cells = [notebook.Cell(0, SETUP_CELL + "files = !ls\nmodel?\n"), notebook.Cell(1, "%%time\n" + TRAIN_CELL)]
    program = notebook.build(cells)
    findings = notebook.to_cells(
        program, "nb.ipynb", lint_text("nb.ipynb", program.text, list(rules().values())).findings
    )
    assert [(f.path, f.line, f.column) for f in findings] == [("nb.ipynb:cell_2", 2, 1)]
    assert "files = ...  # torchlint-magic" in program.text
    from torchlint.engine import fix_text

    sources = program.split(fix_text("nb.ipynb", program.text, list(rules().values())).text)
    assert sources[0] == cells[0].source
    assert sources[1] == "%%time\n" + TRAIN_CELL.replace("loader:\n", "loader:\n    optimizer.zero_grad()\n")
    lost = program.text.replace("files = ...  # torchlint-magic 0\n", "files = ...\n")
    assert program.split(lost) is None, "a stand-in a fix rewrote must not leak into the cell"


def test_fix_rewrites_only_the_changed_source_lines(tmp_path):
    (tmp_path / "pyproject.toml").write_text(extend_select("TL601"))
    lab = write_lab(tmp_path / "lab.ipynb")
    before_text = lab.read_text()
    before = before_text.splitlines()
    result = check(lab, mode="fix", unsafe_fixes=True)  # TL601's fix is unsafe
    assert result.fixed == 2
    after = lab.read_text().splitlines()
    assert len(after) == len(before) + 1
    inserted = [line for line in after if line not in before]
    assert inserted == [
        '    "    optimizer.zero_grad()\\n",',
        "    \"state = torch.load('weights.pt', weights_only=True)\\n\",",
    ]
    old, new = json.loads(before_text), json.loads(lab.read_text())
    assert [c for i, c in enumerate(new["cells"]) if i not in (5, 8)] == [
        c for i, c in enumerate(old["cells"]) if i not in (5, 8)
    ]
    assert "".join(new["cells"][4]["source"]) == "lr = # TODO\n", "the broken cell is left as it was"
    assert found(lab) == [("cell_5", 1, 6, "TL000")]


def test_fix_keeps_a_one_string_source_and_compact_layout(tmp_path):
    (tmp_path / "pyproject.toml").write_text(extend_select("TL601"))
    nb = {
        "cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "source": SETUP_CELL + "sd = torch.load(p)"}],
        "metadata": {},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    path = tmp_path / "nb.ipynb"
    path.write_text(json.dumps(nb))
    assert check(path, mode="fix", unsafe_fixes=True).fixed == 1
    text = path.read_text()
    assert "\n" not in text and text.count('"source": "import torch\\n') == 1
    assert json.loads(text)["cells"][0]["source"].endswith("sd = torch.load(p, weights_only=True)")


def test_checkpoints_are_not_checked_twice(tmp_path):
    write_notebook(tmp_path / "nb.ipynb", [SETUP_CELL, TRAIN_CELL])
    (tmp_path / ".ipynb_checkpoints").mkdir()
    write_notebook(tmp_path / ".ipynb_checkpoints" / "nb-checkpoint.ipynb", [SETUP_CELL, TRAIN_CELL])
    assert [f.path for f in check(tmp_path).findings] == [f"{tmp_path / 'nb.ipynb'}:cell_2"]


def test_a_warm_run_does_not_lint_the_notebook_again(tmp_path, monkeypatch):
    nb = write_notebook(tmp_path / "nb.ipynb", [SETUP_CELL, "x = # TODO", TRAIN_CELL])
    cold = check(nb, cache_dir=tmp_path / "cache").findings
    assert [(f.path, f.line, f.code) for f in cold] == [(f"{nb}:cell_2", 1, "TL000"), (f"{nb}:cell_3", 1, "TL101")]
    calls = []
    real = notebook.check
    monkeypatch.setattr(notebook, "check", lambda *a, **k: calls.append(a[0]) or real(*a, **k))
    warm = check(nb, cache_dir=tmp_path / "cache").findings
    assert calls == [] and warm == cold
    nb.write_text(nb.read_text().replace("x = # TODO", "x = 1"))
    assert [f.code for f in check(nb, cache_dir=tmp_path / "cache").findings] == ["TL101"]
    assert calls == [str(nb)], "a changed notebook is linted again"


SOFTMAX_CELL = "import torch.nn.functional as F\nprobs = F.softmax(logits, dim=1)\n"
LOSS_CELL = "x = 1\nloss = F.cross_entropy(probs, target)\n"


def test_a_message_that_cites_another_line_names_its_cell(tmp_path, run_cli):
    """TL803 says where the softmax output reaches the loss: in Jupyter's terms, not the joined program's."""
    nb = write_notebook(tmp_path / "nb.ipynb", ["md:intro", SOFTMAX_CELL, "y = 2\n", LOSS_CELL])
    out = run_cli("check", "--no-cache", "--select", "TL803", nb).stdout
    (line,) = [line for line in out.splitlines() if "TL803" in line]
    assert "on cell 4, line 2" in line and "on line" not in line, line


def test_a_cell_indented_as_a_whole_runs_as_ipython_runs_it(tmp_path):
    """IPython strips the indentation of a cell's first line from every line (a cell pasted from inside a
    function): no syntax error, findings at the cell's own columns, and a fix keeps the indentation."""
    indented = "    state = torch.load('weights.pt')\n\n    note = 1\n"
    (tmp_path / "pyproject.toml").write_text(extend_select("TL601"))
    nb = write_notebook(tmp_path / "nb.ipynb", [SETUP_CELL, indented])
    assert found(nb) == [("cell_2", 1, 13, "TL601")]  # `torch.load` at its column in the cell
    check(nb, mode="fix", unsafe_fixes=True)
    cells = json.loads(nb.read_text())["cells"]
    assert "".join(cells[1]["source"]) == indented.replace("'weights.pt')", "'weights.pt', weights_only=True)")
