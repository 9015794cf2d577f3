"""The language server stays up under abuse and still tells the truth afterwards.

1,000 random edits (many leave the file syntactically broken) interleaved with
hovers, code actions, cancelled requests, malformed messages, unknown URIs and
changes to unopened documents, then a 20,000-line document. Afterwards the server
answers, its diagnostics equal a CLI run on the final text, and its memory stays
within 1.5x of what it used after the first lint. (The plain robustness cases
are in tests/lsp/; these are the sustained, randomised ones.)
"""

from __future__ import annotations

import asyncio
import json
import random
import subprocess
import sys
from pathlib import Path

import pytest
from lsprotocol import types

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lsp"))
from lsp_session import BUGGY, TORCHLINT, session
from programs import SNIPPETS

from selecting import extend_select

pytestmark = pytest.mark.asyncio
EDITS = 1_000
PIECES = [
    "(",
    ")",
    ":",
    "\n",
    "    ",
    "\t",
    "é",
    "😀",
    "torch.load(p)",
    "optimizer.step()",
    "'",
    '"""',
    "#",
    "\\",
    "for x in loader:\n    ",
    "def f(:",
    "\x0c",
    "import torch\n",
]


def _rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError("no VmRSS")


def _mutate(rng: random.Random, text: str) -> str:
    roll = rng.random()
    if roll < 0.05:
        return rng.choice(SNIPPETS)  # a whole new buffer
    at = rng.randrange(len(text) + 1)
    if roll < 0.45:  # delete a span
        return text[:at] + text[at + rng.randrange(0, 40) :]
    piece = rng.choice(PIECES + SNIPPETS[:30] if roll < 0.9 else [rng.choice(SNIPPETS)])
    return text[:at] + piece + text[at:]


def _cli_findings(path: Path, text: str) -> list[tuple[int, str]]:
    path.write_text(text, encoding="utf-8")
    r = subprocess.run(
        [TORCHLINT, "check", "--no-cache", "-q", "--output-format", "json", str(path)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode in (0, 1), r.stderr
    return sorted((i["line"], i["code"]) for i in json.loads(r.stdout))


async def _raw_request(s, rid: str, method: str, params, cancel: bool) -> None:
    future = asyncio.get_running_loop().create_future()
    s.client.protocol._request_futures[rid] = future
    s.client.protocol._send_data({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
    if cancel:
        s.client.protocol._send_data({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": rid}})
    try:
        await asyncio.wait_for(future, 60)
    except asyncio.TimeoutError:
        raise AssertionError(f"no answer to {method} {rid}") from None
    except Exception:  # an error response (cancelled, invalid params) is an answer
        pass


def _big(variant: int) -> str:
    return "import torch\n" + "".join(
        f'x{k} = torch.load("f{k}")\n' if k % 2000 == 0 else f"x{k} = {k} * {variant}\n" for k in range(20_000)
    )


async def _lint_big(s, project: Path, variant: int) -> None:
    u = s.open(project / f"big{variant}.py", _big(variant))
    diags = await s.diagnostics(u, lambda d: len(d) > 0, timeout=300)
    assert [d.code for d in diags] == ["TL601"] * 10
    s.client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(u)))


async def test_server_survives_a_thousand_random_edits_and_abuse(tmp_path):
    rng = random.Random(7)
    project = tmp_path / "project"
    project.mkdir()
    # the 20,000-line document's findings are TL601, opt-in: the project selects it, and so does the folder
    # above it, where the CLI checks the final text
    (project / "pyproject.toml").write_text("[project]\nname = 'demo'\n\n" + extend_select("TL601"))
    (tmp_path / "pyproject.toml").write_text(extend_select("TL601"))
    async with session(project) as s:
        pid = s.client._server.pid
        u = s.open(project / "train.py", BUGGY)
        await s.diagnostics(u, lambda d: len(d) == 1)
        small = _rss_kb(pid)
        # The first lint includes the 20,000-line document: libcst's tree for it sets the
        # process's high-water mark (~300 MB), which CPython's allocator keeps.
        await _lint_big(s, project, 1)
        await asyncio.sleep(1)
        baseline = _rss_kb(pid)
        text = BUGGY
        for i in range(EDITS):
            text = _mutate(rng, text)
            s.change(u, text)
            if i % 50 == 0:
                pos = types.Position(rng.randrange(40), rng.randrange(80))
                doc = {"textDocument": {"uri": u}, "position": {"line": pos.line, "character": pos.character}}
                await _raw_request(s, f"hover-{i}", "textDocument/hover", doc, cancel=i % 100 == 0)
                await _raw_request(
                    s,
                    f"action-{i}",
                    "textDocument/codeAction",
                    {
                        "textDocument": {"uri": u},
                        "context": {"diagnostics": []},
                        "range": {"start": doc["position"], "end": doc["position"]},
                    },
                    cancel=i % 150 == 0,
                )
                await _raw_request(s, f"bad-{i}", "textDocument/hover", {"textDocument": [i]}, cancel=False)
                s.client.protocol._send_data(
                    {
                        "jsonrpc": "2.0",
                        "method": "textDocument/didChange",
                        "params": {
                            "textDocument": {"uri": f"file:///nowhere/{i}.py", "version": 2},
                            "contentChanges": [{"text": "x = ("}],
                        },
                    }
                )
                s.client.protocol._send_data(
                    {
                        "jsonrpc": "2.0",
                        "method": "textDocument/didClose",
                        "params": {"textDocument": {"uri": f"file:///never-opened/{i}.py"}},
                    }
                )
                await asyncio.sleep(0)
        last = s.versions[u]
        await s.diagnostics(u, lambda d: s.published[-1].uri == u and s.published[-1].version == last, timeout=120)
        after_edits = _rss_kb(pid)
        served = sorted((d.range.start.line + 1, d.code) for d in s.client.diagnostics[u])
        assert served == _cli_findings(tmp_path / "final.py", text), "server and CLI disagree on the final text"
        await _lint_big(s, project, 2)
        again = s.open(project / "after.py", BUGGY)
        assert [d.code for d in await s.diagnostics(again, lambda d: len(d) == 1)] == ["TL101"]
        await asyncio.sleep(1)
        final = _rss_kb(pid)
        print(
            f"server RSS: small file {small} kB; after the first lint incl. 20k lines {baseline} kB; after "
            f"{EDITS} edits {after_edits} kB; after a second 20k-line lint {final} kB ({final / baseline:.2f}x)"
        )
        assert final <= 1.5 * baseline, f"server memory grew {final / baseline:.2f}x ({baseline} -> {final} kB)"
