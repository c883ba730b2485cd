#!/usr/bin/env python3
"""Where a run's CPU time goes, thread by thread (docs/PERFORMANCE.md).

Runs a command and, every 20 ms until it exits, reads /proc for each thread of it and of its
descendants: user and system CPU time, voluntary and involuntary context switches, and the
number of read and write system calls. Prints the wall time, then one line per thread that
used CPU, from the busiest, with the last values read (a thread's figures are therefore up
to 20 ms short of its end).

Usage: thread_times.py COMMAND [ARG...]
  e.g. thread_times.py xstack grade /abs/stream-1000000 --repo /abs/stream-1000000/repo \\
           --headless --runs-dir /tmp/runs
"""

import os
import subprocess
import sys
import time

TICKS = os.sysconf("SC_CLK_TCK")


def family(root):
    """`root` and every process below it."""
    found = [root]
    try:
        for tid in os.listdir(f"/proc/{root}/task"):
            with open(f"/proc/{root}/task/{tid}/children") as f:
                for child in f.read().split():
                    found += family(int(child))
    except OSError:
        pass
    return found


def field(text, name):
    return int(text.split(name + ":")[1].split()[0])


def thread_figures(pid, tid):
    """(name, user s, system s, voluntary, involuntary, syscr, syscw) of one thread."""
    base = f"/proc/{pid}/task/{tid}"
    with open(f"{base}/stat") as f:
        stat = f.read()
    with open(f"{base}/status") as f:
        status = f.read()
    with open(f"{base}/io") as f:
        io = f.read()
    # The name is in parentheses and may hold spaces: the fields follow the last ')'.
    name = stat[stat.index("(") + 1:stat.rindex(")")]
    fields = stat.rsplit(")", 1)[1].split()
    return (name, int(fields[11]) / TICKS, int(fields[12]) / TICKS,
            field(status, "voluntary_ctxt_switches"),
            field(status, "nonvoluntary_ctxt_switches"),
            field(io, "syscr"), field(io, "syscw"))


def main():
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    start = time.monotonic()
    proc = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    last = {}
    while proc.poll() is None:
        for pid in family(proc.pid):
            try:
                tids = os.listdir(f"/proc/{pid}/task")
            except OSError:
                continue
            for tid in tids:
                try:
                    last[(pid, tid)] = thread_figures(pid, tid)
                except (OSError, IndexError, ValueError):
                    pass
        time.sleep(0.02)
    print(f"wall {time.monotonic() - start:.2f} s, exit status {proc.returncode}")
    for name, user, system, vol, invol, reads, writes in sorted(
            last.values(), key=lambda f: -(f[1] + f[2])):
        if user + system > 0:
            print(f"{name:18s} user {user:5.2f} sys {system:5.2f} "
                  f"voluntary {vol:7d} involuntary {invol:6d} "
                  f"reads {reads:7d} writes {writes:7d}")


if __name__ == "__main__":
    main()
