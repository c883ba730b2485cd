"""xstack's runtime import audit (SPEC section 3, verify).

Installed by xstack into the site-packages of its cached environments with a `.pth` file, so
every Python process of a verify run loads it at start-up, whatever the migrated code does
with PYTHONPATH or the environment. It does nothing unless a verify run configured it: inside
the confined run the configuration is the read-only file /run/xstack/audit.json; unconfined,
the file named by XSTACK_AUDIT_CONFIG.

It records, as JSON lines in the log folder the configuration names:
- every import (or attempted import) of a forbidden top-level module, with the first file of
  the migrated code on the stack (through `import`, `__import__`, `importlib`, `exec`);
- a shared library of a forbidden module loaded with ctypes;
- a file of a forbidden package opened by path (`.../torch/__init__.py` loaded with
  `importlib.util.spec_from_file_location`), also when the open fails because the confined
  run cannot see it;
- a Python started with -S (which would skip this audit);
- a protected module whose functions were replaced at run time (checked at exit).
"""

import json
import os
import sys

_CONFIG = "/run/xstack/audit.json"


def _load():
    for path in (_CONFIG, os.environ.get("XSTACK_AUDIT_CONFIG", "")):
        if path and os.path.isfile(path):
            with open(path) as f:
                return json.load(f)
    return None


def _install(cfg):
    forbid = set(cfg["forbid"])
    root = cfg["root"]
    protected = cfg.get("protected", {})
    log = os.open(
        os.path.join(cfg["log_dir"], "%d.jsonl" % os.getpid()),
        os.O_WRONLY | os.O_CREAT | os.O_APPEND,
        0o644,
    )
    seen = set()
    own = __file__
    write = os.write
    getframe = sys._getframe
    dumps = json.dumps

    def where():
        frame = getframe(2)
        through_exec = False
        while frame is not None:
            name = frame.f_code.co_filename
            if name.startswith(root + os.sep) and name != own:
                return name[len(root) + 1:], frame.f_lineno, through_exec
            if name.startswith("<") and not name.startswith("<frozen"):
                through_exec = True
            frame = frame.f_back
        return None, None, through_exec

    def record(kind, module, text_tail, at=None):
        file, line, through_exec = at or where()
        key = (kind, module, file, line)
        if key in seen:
            return
        seen.add(key)
        write(log, (dumps({
            "kind": kind, "module": module, "file": file, "line": line,
            "exec": through_exec, "detail": text_tail,
        }) + "\n").encode())

    def on_import(name):
        top = name.partition(".")[0]
        if top in forbid:
            record("runtime_import", top, name)

    code_files = (".py", ".pyc", ".so")

    def on_open(path):
        if not isinstance(path, str) or not path.endswith(code_files):
            return
        parts = path.split(os.sep)
        for module in forbid:
            if module in parts[:-1] and not path.startswith(root + os.sep):
                record("runtime_import", module, "opened %s" % path)

    def hook(event, args):
        if event == "import":
            on_import(args[0])
        elif event == "open" and args:
            on_open(args[0])
        elif event == "ctypes.dlopen" and args and args[0]:
            base = os.path.basename(str(args[0]))
            for module in forbid:
                if base.startswith(("lib" + module, module + ".")) or ("/%s/" % module) in str(args[0]):
                    record("runtime_import", module, "ctypes.dlopen(%s)" % args[0])
        elif event in ("subprocess.Popen", "os.exec", "os.posix_spawn", "os.spawn"):
            argv = args[1] if len(args) > 1 else None
            if isinstance(argv, (list, tuple)) and argv and "python" in os.path.basename(str(argv[0])):
                for arg in argv[1:]:
                    arg = str(arg)
                    if arg.startswith("-") and not arg.startswith("--") and "S" in arg[1:]:
                        record("other", None, "started Python with -S, which skips the import audit")
                    if not arg.startswith("-"):
                        break

    class Finder:
        """Sees every import that reaches the import system (importlib included)."""

        @staticmethod
        def find_spec(name, path=None, target=None):
            on_import(name)
            return None

    sys.meta_path.insert(0, Finder)
    sys.addaudithook(hook)

    if protected:
        import atexit

        def check_protected():
            for module, spec in protected.items():
                mod = sys.modules.get(module)
                if mod is None:
                    continue
                expected = os.path.join(root, spec["file"])
                actual = getattr(mod, "__file__", None)
                if not actual or os.path.realpath(actual) != os.path.realpath(expected):
                    record("protected_changed", module,
                           "the protected module `%s` was replaced at run time" % module)
                    continue
                for name in spec["defs"]:
                    code = getattr(getattr(mod, name, None), "__code__", None)
                    origin = getattr(code, "co_filename", None)
                    origin = origin and os.path.realpath(origin)
                    if origin is None or os.path.realpath(origin) != os.path.realpath(expected):
                        at = (None, None, False)
                        if origin and origin.startswith(root + os.sep):
                            at = (origin[len(root) + 1:], code.co_firstlineno, False)
                        record("protected_changed", module,
                               "`%s.%s` of the protected %s was replaced at run time"
                               % (module, name, spec["file"]), at)

        atexit.register(check_protected)


_cfg = _load()
if _cfg is not None:
    _install(_cfg)
del _cfg
