"""Language-server latency: didChange -> publishDiagnostics, start-up time, RSS.

Speaks JSON-RPC over the server's stdio directly (no client library), so the
number is the server's, not a framework's.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path


class Client:
    def __init__(self, cmd: list[str]) -> None:
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.next_id = 0

    def send(self, method: str, params, *, request: bool = False):
        msg = {"jsonrpc": "2.0", "method": method, "params": params}
        if request:
            self.next_id += 1
            msg["id"] = self.next_id
        body = json.dumps(msg).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()
        return msg.get("id")

    def read(self) -> dict:
        length = 0
        while True:
            line = self.proc.stdout.readline()
            if not line:
                raise EOFError("server closed its output")
            line = line.strip()
            if not line:
                break
            if line.lower().startswith(b"content-length:"):
                length = int(line.split(b":")[1])
        return json.loads(self.proc.stdout.read(length))

    def wait_for(self, predicate) -> dict:
        while True:
            msg = self.read()
            if "id" in msg and "method" in msg:  # a request from the server: answer it emptily
                self._answer(msg)
                continue
            if predicate(msg):
                return msg

    def _answer(self, msg: dict) -> None:
        result = (
            [None] * len(msg.get("params", {}).get("items", [])) if msg["method"] == "workspace/configuration" else None
        )
        body = json.dumps({"jsonrpc": "2.0", "id": msg["id"], "result": result}).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def rss_mb(self) -> float:
        with open(f"/proc/{self.proc.pid}/status") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        return float("nan")

    def close(self) -> None:
        try:
            rid = self.send("shutdown", None, request=True)
            self.wait_for(lambda m: m.get("id") == rid)
            self.send("exit", None)
            self.proc.wait(timeout=5)
        except Exception:
            self.proc.kill()


def training_script(lines: int) -> str:
    """A realistic training script of about `lines` lines (repeated model/loop blocks)."""
    head = (
        "import torch\nimport torch.nn as nn\nimport torch.nn.functional as F\n"
        "from torch.utils.data import DataLoader\n\n"
    )
    block = """
class Block{i}(nn.Module):
    def __init__(self, dim=64):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        return self.norm(F.relu(self.fc(x))) + x


def train_{i}(loader, epochs=2):
    model = Block{i}()
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    sched = torch.optim.lr_scheduler.StepLR(opt, 10)
    for epoch in range(epochs):
        model.train()
        for x, y in loader:
            opt.zero_grad()
            loss = F.mse_loss(model(x), y)
            loss.backward()
            opt.step()
        sched.step()
    return model
"""
    text = head
    i = 0
    while text.count("\n") < lines:
        text += block.format(i=i)
        i += 1
    return text


def measure(cmd: list[str], lines: int, edits: int, workdir: Path) -> dict:
    path = workdir / f"train_{lines}.py"
    text = training_script(lines)
    path.write_text(text)
    uri = path.resolve().as_uri()
    t0 = time.perf_counter()
    client = Client(cmd)
    rid = client.send(
        "initialize",
        {"processId": os.getpid(), "rootUri": workdir.resolve().as_uri(), "capabilities": {}},
        request=True,
    )
    client.wait_for(lambda m: m.get("id") == rid)
    startup = time.perf_counter() - t0
    client.send("initialized", {})
    client.send(
        "textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}}
    )

    def is_diag(m):
        return m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri

    client.wait_for(is_diag)
    latencies = []
    lines_list = text.split("\n")
    for v in range(2, edits + 2):
        # Alternate a comment edit on a line in the middle, as typing does.
        n = len(lines_list) // 2
        lines_list[n] = f"# edit {v}"
        change = {"text": "\n".join(lines_list)}  # whole text: valid for Full and Incremental sync
        start = time.perf_counter()
        client.send("textDocument/didChange", {"textDocument": {"uri": uri, "version": v}, "contentChanges": [change]})
        client.wait_for(lambda m: is_diag(m) and m["params"].get("version", v) == v)  # noqa: B023 - called at once
        latencies.append(time.perf_counter() - start)
        # A pause longer than the server's debounce, as between bursts of typing: this
        # measures how long one change takes to show up (bursts are coalesced by design).
        time.sleep(0.2)
    rss = client.rss_mb()
    client.close()
    latencies.sort()
    return {
        "lines": text.count("\n"),
        "median_ms": statistics.median(latencies) * 1000,
        "p95_ms": latencies[int(len(latencies) * 0.95) - 1] * 1000,
        "startup_s": startup,
        "rss_mb": rss,
    }


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        print(
            measure(
                [sys.executable, "-m", "torchlint", "server"],
                int(sys.argv[1]) if len(sys.argv) > 1 else 300,
                20,
                Path(d),
            )
        )
