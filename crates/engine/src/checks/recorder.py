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

Everything it writes is redacted first, as xstack's journal is (src/secrets.rs): the values of
the process's environment variables whose names end in one of `_SECRET_SUFFIXES` are replaced
with `_REDACTED`, also when a value is written in two pieces (the tail of a write that could
start one is held back until the next write, or the end, shows whether it does).

A process killed by a signal, or ended with os._exit, has no `end` line.
"""

import os
import sys
import time

_LIMIT = 16 * 1024 * 1024
_FRAMEWORKS = ("torch", "jax", "tensorflow")
# Written by xstack from src/secrets.rs when it installs this file.
_SECRET_SUFFIXES = ()
_MIN_SECRET_LEN = 0
_REDACTED = ""


def _secrets():
    """The secret values of this process's environment, longest first."""
    values = set()
    for name, value in os.environ.items():
        if name.upper().endswith(_SECRET_SUFFIXES) and len(value) >= _MIN_SECRET_LEN:
            values.add(value)
    return sorted(values, key=len, reverse=True)


def _redact(values, text):
    for value in values:
        if value in text:
            text = text.replace(value, _REDACTED)
    return text


def _held_back(values, text):
    """The length of the longest end of `text` that is a proper start of a secret."""
    longest = 0
    for value in values:
        for k in range(min(len(value) - 1, len(text)), longest, -1):
            if text.endswith(value[:k]):
                longest = k
                break
    return longest


def _install(folder):
    import json

    stem = os.path.join(folder, "%d-%d" % (os.getpid(), time.time_ns()))
    flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND
    record = os.open(stem + ".jsonl", flags, 0o644)
    output = os.open(stem + ".out", flags, 0o644)
    write = os.write
    dumps = json.dumps
    now = time.time
    secrets = _secrets()
    state = {"written": 0, "pending": "", "exit": 0, "exception": None, "ended": False}

    write(record, (dumps({
        "kind": "start",
        "pid": os.getpid(),
        "argv": [_redact(secrets, a) for a in getattr(sys, "orig_argv", sys.argv)],
        "cwd": _redact(secrets, os.getcwd()),
        "t": now(),
    }) + "\n").encode())

    def put(text):
        if state["written"] >= _LIMIT or not text:
            return
        data = text.encode("utf-8", "replace")[: _LIMIT - state["written"]]
        state["written"] += len(data)
        write(output, data)

    def keep(text):
        if state["written"] >= _LIMIT or not isinstance(text, str):
            return
        text = _redact(secrets, state["pending"] + text)
        cut = len(text) - _held_back(secrets, text)
        state["pending"] = text[cut:]
        put(text[:cut])

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
        state["exception"] = _redact(secrets, "%s: %s" % (kind.__name__, value))
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
        put(state["pending"])
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
