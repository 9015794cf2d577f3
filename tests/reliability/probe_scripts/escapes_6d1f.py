"""Hides from the kill: a setsid double-fork daemon and a child in its own group, all ignoring signals."""

import os
import signal
import sys
import time

import torch

pids_file = sys.argv[1]


def stubborn():
    for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(s, signal.SIG_IGN)
    with open(pids_file, "a") as f:
        f.write(f"{os.getpid()}\n")
    while True:
        time.sleep(0.05)


pid = os.fork()
if pid == 0:  # double fork into a new session: escapes the process group
    os.setsid()
    if os.fork() == 0:
        stubborn()
    os._exit(0)
os.waitpid(pid, 0)
if os.fork() == 0:  # its own process group
    os.setpgid(0, 0)
    stubborn()
while not os.path.exists(pids_file) or len(open(pids_file).read().split()) < 2:
    time.sleep(0.05)
for s in (signal.SIGTERM, signal.SIGINT):
    signal.signal(s, signal.SIG_IGN)
while True:
    torch.randn(4).sum()
