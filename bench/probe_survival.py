"""Survival of real training scripts under `torchlint probe` with simulated CUDA (issue 29, item 2).

Each script of SCRIPTS (public repositories, pinned by commit; none of their code is kept here) is
taken from a mirror of its repository, given small synthetic data in the layout it expects (the
recipes below are ours), then run twice in fresh copies of its directory:

- plainly (`python SCRIPT ARGS`), counting its optimizer steps (or backward calls, in a loop with no
  optimizer) with a global optimizer hook and nothing else: on this CPU-only machine the script takes
  its CPU path;
- under `torchlint probe --max-steps 100000` with simulated CUDA, where it takes its GPU path.

A script survives when the probe run ends as the plain one does (same exit status, no exception, not
stopped by a limit) after the same number of steps. Scripts that need a GPU to run at all (they move to
`cuda:0` without asking) cannot run plainly here: their expected step count is derived from their data
and arguments instead (`expect`). `--gpu` runs the probe with `--no-simulate-cuda` too, on a machine
with a real GPU (bench/probe_gpu_compare.py compares the two).

    python bench/probe_survival.py [--mirror /work/.mirror] [--work DIR] [--only NAME ...] [--json OUT]
        [--pythonpath DIR] [--gpu] [--export DIR]

The mirror holds `owner+name/repo` bare git directories (what the session's fetch tool makes); the
commit of each entry must be in it. `--export DIR` copies the scripts' folders out of it, as a mirror
for a machine that cannot fetch. `--pythonpath` adds the libraries some scripts import (matplotlib,
tiktoken). Prints a Markdown table (bench/SURVIVAL.md keeps the last one).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import os
import pickle
import random
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

EXAMPLES = ("pytorch/examples", "77f55b912142e11fcfdf5b530231fb9c52f181e8")
NANOGPT = ("karpathy/nanoGPT", "3adf61e154c3fe3fca428ad6bc3818b27a3b8291")
TUTORIAL = ("yunjey/pytorch-tutorial", "0500d3df5a2a8080ccfccbc00aca0eacc21818db")


@dataclass
class Script:
    name: str
    repo: tuple[str, str]  # (owner/name, commit)
    directory: str  # the folder copied (the script's imports and data live there)
    path: str  # the script, relative to `directory`
    args: list[str]  # under the probe: the GPU path where the script has a switch for it
    data: str  # the recipe: a function of this module, called in the copy's folder
    plain_args: list[str] | None = None  # plainly, when the GPU path's arguments would fail on a CPU
    before: list[list[str]] = field(default_factory=list)  # scripts run first (plainly) in the same copy
    expect: int | None = None  # steps, for a script that cannot run without a GPU
    probe_options: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)  # both runs
    same_steps: bool = True  # False: the script stops at a random point (no seed), only its end is compared
    note: str = ""


NANO_ARGS = [
    "config/train_shakespeare_char.py",
    "--compile=False",
    "--max_iters=4",
    "--eval_interval=2",
    "--eval_iters=2",
    "--log_interval=1",
    "--block_size=32",
    "--batch_size=4",
    "--n_layer=2",
    "--n_head=2",
    "--n_embd=32",
    "--dropout=0.0",
    "--wandb_log=False",
]
SAMPLE_ARGS = ["--out_dir=out-shakespeare-char", "--num_samples=1", "--max_new_tokens=20", "--compile=False"]

SCRIPTS = [
    Script(
        "wlm-lstm",
        EXAMPLES,
        "word_language_model",
        "main.py",
        ["--accel", "--epochs", "1", "--emsize", "32", "--nhid", "32", "--bptt", "16"],
        "wikitext",
        note="LSTM, truncated BPTT with hidden state carried over, manual SGD update, clipping, torch.save",
    ),
    Script(
        "wlm-transformer",
        EXAMPLES,
        "word_language_model",
        "main.py",
        ["--accel", "--model", "Transformer", "--epochs", "1", "--emsize", "32", "--nhid", "32", "--nhead", "2"],
        "wikitext",
        note="nn.TransformerEncoder, masks",
    ),
    Script(
        "wlm-generate",
        EXAMPLES,
        "word_language_model",
        "generate.py",
        ["--accel", "--words", "50"],
        "wikitext",
        before=[["main.py", "--epochs", "1", "--dry-run", "--emsize", "32", "--nhid", "32"]],
        note="torch.load of a whole model saved on the CPU, sampling with torch.multinomial",
    ),
    Script(
        "regression",
        EXAMPLES,
        "regression",
        "main.py",
        [],
        "nothing",
        same_steps=False,  # it trains until the loss of an unseeded random target is small enough
        note="no device handling, manual update without an optimizer",
    ),
    Script(
        "time-sequence",
        EXAMPLES,
        "time_sequence_prediction",
        "train.py",
        ["--steps", "2"],
        "sine_waves",
        # its torch.load of a NumPy array needs the pre-2.6 default, on a GPU machine as here
        env={"TORCH_FORCE_NO_WEIGHTS_ONLY_LOAD": "1"},
        note="LBFGS with a closure, double precision, matplotlib plots",
    ),
    Script(
        "gat",
        EXAMPLES,
        "gat",
        "main.py",
        ["--epochs", "3", "--hidden-dim", "8", "--num-heads", "2"],
        "cora",
        note="torch.accelerator device, sparse-to-dense features, attention over a dense adjacency",
    ),
    Script(
        "ddp-single-gpu",
        EXAMPLES,
        "distributed/ddp-tutorial-series",
        "single_gpu.py",
        ["2", "1", "--batch_size", "256"],
        "nothing",
        expect=16,  # MyTrainDataset(2048) / 256 per batch, 2 epochs
        note="`device = 0`, .to(gpu_id), snapshot torch.save",
    ),
    Script(
        "ddp-mp-spawn",
        EXAMPLES,
        "distributed/ddp-tutorial-series",
        "multigpu.py",
        ["2", "1", "--batch_size", "256"],
        "nothing",
        expect=0,  # the steps run in the spawned rank, which the probe does not watch
        note="mp.spawn over torch.cuda.device_count() ranks, nccl, DDP",
    ),
    Script(
        "ddp-torchrun",
        EXAMPLES,
        "distributed/ddp-tutorial-series",
        "multigpu_torchrun.py",
        ["2", "1", "--batch_size", "256"],
        "nothing",
        expect=8,  # 2048 / 256 / 2 ranks, 2 epochs
        probe_options=["--nproc-per-node", "2"],
        note="2 ranks under torch.distributed.run, LOCAL_RANK devices, DistributedSampler",
    ),
    Script(
        "nanogpt-train",
        NANOGPT,
        ".",
        "train.py",
        [*NANO_ARGS, "--device=cuda"],
        "shakespeare_char",
        plain_args=[*NANO_ARGS, "--device=cpu"],
        note="bf16 autocast, GradScaler, fused AdamW, pin_memory + non_blocking, flash attention, checkpoint",
    ),
    Script(
        "nanogpt-sample",
        NANOGPT,
        ".",
        "sample.py",
        [*SAMPLE_ARGS, "--device=cuda"],
        "shakespeare_char",
        plain_args=[*SAMPLE_ARGS, "--device=cpu"],
        before=[["train.py", *NANO_ARGS, "--device=cpu"]],
        note="torch.load(map_location='cuda') of a checkpoint, autocast generation",
    ),
    Script(
        "tutorial-language-model",
        TUTORIAL,
        "tutorials/02-intermediate/language_model",
        "main.py",
        [],
        "tutorial_text",
        note="LSTM LM with detached states, clip_grad_norm_, 1000 sampled words",
    ),
]


# -- synthetic data, in the layout each script reads ---------------------------------------------------
WORDS = [f"w{i}" for i in range(60)]


def _sentences(rng: random.Random, lines: int) -> str:
    return "".join(" ".join(rng.choice(WORDS) for _ in range(rng.randint(5, 12))) + " .\n" for _ in range(lines))


def nothing(folder: Path) -> None:
    """The script makes its own data."""


def wikitext(folder: Path) -> None:
    rng = random.Random(0)
    data = folder / "data" / "wikitext-2"
    data.mkdir(parents=True, exist_ok=True)
    for name, lines in (("train", 120), ("valid", 30), ("test", 30)):
        (data / f"{name}.txt").write_text(_sentences(rng, lines))


def tutorial_text(folder: Path) -> None:
    (folder / "data").mkdir(exist_ok=True)
    (folder / "data" / "train.txt").write_text(_sentences(random.Random(1), 400))  # 6 batches of 20 x 30 words


def sine_waves(folder: Path) -> None:
    """traindata.pt as generate_sine_wave.py writes it: sine waves with random shifts, (N, L) float64."""
    import numpy as np
    import torch

    rng = np.random.RandomState(2)
    x = np.arange(100).reshape(1, -1) + rng.randint(-80, 80, (8, 1))
    torch.save(np.sin(x / 20.0).astype("float64"), folder / "traindata.pt")


def cora(folder: Path) -> None:
    """cora/cora.content (id, binary features, label) and cora/cora.cites (pairs of ids): 1700 papers, since
    the script takes idx[1600:] for training."""
    rng = random.Random(3)
    data = folder / "cora"
    data.mkdir(exist_ok=True)
    ids = rng.sample(range(10_000, 99_999), 1700)
    labels = ["Theory", "Neural_Networks", "Rule_Learning"]
    content = []
    for paper in ids:
        features = [rng.random() < 0.1 for _ in range(24)]
        features[rng.randrange(24)] = True  # every paper has a word: the script divides by the sum
        content.append("\t".join([str(paper), *("1" if f else "0" for f in features), rng.choice(labels)]))
    (data / "cora.content").write_text("\n".join(content) + "\n")
    cites = {(rng.choice(ids), rng.choice(ids)) for _ in range(4000)}
    (data / "cora.cites").write_text("".join(f"{a}\t{b}\n" for a, b in cites if a != b))


def shakespeare_char(folder: Path) -> None:
    """data/shakespeare_char/{train,val}.bin (uint16 token ids) and meta.pkl, as its prepare.py writes them."""
    import numpy as np

    chars = sorted(set("abcdefghijklmnopqrstuvwxyz ,.\n"))
    rng = np.random.RandomState(4)
    data = folder / "data" / "shakespeare_char"
    data.mkdir(parents=True, exist_ok=True)
    for name, n in (("train", 20_000), ("val", 4_000)):
        rng.randint(0, len(chars), n).astype(np.uint16).tofile(data / f"{name}.bin")
    meta = {"vocab_size": len(chars), "itos": dict(enumerate(chars)), "stoi": {c: i for i, c in enumerate(chars)}}
    with open(data / "meta.pkl", "wb") as fh:
        pickle.dump(meta, fh)


# -- running -------------------------------------------------------------------------------------------
# Run plainly: the script as `python SCRIPT`, with a global optimizer hook counting steps (and backward
# calls, for a loop without an optimizer), written to $SURVIVAL_COUNT at exit.
COUNTER = """
import atexit, json, os, runpy, sys
import torch
from torch.optim.optimizer import register_optimizer_step_post_hook
counts = {"steps": 0, "backward": 0}
register_optimizer_step_post_hook(lambda *a: counts.__setitem__("steps", counts["steps"] + 1))
_backward = torch.autograd.backward
def backward(*a, **k):
    counts["backward"] += 1
    return _backward(*a, **k)
torch.autograd.backward = backward
pid = os.getpid()
@atexit.register
def _save():
    if os.getpid() == pid:
        with open(os.environ["SURVIVAL_COUNT"], "w") as fh:
            json.dump(counts, fh)
script = sys.argv[1]
sys.argv = sys.argv[1:]
sys.path[0] = os.path.dirname(os.path.abspath(script))
runpy.run_path(script, run_name="__main__")
"""


def copy_of(mirror: Path, script: Script, into: Path) -> Path:
    """The script's folder at its commit, with its synthetic data: from `mirror/owner+name/repo` (a bare git
    directory; it may leave out a repository's largest files, its real data sets, which the recipe stands
    in for) or, where that is missing, from `mirror/owner+name/tree` (what `--export` writes, for a machine
    that cannot fetch)."""
    tree = mirror / script.repo[0].replace("/", "+") / "tree"
    if not (mirror / script.repo[0].replace("/", "+") / "repo").exists() and tree.exists():
        shutil.copytree(tree / script.directory, into / script.directory, dirs_exist_ok=True)
    else:
        for name, data in files_of(mirror, script):
            (into / name).parent.mkdir(parents=True, exist_ok=True)
            (into / name).write_bytes(data)
    folder = into / script.directory
    globals()[script.data](folder)
    return folder


def files_of(mirror: Path, script: Script):
    """(path in the repository, bytes) of the script's folder at its commit, from the bare git mirror."""
    owner_name, commit = script.repo
    git = ["git", f"--git-dir={mirror / owner_name.replace('/', '+') / 'repo'}"]
    listed = subprocess.run([*git, "ls-tree", "-r", "--name-only", commit, "--", script.directory], **_OUT).stdout
    for name in listed.decode().splitlines():
        blob = subprocess.run([*git, "cat-file", "blob", f"{commit}:{name}"], capture_output=True)
        if blob.returncode == 0:
            yield name, blob.stdout


def export(mirror: Path, into: Path) -> None:
    """Every script's folder as plain files under `into/owner+name/tree`, for `--mirror into` elsewhere."""
    for script in SCRIPTS:
        for name, data in files_of(mirror, script):
            target = into / script.repo[0].replace("/", "+") / "tree" / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)


_OUT = {"capture_output": True, "check": True}


def run_plain(folder: Path, script: Script, python: str, timeout: float) -> dict:
    for before in script.before:
        subprocess.run([python, *before], cwd=folder, capture_output=True, timeout=timeout, check=True)
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as fh:
        count_path = fh.name
    started = time.monotonic()
    proc = subprocess.run(
        [python, "-c", COUNTER, script.path, *(script.plain_args or script.args)],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **script.env, "SURVIVAL_COUNT": count_path},
    )
    seconds = time.monotonic() - started
    try:
        with open(count_path) as fh:
            counts = json.load(fh)
    except (OSError, ValueError):
        counts = {"steps": None, "backward": None}
    os.unlink(count_path)
    return {
        "status": proc.returncode,
        "steps": counts["steps"] or counts["backward"],
        "seconds": round(seconds, 1),
        "error": proc.stderr.strip().splitlines()[-1] if proc.returncode and proc.stderr.strip() else "",
    }


def run_probe(folder: Path, script: Script, python: str, timeout: float, simulate: bool = True) -> dict:
    for before in script.before:
        subprocess.run([python, *before], cwd=folder, capture_output=True, timeout=timeout, check=True)
    cmd = [python, "-m", "torchlint", "probe", "--output-format", "json", "--max-steps", "100000"]
    cmd += ["--max-seconds", str(timeout), "--simulate-cuda" if simulate else "--no-simulate-cuda"]
    cmd += [*script.probe_options, script.path, "--", *script.args]
    started = time.monotonic()
    proc = subprocess.run(
        cmd, cwd=folder, capture_output=True, text=True, timeout=timeout + 120, env={**os.environ, **script.env}
    )
    seconds = time.monotonic() - started
    report = json.loads(proc.stdout) if proc.stdout.strip() else None
    if report is None:
        return {"status": proc.returncode, "steps": None, "seconds": round(seconds, 1), "error": proc.stderr[-300:]}
    exc = report["exception"]
    return {
        "status": proc.returncode,
        "exit_status": report["exit_status"],
        "steps": report["steps"],
        "stopped_by": report["stopped_by"],
        "seconds": round(seconds, 1),
        "devices_used": report["devices_used"],
        "observations": [
            {
                "kind": o["kind"],
                "path": os.path.relpath(o["path"], folder),
                "line": o["line"],
                "message": o["message"],
                "shows": o["facts"].get("shows"),  # a crash that is a known problem (a GPU's device mismatch)
            }
            for o in report["observations"]
        ],
        "error": f"{exc['type']}: {exc['message']} ({exc.get('unsupported') or exc.get('path')})" if exc else "",
    }


def survives(plain: dict | None, probe: dict, script: Script) -> bool:
    """The probe run ended as the plain one did: no exception, not stopped by a limit, the same exit
    status and the same steps (`expect` where the script cannot run plainly)."""
    if probe.get("error") or probe.get("stopped_by") != "end":
        return False
    steps = script.expect if plain is None else plain["steps"]
    status = 0 if plain is None else plain["status"]
    return (probe["steps"] == steps or not script.same_steps) and probe.get("exit_status", probe["status"]) == status


def table(rows: list[dict]) -> str:
    out = [
        "| script | source | steps plain | steps probe | seconds plain / probe | devices | outcome |",
        "|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        plain = r["plain"]
        probe = r["probe"]
        steps_plain = f"needs a GPU; expected {r['expect']}" if plain is None else plain["steps"]
        if not r["same_steps"]:
            steps_plain = f"{steps_plain} (unseeded: varies)"
        if plain is not None and plain["status"]:
            steps_plain = f"{plain['steps']} (exit {plain['status']}: {plain['error'][:60]})"
        secs = f"{'-' if plain is None else plain['seconds']} / {probe['seconds']}"
        outcome = "survives" if r["survives"] else f"FAILS: {probe.get('error') or probe.get('stopped_by')}"
        if r["survives"] and probe.get("observations"):
            outcome += f"; {len(probe['observations'])} observation(s)"
        source = f"{r['repo']}@{r['commit'][:7]}:{r['path']}"
        devices = ", ".join(probe.get("devices_used") or []) or "-"
        out.append(f"| {r['name']} | {source} | {steps_plain} | {probe['steps']} | {secs} | {devices} | {outcome} |")
    return "\n".join(out)


def run_script(script: Script, args: argparse.Namespace, work: Path) -> dict:
    """One script's runs (plainly, under the probe simulated, and on the real GPU with `--gpu`) as a row."""
    base = work / script.name
    shutil.rmtree(base, ignore_errors=True)
    runs = {}
    for kind in ("plain", "probe", *(["gpu"] if args.gpu else [])):
        (base / kind).mkdir(parents=True)
        folder = copy_of(args.mirror, script, base / kind)
        if kind == "plain":
            runs[kind] = None if script.expect is not None else run_plain(folder, script, args.python, args.timeout)
        else:
            runs[kind] = run_probe(folder, script, args.python, args.timeout, simulate=kind == "probe")
    owner_name, commit = script.repo
    row = {
        "name": script.name,
        "repo": owner_name,
        "commit": commit,
        "path": f"{script.directory}/{script.path}".lstrip("./"),
        "args": script.args,
        "expect": script.expect,
        **runs,
        "same_steps": script.same_steps,
        "survives": survives(runs["plain"], runs["probe"], script),
    }
    print(table([row]).splitlines()[-1], file=sys.stderr, flush=True)
    return row


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mirror", type=Path, default=Path("/work/.mirror"))
    p.add_argument("--work", type=Path, default=None, help="where the copies go (default: a temporary folder)")
    p.add_argument("--only", nargs="*", default=None, help="names of SCRIPTS to run")
    p.add_argument("--python", default=sys.executable)
    p.add_argument("--timeout", type=float, default=600.0)
    p.add_argument("--gpu", action="store_true", help="also run the probe on the real GPU (--no-simulate-cuda)")
    p.add_argument("--json", type=Path, default=None, help="write every run's results here")
    p.add_argument("--pythonpath", default=None, help="PYTHONPATH for the scripts (libraries they import)")
    p.add_argument("--jobs", type=int, default=1, help="scripts run at once")
    p.add_argument("--export", type=Path, default=None, help="write the scripts' folders here (a mirror) and stop")
    args = p.parse_args(argv)
    if args.export:
        export(args.mirror, args.export)
        return 0
    if args.pythonpath:
        os.environ["PYTHONPATH"] = args.pythonpath
    # One intra-op thread: on a shared machine OpenMP workers spin-waiting for a busy core made small
    # ops hundreds of times slower (a 2-step LBFGS run passed 600 s). The same for both runs.
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    work = args.work or Path(tempfile.mkdtemp(prefix="probe-survival-"))
    chosen = [s for s in SCRIPTS if not args.only or s.name in args.only]
    # Scripts are independent (own copies, own data): `--jobs` runs several at once on a machine with cores
    # to spare (the GPU machine's call is time-limited); rows keep SCRIPTS' order.
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        rows = list(pool.map(lambda script: run_script(script, args, work), chosen))
    print(table(rows))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0 if all(r["survives"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
