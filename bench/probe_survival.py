"""Survival of real training scripts under `torchlint probe` with simulated CUDA (issue 29, item 2).

Each script of SCRIPTS (public repositories, pinned by commit; none of their code is kept here) is
taken from a mirror of its repository, given small synthetic data in the layout it expects (the
recipes below are ours), then run plainly and under the probe with simulated CUDA as
bench/survival_runs.py says. `--gpu` runs the probe with `--no-simulate-cuda` too, on a machine with a
real GPU (bench/probe_gpu_compare.py compares the two).

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
import functools
import json
import os
import pickle
import random
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from bench.survival_runs import Script, run_script, table  # run as a script: the repository root on the path

EXAMPLES = ("pytorch/examples", "77f55b912142e11fcfdf5b530231fb9c52f181e8")
NANOGPT = ("karpathy/nanoGPT", "3adf61e154c3fe3fca428ad6bc3818b27a3b8291")
TUTORIAL = ("yunjey/pytorch-tutorial", "0500d3df5a2a8080ccfccbc00aca0eacc21818db")


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


def _run(script: Script, args: argparse.Namespace, work: Path) -> dict:
    owner_name, commit = script.repo
    source = f"{owner_name}@{commit[:7]}:" + f"{script.directory}/{script.path}".lstrip("./")
    prepare = functools.partial(copy_of, args.mirror)
    return run_script(script, prepare, source, work, args.python, args.timeout, gpu=args.gpu)


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
        rows = list(pool.map(lambda script: _run(script, args, work), chosen))
    print(table(rows))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))
    return 0 if all(r["survives"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
