#!/usr/bin/env python3
"""Paired wall times of one log shown four ways (scripts/perf, docs/PERFORMANCE.md).

Each repeat runs, in turn: the raw PTY (`script`), tmux showing the plain output in a
detached 200x50 window, `xstack grade --headless`, and xstack's TUI running the same task in
a detached 200x50 tmux window (timed until the verdict shows in the pane), so the machine's
load hits all of them alike. With --versus, a second build's headless and TUI runs join each
repeat. Prints one line per measure: name, median, min, max (seconds), then every run; then
the same for the CPU time (user and system) of tmux's server over the plain output
(`cpu-tmux`) and of xstack's TUI process until its verdict shows (`cpu-live`).

Usage: perf_paired.py --bin XSTACK --task DIR --producer CMD --work DIR --repeats N
                      [--versus XSTACK] [--only raw,headless]
"""

import argparse
import os
import shlex
import statistics
import subprocess
import sys
import time


def wait_for(predicate, deadline_s):
    """Polls `predicate` every 10 ms until it holds or the deadline passes."""
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        if predicate():
            return True
        time.sleep(0.01)
    return False


def raw(producer):
    subprocess.run(["script", "-qfec", producer, "/dev/null"],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)


def cpu_seconds(pid):
    """User and system CPU time of a live process, in seconds."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def tmux_value(sock, fmt):
    return subprocess.run(["tmux", "-L", sock, "display-message", "-p", fmt],
                          capture_output=True, text=True, check=True).stdout.strip()


def tmux_plain(producer, sock):
    """Returns the CPU time of tmux's server showing the output."""
    # The window stays open after the producer, so the server is there to be read.
    inner = f"{producer}; tmux -L {sock} wait-for -S done; sleep 60"
    subprocess.run(["tmux", "-L", sock, "new-session", "-d", "-x", "200", "-y", "50", inner],
                   check=True)
    server = tmux_value(sock, "#{pid}")
    subprocess.run(["tmux", "-L", sock, "wait-for", "done"], check=True)
    return cpu_seconds(server)


def xstack_pid(pid):
    """The xstack process at or below `pid` (the pane's process may be a shell), or None
    when there is none (it may have exited already)."""
    try:
        for _ in range(3):
            with open(f"/proc/{pid}/comm") as f:
                if f.read().startswith("xstack"):
                    return pid
            with open(f"/proc/{pid}/task/{pid}/children") as f:
                children = f.read().split()
            if not children:
                return None
            pid = children[0]
    except FileNotFoundError:
        return None
    return None


def kill_server(sock):
    subprocess.run(["tmux", "-L", sock, "kill-server"],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)


def headless(xstack, task, runs):
    subprocess.run([xstack, "grade", task, "--repo", os.path.join(task, "repo"), "--headless",
                    "--runs-dir", runs],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)


def live(xstack, task, runs, sock):
    """The TUI in a detached 200x50 tmux window, until its verdict shows in the pane;
    returns the CPU time of xstack's process until then. If xstack stops before its verdict
    shows, prints the pane (which stays open after it) and exits."""
    os.makedirs(runs, exist_ok=True)
    before = set(os.listdir(runs))
    cmd = " ".join(shlex.quote(a) for a in
                   [xstack, "grade", task, "--repo", os.path.join(task, "repo"),
                    "--runs-dir", runs])
    subprocess.run(["tmux", "-L", sock, "new-session", "-d", "-x", "200", "-y", "50",
                    f"{cmd}; sleep 600"], check=True)
    # The pane's shell may not have started xstack yet.
    pane_pid = tmux_value(sock, "#{pane_pid}")
    found = []
    wait_for(lambda: found.append(xstack_pid(pane_pid)) or found[-1] is not None, 10)
    pid = found[-1]

    def pane():
        return subprocess.run(["tmux", "-L", sock, "capture-pane", "-p"],
                              capture_output=True, text=True, check=False).stdout

    def gone():
        return pid is None or not os.path.exists(f"/proc/{pid}")

    def result_written():
        return any(os.path.exists(os.path.join(runs, d, "result.json"))
                   for d in set(os.listdir(runs)) - before)

    def verdict_shown():
        text = pane()
        return any(v in text for v in ("PASSED in phase", "FAILED", "ended: "))

    # result.json is written as the verdict is recorded; polling a file costs the machine
    # less than capturing the pane, which is then polled for the frame that shows it.
    ok = (wait_for(lambda: result_written() or gone(), 600)
          and wait_for(lambda: verdict_shown() or gone(), 60))
    if not ok or gone():
        print(f"the TUI stopped or its verdict never showed; its pane:\n{pane().rstrip()}",
              file=sys.stderr)
        kill_server(sock)
        sys.exit(1)
    return cpu_seconds(pid)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--task", required=True)
    ap.add_argument("--producer", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--versus")
    ap.add_argument("--only", default="raw,tmux,headless,live")
    args = ap.parse_args()
    only = args.only.split(",")
    # A tmux server of its own for every measurement: `kill-server` returns before the old
    # server has gone, and a new session on its socket can then fail.
    base = f"xstack-perf-paired-{os.getpid()}"
    measures = []
    if "raw" in only:
        measures.append(("raw", lambda i, sock: raw(args.producer)))
    if "tmux" in only:
        measures.append(("tmux", lambda i, sock: tmux_plain(args.producer, sock)))
    builds = [("", args.bin)] + ([("versus-", args.versus)] if args.versus else [])
    for prefix, xstack in builds:
        if "headless" in only:
            measures.append((prefix + "headless", lambda i, sock, x=xstack, p=prefix:
                             headless(x, args.task, f"{args.work}/runs-{p}headless-{i}")))
        if "live" in only:
            measures.append((prefix + "live", lambda i, sock, x=xstack, p=prefix:
                             live(x, args.task, f"{args.work}/runs-{p}live-{i}", sock)))
    times = {name: [] for name, _ in measures}
    cpu = {}
    for i in range(args.repeats):
        for k, (name, measure) in enumerate(measures):
            sock = f"{base}-{i}-{k}"
            t = time.perf_counter()
            try:
                used = measure(i, sock)
            finally:
                elapsed = time.perf_counter() - t
                kill_server(sock)
            times[name].append(elapsed)
            if used is not None:
                cpu.setdefault("cpu-" + name, []).append(used)
    for name, ts in list(times.items()) + list(cpu.items()):
        runs = " ".join(f"{t:.3f}" for t in ts)
        print(f"{name} {statistics.median(ts):.3f} {min(ts):.3f} {max(ts):.3f} {runs}")


if __name__ == "__main__":
    main()
