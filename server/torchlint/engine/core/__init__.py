"""Syntax-level building blocks every other layer uses: source text, tree walking, call arguments, positions, fix checks."""
