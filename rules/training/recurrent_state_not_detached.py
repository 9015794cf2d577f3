"""TL119 recurrent-state-not-detached: Recurrent hidden state carried into the next step without detach()"""

from __future__ import annotations

import libcst as cst

from torchlint.engine.core.analyses import Analysis
from torchlint.engine.core.walk import block_statements
from torchlint.engine.flow.blocks import Loop
from torchlint.engine.flow.graph_flow import Body, body_of
from torchlint.engine.flow.iteration_values import (
    CarriedState,
    backward_through,
    carried_state,
    cut_by_forward,
    state_argument,
)
from torchlint.engine.rule import UNSAFE, InsertBefore, Invalid, Rule, fix
from torchlint.engine.semantic.kinds import NO_GRAD, TENSOR_FACTORIES
from torchlint.engine.semantic.values import current_where
from torchlint.findings import Severity

# Recurrent layers whose state is one tensor, and those whose state is an (h, c) pair.
_TENSOR_STATE = frozenset(f"torch.nn.{c}" for c in ("RNN", "GRU", "RNNCell", "GRUCell"))
_PAIR_STATE = frozenset(f"torch.nn.{c}" for c in ("LSTM", "LSTMCell"))
_FACTORIES = frozenset(("torch", f) for f in TENSOR_FACTORIES)
_MOVES = frozenset({"to", "cuda"})


class RecurrentStateNotDetached(Rule):
    code = "TL119"
    analyses = frozenset(
        {Analysis.CALL_SITES, Analysis.GRAPH_BODIES, Analysis.OWN_SUMMARY, Analysis.SCOPES, Analysis.VALUES}
    )
    requires = ("backward",)
    name = "recurrent-state-not-detached"
    message = "`{state}` comes out of `{call}` with this step's graph and goes into the next step's call undetached: {consequence}; detach it at the start of the step ({detach})"
    severity = Severity.ERROR
    category = "correctness"
    summary = "Recurrent hidden state carried into the next step without detach()"
    what = (
        "Flags a module call inside a training loop that takes a state and returns its new value under the "
        "same name (`out, hidden = rnn(x, hidden)`), when the loop hands that value to the next iteration's "
        "call untouched and back-propagates a loss built from the call in every iteration. Silent when the "
        "state is detached (`hidden.detach()`, `repackage_hidden(hidden)`, any helper it is passed to), "
        "re-initialised in the loop, computed under `torch.no_grad()`, or when the loop runs no backward."
    )
    why = (
        "The returned state is attached to this step's graph. Fed into the next step, it links that step's "
        "graph to the previous one, which the previous `backward()` already freed: the second `backward()` "
        'raises "Trying to backward through the graph a second time". With `retain_graph=True` it runs, '
        "but every step back-propagates through all earlier steps: time and memory grow without bound. "
        "Truncated back-propagation through time detaches the state at each step boundary."
    )
    example = """\
import torch
from torch import nn

lstm = nn.LSTM(32, 64)
head = nn.Linear(64, 100)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam([*lstm.parameters(), *head.parameters()])
hidden = (torch.zeros(1, 8, 64), torch.zeros(1, 8, 64))
for x, y in chunks:
    out, hidden = lstm(x, hidden)
    loss = criterion(head(out).flatten(0, 1), y.flatten())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""
    fix_example = """\
import torch
from torch import nn

lstm = nn.LSTM(32, 64)
head = nn.Linear(64, 100)
criterion = nn.CrossEntropyLoss()
optimizer = torch.optim.Adam([*lstm.parameters(), *head.parameters()])
hidden = (torch.zeros(1, 8, 64), torch.zeros(1, 8, 64))
for x, y in chunks:
    hidden = tuple(h.detach() for h in hidden)
    out, hidden = lstm(x, hidden)
    loss = criterion(head(out).flatten(0, 1), y.flatten())
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
"""
    fix_safety = (
        "Unsafe: inserts the detach as the first statement of the loop body, which is truncated "
        "back-propagation through time: gradients stop at the step boundary. That is what the code can run "
        "with, but re-initialising the state each step is the other choice, and with `retain_graph=True` "
        "the gradients change. Offered only when the state's shape is known (a tensor for `nn.RNN`/`nn.GRU` or "
        "a state that starts as a tensor factory's result, an `(h, c)` pair for `nn.LSTM` or a state that "
        "starts as a tuple, or a state passed as a tuple of names) and a value reaches the loop (not `None`)."
    )
    VALID = [
        # truncated BPTT: detached at the start of each step
        """\
import torch
from torch import nn
lstm = nn.LSTM(8, 16)
hidden = (torch.zeros(1, 4, 16), torch.zeros(1, 4, 16))
for x, y in chunks:
    hidden = tuple(h.detach() for h in hidden)
    out, hidden = lstm(x, hidden)
    criterion(out, y).backward()
""",
        # a helper that repackages the state (word_language_model)
        """\
import torch
from torch import nn
rnn = nn.GRU(8, 16)
def repackage_hidden(h):
    return h.detach() if isinstance(h, torch.Tensor) else tuple(repackage_hidden(v) for v in h)
hidden = torch.zeros(1, 4, 16)
for x, y in chunks:
    hidden = repackage_hidden(hidden)
    out, hidden = rnn(x, hidden)
    criterion(out, y).backward()
""",
        # re-initialised every batch
        """\
from torch import nn
rnn = nn.GRU(8, 16)
for x, y in loader:
    hidden = None
    for t in range(x.size(0)):
        out, hidden = rnn(x[t : t + 1], hidden)
    criterion(out, y).backward()
""",
        # detached after the step, ready for the next one
        """\
import torch
from torch import nn
rnn = nn.GRU(8, 16)
hidden = torch.zeros(1, 4, 16)
for x, y in chunks:
    out, hidden = rnn(x, hidden)
    criterion(out, y).backward()
    hidden = hidden.detach()
""",
        # evaluation: no backward
        """\
import torch
from torch import nn
rnn = nn.GRU(8, 16)
hidden = torch.zeros(1, 4, 16)
with torch.no_grad():
    for x, y in chunks:
        out, hidden = rnn(x, hidden)
        total += criterion(out, y).item()
""",
        # the state only threads the time steps of one sequence; backward once per sequence
        """\
from torch import nn
cell = nn.GRUCell(8, 16)
for seq, y in loader:
    h = seq.new_zeros(seq.size(1), 16)
    for x in seq:
        h = cell(x, h)
    criterion(h, y).backward()
""",
        # detached in place
        """\
import torch
from torch import nn
rnn = nn.GRU(8, 16)
hidden = torch.zeros(1, 4, 16)
for x, y in chunks:
    hidden.detach_()
    out, hidden = rnn(x, hidden)
    criterion(out, y).backward()
""",
    ]
    INVALID = [
        Invalid(
            """\
import torch
from torch import nn
rnn = nn.GRU(8, 16)
hidden = torch.zeros(1, 4, 16)
for x, y in chunks:
    out, hidden = rnn(x, hidden)
    loss = criterion(out, y)
    loss.backward()
""",
            line=6,
            fixed="""\
import torch
from torch import nn
rnn = nn.GRU(8, 16)
hidden = torch.zeros(1, 4, 16)
for x, y in chunks:
    hidden = hidden.detach()
    out, hidden = rnn(x, hidden)
    loss = criterion(out, y)
    loss.backward()
""",
        ),
        # an LSTM cell threaded through a whole stream, one backward per chunk
        Invalid(
            """\
import torch
from torch import nn
cell = nn.LSTMCell(8, 16)
h, c = torch.zeros(4, 16), torch.zeros(4, 16)
criterion = nn.MSELoss()
for chunk, y in stream:
    for x in chunk:
        h, c = cell(x, (h, c))
    criterion(h, y).backward(retain_graph=True)
""",
            line=8,
            fixed="""\
import torch
from torch import nn
cell = nn.LSTMCell(8, 16)
h, c = torch.zeros(4, 16), torch.zeros(4, 16)
criterion = nn.MSELoss()
for chunk, y in stream:
    h, c = h.detach(), c.detach()
    for x in chunk:
        h, c = cell(x, (h, c))
    criterion(h, y).backward(retain_graph=True)
""",
        ),
        # any module: the state's shape is unknown, no fix
        Invalid(
            """\
from torch import nn
def train(model: nn.Module, chunks, optimizer):
    state = model.init_state()
    for x, y in chunks:
        logits, state = model(x, state)
        criterion(logits, y).backward()
        optimizer.step()
""",
            line=5,
        ),
    ]

    def visit_Assign(self, node: cst.Assign) -> None:
        if not self.ctx.loops or state_argument(node) is None or self.ctx.under_call(*NO_GRAD):
            return
        body = body_of(self.ctx)
        state = carried_state(body, node)
        if state is None or cut_by_forward(body, state.call):
            return
        for loop in state.loops:
            backward = backward_through(body, state.stmt, loop)
            if backward is not None:
                self._report(body, state, loop, backward.retain)
                return

    def _report(self, body: Body, state: CarriedState, loop: Loop, retain: bool) -> None:
        code = self.ctx.module.code_for_node
        detach = self._detach(body, state, loop)
        arg = code(state.arg)
        shown = f"`{detach}`" if detach is not None else f"`{arg} = {arg}.detach()`, or each tensor of a tuple state"
        consequence = (
            "every `backward()` runs through all earlier steps (time and memory grow without bound)"
            if retain
            else 'the second `backward()` raises "Trying to backward through the graph a second time"'
        )
        message = self.message.format(
            state=arg,
            call=code(state.call.func) + "(...)",
            consequence=consequence,
            detach=shown,
        )
        first = block_statements(loop.body)[0] if isinstance(loop.body, cst.IndentedBlock) else None
        edit = None
        if detach is not None and first is not None and self._reaches_with_value(body, state, loop):
            edit = fix(
                f"Detach `{arg}` at the start of the step",
                InsertBefore(first, detach),
                applicability=UNSAFE,
                risk="stops gradients at each step (truncated BPTT)",
            )
        self.report(state.call, message, fix=edit)

    def _detach(self, body: Body, state: CarriedState, loop: Loop) -> str | None:
        """The detaching statement for the state's known shape: from the recurrent layer, or from the value it
        starts the loop with (a tuple, or a tensor factory's result); None: unknown."""
        names = state.names
        if isinstance(state.arg, (cst.Tuple, cst.List)):
            return f"{', '.join(names)} = {', '.join(f'{n}.detach()' for n in names)}"
        (name,) = names
        built = self.ctx.values.builder(state.call.func, current_where(self.ctx))
        layer = self.ctx.qualname(built[0].func) if built is not None else None
        start = body.index(loop)
        initial = body.reaching(name, start) if start is not None else None
        value = initial.value if initial is not None else None
        if isinstance(value, cst.Call) and isinstance(value.func, cst.Attribute) and value.func.attr.value in _MOVES:
            value = value.func.value  # `torch.zeros(...).to(device)`
        factory = self.ctx.qualname(value.func) if isinstance(value, cst.Call) else None
        if layer in _TENSOR_STATE or factory is not None and factory.rpartition(".")[::2] in _FACTORIES:
            return f"{name} = {name}.detach()"
        if layer in _PAIR_STATE or isinstance(value, (cst.Tuple, cst.List)):
            each = "t" if name == "h" else "h"
            return f"{name} = tuple({each}.detach() for {each} in {name})"
        return None

    def _reaches_with_value(self, body: Body, state: CarriedState, loop: Loop) -> bool:
        """Each state name is bound before the loop, and not to `None` (`None.detach()` would raise)."""
        start = body.index(loop)
        if start is None:
            return False
        for name in state.names:
            d = body.reaching(name, start)
            if d is None or d.value is None and not isinstance(d.stmt, cst.SimpleStatementLine):
                return False
            if isinstance(d.value, cst.Name) and d.value.value == "None":
                return False
        return True
