"""xstack's record of the Python processes an agent starts (docs/CHECKS.md).

Installed by xstack into the site-packages of its cached environments with a `.pth` file, and
put first on the agent's PYTHONPATH as `sitecustomize`, so every Python process the agent
starts (through its shell, its tools, or a human's shell) loads it. It does nothing unless the
agent's environment names a folder in XSTACK_CHECKS_DIR, and it never changes what the
process does: it only writes, into that folder, for process PID started at time T,

- `PID-T.jsonl`: a `start` line (the command line, the working folder, the time) and, when
  the process ends through Python, an `end` line (its exit status, the exception that ended
  it, the frameworks it imported);
- `PID-T.out`: what the process wrote to sys.stdout and sys.stderr (up to 16 MB).

A process killed by a signal, or ended with os._exit, has no `end` line.
"""

import os
import sys
import time

_LIMIT = 16 * 1024 * 1024
_FRAMEWORKS = ("torch", "jax", "tensorflow")


def _install(folder):
    import json

    stem = os.path.join(folder, "%d-%d" % (os.getpid(), time.time_ns()))
    flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND
    record = os.open(stem + ".jsonl", flags, 0o644)
    output = os.open(stem + ".out", flags, 0o644)
    write = os.write
    dumps = json.dumps
    now = time.time
    state = {"written": 0, "exit": 0, "exception": None, "ended": False}

    write(record, (dumps({
        "kind": "start",
        "pid": os.getpid(),
        "argv": list(getattr(sys, "orig_argv", sys.argv)),
        "cwd": os.getcwd(),
        "t": now(),
    }) + "\n").encode())

    def keep(text):
        if state["written"] >= _LIMIT or not isinstance(text, str):
            return
        data = text.encode("utf-8", "replace")[: _LIMIT - state["written"]]
        state["written"] += len(data)
        write(output, data)

    class Tee:
        """A stream that also keeps what passes through it."""

        def __init__(self, stream):
            self._stream = stream

        def write(self, text):
            written = self._stream.write(text)
            try:
                keep(text)
            except Exception:
                pass
            return written

        def writelines(self, lines):
            for line in lines:
                self.write(line)

        def __getattr__(self, name):
            return getattr(self._stream, name)

    for name in ("stdout", "stderr"):
        stream = getattr(sys, name, None)
        if stream is not None:
            setattr(sys, name, Tee(stream))

    real_exit = sys.exit

    def exit(code=None):
        state["exit"] = code
        return real_exit(code)

    sys.exit = exit
    real_hook = sys.excepthook

    def excepthook(kind, value, tb):
        state["exit"] = 1
        state["exception"] = "%s: %s" % (kind.__name__, value)
        return real_hook(kind, value, tb)

    sys.excepthook = excepthook

    def status(code):
        if code is None:
            return 0
        if isinstance(code, int):
            return code
        return 1

    def end():
        if state["ended"]:
            return
        state["ended"] = True
        imported = sorted(m for m in _FRAMEWORKS if m in sys.modules)
        write(record, (dumps({
            "kind": "end",
            "t": now(),
            "exit": status(state["exit"]),
            "exception": state["exception"],
            "frameworks": imported,
        }) + "\n").encode())

    import atexit

    atexit.register(end)


_folder = os.environ.get("XSTACK_CHECKS_DIR", "")
if _folder and os.path.isdir(_folder):
    try:
        _install(_folder)
    except OSError:
        pass
del _folder
