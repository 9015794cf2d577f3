"""How statements run: blocks, loops, the graph's flow, training-loop events, calling contexts."""
