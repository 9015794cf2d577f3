"""Training-loop rules (TL1xx): what one iteration does and in which order, and autograd graphs kept
alive, freed or never built.

The loop rules read the ordered events of an iteration (`ctx.loop_analysis`, engine/flow/loop_events.py);
the autograd rules read the def-use facts of the enclosing function (engine/flow/graph_flow.py). None walks
a loop or a function itself.
"""
