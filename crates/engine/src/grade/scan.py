"""xstack's static integrity scan of a verify copy (SPEC section 3, grade step 1).

Run by the grader with an isolated interpreter (`python3 -I -S scan.py CONFIG_JSON`); it only
parses files, never runs them. Python's own parser decodes each file as Python would (the
declared source encoding honoured, identifiers NFKC-normalised), so what is scanned is what
would run. Prints one JSON object: {"findings": [{"kind", "file", "line", "text"}],
"python_files": N, "required_seen": bool}.

A notebook (`.ipynb`) is read as its code cells, each parsed as Python once its IPython
lines (`!pip install torch`, `%run -m torch.utils`, a `%%bash` cell) are read for what they
install, run or import and set aside; its findings say `NOTEBOOK#cell=N:LINE` (N the cell's
index from 0, markdown cells included, as nbformat numbers them; LINE within the cell).
The notebooks the config lists as `unrun_notebooks` (the source's own, unchanged, and not the
one the task runs) are left out.
"""

import ast
import json
import os
import re
import sys
import unicodedata
import warnings

MAX_BYTES = 2 * 1024 * 1024
# Notebooks carry their outputs (pictures among them): read up to this size.
NOTEBOOK_MAX_BYTES = 64 * 1024 * 1024
IMPORT_CALLS = {"__import__", "import_module"}
# Calls that load a module from a file by its path, bypassing the import statement.
FILE_LOADERS = {
    "spec_from_file_location", "SourceFileLoader", "SourcelessFileLoader",
    "ExtensionFileLoader", "load_source", "load_compiled", "load_dynamic",
    "spec_from_loader", "module_from_spec",
}
IMPORTABLE = (".py", ".pyc", ".so", ".pyd")
LINE_IMPORT = re.compile(r"(?:^|[;:])\s*(?:import|from)\s+([^\s.,;()]+)")
# Any `import X` / `from X` in a shell command's text (`python -c "import torch"`).
SHELL_IMPORT = re.compile(r"(?:^|[\s;:'\"])(?:import|from)\s+([A-Za-z_][\w]*)")
# A package installer run from a notebook: `!pip install`, `%pip install`, `%conda install`.
INSTALL = re.compile(
    r"^(?:pip3?|conda|mamba|micromamba|uv\s+pip|python3?\s+-m\s+pip)\s+install\b(.*)$")
# The module a distribution name installs, where they differ.
DISTRIBUTION_MODULES = {
    "pytorch": "torch", "pytorch-cpu": "torch", "torch-cpu": "torch",
    "dm-haiku": "haiku", "dm_haiku": "haiku", "orbax-checkpoint": "orbax",
}
# Cell magics whose body is shell commands, not Python.
SHELL_CELLS = {"bash", "sh", "script", "system", "sx"}
# An IPython assignment from a shell escape (`files = !ls`).
SHELL_ASSIGN = re.compile(r"^(\s*[\w.]+\s*=\s*)[!%](.*)$")


def top(name):
    return unicodedata.normalize("NFKC", name).split(".")[0]


def constant_string(node):
    """The value of a string expression made of constants only ("tor" + "ch"), else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = constant_string(node.left), constant_string(node.right)
        if left is not None and right is not None:
            return left + right
    if isinstance(node, ast.JoinedStr):
        parts = [constant_string(v) for v in node.values]
        if all(p is not None for p in parts):
            return "".join(parts)
    if isinstance(node, ast.FormattedValue):
        return constant_string(node.value)
    return None


def call_name(func):
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


def dotted(node):
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = dotted(node.value)
        return None if base is None else base + "." + node.attr
    return None


class Scan:
    def __init__(self, cfg):
        self.root = cfg["root"]
        self.forbid = set(cfg["forbid"])
        self.require = set(cfg["require"])
        self.guarded = set(cfg["guarded"])
        self.path_dirs = set(cfg["path_dirs"])
        self.protected = set(cfg["protected_modules"])
        self.unrun_notebooks = set(cfg["unrun_notebooks"])
        self.findings = []
        self.python_files = 0
        self.required_seen = not self.require
        # While a notebook's cell is scanned: the notebook's path (findings name its file).
        self.notebook = None

    def add(self, kind, rel, line, text):
        self.findings.append({"kind": kind, "file": self.notebook or rel, "line": line, "text": text})

    def shell_line(self, label, line, text):
        """What a notebook's shell escape or line magic installs, runs or imports."""
        words = text.lstrip("!%").strip()
        m = INSTALL.match(words)
        if m:
            for token in m.group(1).split():
                if token.startswith("-"):
                    continue
                name = re.split(r"[<>=!~\[;@ ]", token)[0].lower()
                module = DISTRIBUTION_MODULES.get(name, name.replace("-", "_"))
                if module in self.forbid:
                    self.add("forbidden_import", label, line,
                             "%s:%d: installs forbidden module `%s` (`%s`)" % (label, line, module, text.strip()))
            return
        parts = words.split()
        if parts[:1] in (["run"], ["aimport"], ["load_ext"]):
            target = [p for p in parts[1:] if not p.startswith("-")]
            if target and top(target[0]) in self.forbid and not target[0].endswith(".py"):
                self.add("forbidden_import", label, line,
                         "%s:%d: runs forbidden module `%s` (`%s`)" % (label, line, top(target[0]), text.strip()))
            return
        for m in SHELL_IMPORT.finditer(words):
            if top(m.group(1)) in self.forbid:
                self.add("forbidden_import", label, line,
                         "%s:%d: a shell command imports forbidden module `%s` (`%s`)"
                         % (label, line, top(m.group(1)), text.strip()))

    def cell_python(self, label, source):
        """A code cell's Python, its IPython lines read by `shell_line` and blanked (so line
        numbers stay those of the cell)."""
        lines = source.split("\n")
        first = lines[0].strip() if lines else ""
        if first.startswith("%%"):
            magic = first[2:].split()
            name = magic[0] if magic else ""
            shell = name in SHELL_CELLS and not (name == "script" and magic[1:2] and magic[1].startswith("python"))
            if shell:
                for number, line in enumerate(lines[1:], 2):
                    if line.strip():
                        self.shell_line(label, number, "!" + line.strip())
                return ""
            lines[0] = ""
        out = []
        continued = 0
        for number, line in enumerate(lines, 1):
            if continued:
                # A line of a shell escape continued with `\`: read with its first line.
                continued -= 1
                out.append("")
                continue
            stripped = line.lstrip()
            indent = line[:len(line) - len(stripped)]
            assign = SHELL_ASSIGN.match(line)
            if stripped.startswith(("!", "%")):
                whole = [stripped.rstrip()]
                while whole[-1].endswith("\\") and number + continued < len(lines):
                    whole[-1] = whole[-1][:-1].rstrip()
                    whole.append(lines[number + continued].strip())
                    continued += 1
                self.shell_line(label, number, " ".join(whole))
                out.append(indent + "pass")
            elif assign and not stripped.startswith("#"):
                self.shell_line(label, number, assign.group(2))
                out.append(assign.group(1) + "None")
            else:
                out.append(line)
        return "\n".join(out)

    def notebook_file(self, rel, data):
        """A notebook's code cells, each scanned as a Python file of its own."""
        try:
            doc = json.loads(data.decode("utf-8"))
        except (ValueError, UnicodeError):
            self.other_file(rel, data)
            return
        cells = doc.get("cells") if isinstance(doc, dict) else None
        if not isinstance(cells, list):
            self.other_file(rel, data)
            return
        self.python_files += 1
        self.notebook = rel
        try:
            for number, cell in enumerate(cells):
                if not isinstance(cell, dict) or cell.get("cell_type") != "code":
                    continue
                source = cell.get("source", "")
                if isinstance(source, list):
                    source = "".join(part for part in source if isinstance(part, str))
                if not isinstance(source, str):
                    continue
                label = "%s#cell=%d" % (rel, number)
                self.python_file(label, self.cell_python(label, source).encode("utf-8"), counted=True)
        finally:
            self.notebook = None

    def imports(self, tree):
        """(line, module, how) for every import statement and constant-named import call."""
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    yield node.lineno, alias.name, "import"
            elif isinstance(node, ast.ImportFrom):
                if node.level == 0 and node.module:
                    yield node.lineno, node.module, "import"
            elif isinstance(node, ast.Call) and call_name(node.func) in IMPORT_CALLS and node.args:
                name = constant_string(node.args[0])
                if name:
                    yield node.lineno, name, call_name(node.func) + "()"

    def package_file(self, text):
        """The forbidden package whose own files the string names (`.../torch/__init__.py`,
        `site-packages/torch`), else None."""
        parts = re.split(r"[/\\]", unicodedata.normalize("NFKC", text))
        for index, part in enumerate(parts):
            if part not in self.forbid:
                continue
            rest = parts[index + 1:]
            before = parts[index - 1] if index else ""
            if before in ("site-packages", "dist-packages") or any(
                p.endswith(IMPORTABLE) or p == "*" or p == "**" for p in rest
            ):
                return part
        return None

    def file_loads(self, rel, tree):
        """A forbidden module loaded from a file by path: a file loader called with its name,
        or a string naming one of its package's files (found with glob, then loaded);
        docstrings and other strings standing alone as statements are prose, not paths."""
        prose = {id(n.value) for n in ast.walk(tree) if isinstance(n, ast.Expr)}
        for node in ast.walk(tree):
            if id(node) in prose:
                continue
            if isinstance(node, ast.Call) and call_name(node.func) in FILE_LOADERS:
                for arg in list(node.args) + [k.value for k in node.keywords]:
                    name = constant_string(arg)
                    if name and top(name) in self.forbid:
                        self.add("forbidden_import", rel, node.lineno,
                                 "%s:%d: loads forbidden module `%s` from a file (%s)"
                                 % (rel, node.lineno, top(name), call_name(node.func)))
                        break
            elif isinstance(node, (ast.Constant, ast.JoinedStr)):
                text = constant_string(node)
                module = text and self.package_file(text)
                if module:
                    self.add("forbidden_import", rel, node.lineno,
                             "%s:%d: names the files of forbidden module `%s` (%r), as code that loads it by path does"
                             % (rel, node.lineno, module, text[:80]))

    def protected_patches(self, rel, tree):
        """Assignments that replace a protected module's attributes, or the module itself."""
        bound = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name in self.protected:
                        bound[alias.asname or alias.name.split(".")[0]] = alias.name
        for node in ast.walk(tree):
            targets = []
            if isinstance(node, ast.Assign):
                targets = node.targets
            elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
                targets = [node.target]
            elif isinstance(node, ast.Call) and call_name(node.func) in ("setattr", "delattr"):
                if node.args and dotted(node.args[0]) in bound:
                    module = bound[dotted(node.args[0])]
                    self.add("protected_changed", rel, node.lineno,
                             "%s:%d: changes the protected module `%s` at run time (%s)"
                             % (rel, node.lineno, module, call_name(node.func)))
                continue
            for target in targets:
                if isinstance(target, ast.Attribute):
                    name = dotted(target.value)
                    if name in bound:
                        self.add("protected_changed", rel, node.lineno,
                                 "%s:%d: replaces `%s.%s` of the protected module `%s`"
                                 % (rel, node.lineno, name, target.attr, bound[name]))
                elif isinstance(target, ast.Subscript):
                    key = constant_string(target.slice)
                    holder = dotted(target.value)
                    if holder == "sys.modules" and key in self.protected:
                        self.add("protected_changed", rel, node.lineno,
                                 "%s:%d: replaces the protected module `%s` in sys.modules"
                                 % (rel, node.lineno, key))
                    elif holder and holder.endswith(".__dict__") and holder[:-9] in bound:
                        self.add("protected_changed", rel, node.lineno,
                                 "%s:%d: changes the protected module `%s` through __dict__"
                                 % (rel, node.lineno, bound[holder[:-9]]))

    def parse(self, data, rel):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(data, filename=rel)

    def python_file(self, rel, data, counted=False):
        """One Python file (or notebook cell): its findings in line order."""
        start = len(self.findings)
        self.python_source(rel, data, counted)
        self.findings[start:] = sorted(self.findings[start:], key=lambda f: f["line"] or 0)

    def python_source(self, rel, data, counted):
        if not counted:
            self.python_files += 1
        try:
            tree = self.parse(data, rel)
        except (SyntaxError, ValueError, UnicodeError, LookupError):
            # Python would not run it as it stands; scan its lines for imports all the same.
            text = data.decode("utf-8", "replace")
            for number, line in enumerate(text.splitlines(), 1):
                for m in LINE_IMPORT.finditer(unicodedata.normalize("NFKC", line)):
                    if top(m.group(1)) in self.forbid:
                        self.add("forbidden_import", rel, number, "%s:%d: imports forbidden module `%s`"
                                 % (rel, number, top(m.group(1))))
            return
        for line, module, how in self.imports(tree):
            name = top(module)
            if name in self.forbid:
                via = "" if how == "import" else " through %s" % how
                self.add("forbidden_import", rel, line,
                         "%s:%d: imports forbidden module `%s`%s" % (rel, line, name, via))
            if name in self.require:
                self.required_seen = True
        self.file_loads(rel, tree)
        if self.protected:
            self.protected_patches(rel, tree)

    def other_file(self, rel, data):
        """Python hidden in a file that is not a .py file (a kept script launched later)."""
        if b"\0" in data or b"import" not in data:
            return
        try:
            tree = self.parse(data, rel)
        except (SyntaxError, ValueError, UnicodeError, LookupError, MemoryError, RecursionError):
            return
        for line, module, _how in self.imports(tree):
            name = top(module)
            if name in self.forbid:
                self.add("forbidden_import", rel, line,
                         "%s:%d: holds Python that imports forbidden module `%s`" % (rel, line, name))

    def names(self, rel_dir, dirs, files):
        for name in sorted(dirs) + sorted(files):
            rel = os.path.join(rel_dir, name) if rel_dir else name
            stem = unicodedata.normalize("NFKC", name.split(".")[0])
            importable = name in dirs or name.endswith(IMPORTABLE)
            if importable and stem in self.forbid:
                self.add("forbidden_name", rel, None,
                         "%s: named after the forbidden module `%s`" % (rel, stem))
            if rel_dir not in self.path_dirs:
                continue
            path = os.path.join(self.root, rel)
            if name in files and name in ("sitecustomize.py", "usercustomize.py"):
                self.add("shadowing", rel, None, "%s: runs code at every Python start-up" % rel)
            elif name in files and name.endswith((".py", ".so")) and stem in self.guarded:
                self.add("shadowing", rel, None, "%s: shadows the installed module `%s`" % (rel, stem))
            elif name in dirs and stem in self.guarded and os.path.isfile(os.path.join(path, "__init__.py")):
                self.add("shadowing", rel + "/", None, "%s/: shadows the installed package `%s`" % (rel, stem))

    def run(self):
        for here, dirs, files in os.walk(self.root):
            dirs.sort()
            rel_dir = os.path.relpath(here, self.root)
            rel_dir = "" if rel_dir == "." else rel_dir
            self.names(rel_dir, dirs, files)
            for name in sorted(files):
                rel = os.path.join(rel_dir, name) if rel_dir else name
                path = os.path.join(here, name)
                if name.endswith(".pth"):
                    self.add("shadowing", rel, None,
                             "%s: a .pth file can run code and change the import path" % rel)
                try:
                    limit = NOTEBOOK_MAX_BYTES if name.endswith(".ipynb") else MAX_BYTES
                    if os.path.islink(path) or os.path.getsize(path) > limit:
                        continue
                    with open(path, "rb") as f:
                        data = f.read()
                except OSError:
                    continue
                if name.endswith(".py"):
                    self.python_file(rel, data)
                elif rel in self.unrun_notebooks:
                    continue
                elif name.endswith(".ipynb"):
                    self.notebook_file(rel, data)
                else:
                    self.other_file(rel, data)
        return {
            "findings": self.findings,
            "python_files": self.python_files,
            "required_seen": self.required_seen,
        }


if __name__ == "__main__":
    sys.setrecursionlimit(10000)
    print(json.dumps(Scan(json.loads(sys.argv[1])).run()))
