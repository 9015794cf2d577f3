"""The runtime probe: run a script for a few steps under instrumentation and confirm static findings.

The parent side (cli, launch, merge, render) never imports torch; only the child
process (child and the modules it loads) does.
"""
