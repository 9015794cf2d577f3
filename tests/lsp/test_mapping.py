"""Pure mappings under the server: notebook cells <-> one program, and
code-point columns <-> LSP position encodings."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from lsprotocol import types

from torchlint import notebook
from torchlint.engine import fix_text, lint_text
from torchlint.findings import Edit, Fix
from torchlint.lsp.coordinates import LineIndex
from torchlint.lsp.edits import noqa_edit
from torchlint.registry import rules

CELLS = [
    notebook.Cell(
        0,
        "import torch\n%matplotlib inline\nmodel = torch.nn.Linear(4, 2)\n"
        "optimizer = torch.optim.Adam(model.parameters())",
    ),
    notebook.Cell(1, "# Notes", "markdown"),
    notebook.Cell(2, "%%bash\necho hi\n"),
    notebook.Cell(
        3,
        "for x, y in loader:\n    loss = torch.nn.functional.mse_loss(model(x), y)\n    !nvidia-smi\n"
        "    loss.backward()\n    optimizer.step()\n",
    ),
]


def test_findings_map_to_their_cell_with_cell_relative_lines():
    program = notebook.build(CELLS)
    found = notebook.to_cells(program, "nb.ipynb", lint_text("nb.ipynb", program.text, list(rules().values())).findings)
    assert [(f.path, f.line, f.column, f.end_line, f.code) for f in found] == [("nb.ipynb:cell_4", 1, 1, 1, "TL101")]
    (edit,) = found[0].fix.edits
    assert (edit.line, edit.column, edit.content) == (2, 1, "    optimizer.zero_grad()\n")


def test_fixes_split_back_into_cells_and_magics_survive():
    program = notebook.build(CELLS)
    fixed = fix_text("nb.ipynb", program.text, list(rules().values()))
    cells = program.split(fixed.text)
    assert cells[0] == CELLS[0].source  # no trailing newline added
    assert cells[2] == CELLS[2].source
    assert cells[3] == CELLS[3].source.replace("loader:\n", "loader:\n    optimizer.zero_grad()\n")
    assert 1 not in cells  # markdown is not part of the program


def test_positions_at_cell_boundaries_belong_to_the_cell_above():
    program = notebook.build([notebook.Cell(0, "a = 1\nb = 2\n"), notebook.Cell(1, "c = 3\n")])
    # program: marker, a, b, marker, c
    assert program.locate(2, 1) == (0, 1, 1)
    assert program.locate(4, 1) == (0, 3, 1)  # column 1 of the next marker: the end of cell 0
    assert program.locate(4, 3) is None  # inside a marker comment
    assert program.locate(5, 2) == (1, 1, 2)
    assert program.locate(9, 1) == (1, 2, 1)  # past the end: the end of the last cell
    remove_b = Fix("remove", (Edit(3, 1, 4, 1, ""),))
    assert program.cell_edits(remove_b) == [(0, Edit(2, 1, 3, 1, ""))]
    across = Fix("join", (Edit(3, 1, 5, 2, ""),))
    assert program.cell_edits(across) is None


def test_a_fix_that_eats_a_marker_is_refused():
    program = notebook.build([notebook.Cell(0, "a = 1\n"), notebook.Cell(1, "b = 2\n")])
    assert program.split(program.text.replace("# torchlint-cell 1\n", "")) is None


def test_noqa_goes_where_a_comment_can_go():
    text = 'x = """\nabc\n"""  \ny = 1  # noqa: TL201\nz = 2  # noqa\n'
    assert noqa_edit(text, [1, 2], "TL101", "utf-16").new_text == '"""  # noqa: TL101'  # not inside the string
    assert noqa_edit(text, [3], "TL101", "utf-16").new_text == "y = 1  # noqa: TL201, TL101"
    assert noqa_edit(text, [3], "TL201", "utf-16") is None
    assert noqa_edit(text, [4], "TL101", "utf-16") is None  # a bare noqa already covers it


@given(
    st.lists(st.text(alphabet=st.sampled_from("ab中😀\t é"), max_size=12), min_size=1, max_size=4),
    st.sampled_from(
        [types.PositionEncodingKind.Utf8, types.PositionEncodingKind.Utf16, types.PositionEncodingKind.Utf32]
    ),
)
def test_columns_round_trip_in_every_encoding(lines, encoding):
    text = "\n".join(lines)
    idx = LineIndex(text, encoding)
    unit = {"utf-8": "utf-8", "utf-16": "utf-16-le", "utf-32": "utf-32-le"}[encoding]
    width = {"utf-8": 1, "utf-16": 2, "utf-32": 4}[encoding]
    for n, line in enumerate(lines, 1):
        for col in range(1, len(line) + 2):
            pos = idx.to_lsp(n, col)
            assert pos.character == len(line[: col - 1].encode(unit)) // width
            assert idx.from_lsp(pos) == (n, col)
