"""Record which lines of the user's script ran, cheaply: only the script's own code is traced."""

from __future__ import annotations

import sys
import threading


class LineCoverage:
    def __init__(self, filename: str):
        self.filename = filename
        self.lines: set[int] = set()
        self._tool = None

    def start(self, code) -> None:
        monitoring = getattr(sys, "monitoring", None)
        if monitoring is not None:  # Python 3.12+: events only on the script's code objects
            self._start_monitoring(monitoring, code)
        else:
            sys.settrace(self._global)
            threading.settrace(self._global)

    def stop(self) -> None:
        if self._tool is not None:
            m = sys.monitoring
            m.register_callback(self._tool, m.events.LINE, None)
            m.free_tool_id(self._tool)
            self._tool = None
        else:
            sys.settrace(None)
            threading.settrace(None)

    def _global(self, frame, event, arg):
        if frame.f_code.co_filename != self.filename:
            return None
        if frame.f_lineno > 0:
            self.lines.add(frame.f_lineno)
        return self._local

    def _local(self, frame, event, arg):
        if event == "line":
            self.lines.add(frame.f_lineno)
        return self._local

    def _start_monitoring(self, m, code) -> None:
        for tool in range(6):
            if m.get_tool(tool) is None:
                break
        else:  # every tool id taken (a debugger, a profiler): fall back
            sys.settrace(self._global)
            return
        self._tool = tool
        m.use_tool_id(tool, "torchlint-probe")
        lines = self.lines

        def on_line(code_obj, line):
            lines.add(line)
            return m.DISABLE

        m.register_callback(tool, m.events.LINE, on_line)
        stack = [code]
        while stack:
            c = stack.pop()
            m.set_local_events(tool, c, m.events.LINE)
            stack.extend(k for k in c.co_consts if hasattr(k, "co_code"))
