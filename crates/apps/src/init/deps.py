"""What an experiment needs, read from its repository without running any of it.

Run by `xstack init` as `python3 - REPO ENTRY...` (this text on stdin); prints one JSON
object: `setup_py` (the `install_requires` of `setup.py`, read with `ast`, never executed),
`imports` (the third-party modules the entry files import, and the repository's own modules
they import, transitively; the standard library, imports guarded by `except ImportError`
and imports inside the functions of the repository's modules left out), `files` (the repository's Python files the experiment reaches),
`hazards` (lines of those files that need a GPU or fetch from the network), `own` (the
repository's own packages the entry files import that the run cannot import from the entry's
folder, each with where it is imported and the folder, `.` or `src`, that holds it) and
`notes` (what could not be read).
"""
import ast
import json
import os
import re
import sys

REPO = os.path.abspath(sys.argv[1])
ENTRIES = sys.argv[2:]
STDLIB = set(sys.stdlib_module_names) | {"__future__"}
GUARDS = {"ImportError", "ModuleNotFoundError", "Exception", "BaseException"}
notes = []
# What a CPU machine without network cannot do, as lines of code say it: for a GPU, a
# `.cuda(` call or a CUDA device string (`"cuda"`, `'cuda:0'`, `"cuda:"+str(args.dev)`)
# that is not compared with something. A line that asks whether CUDA is there (`"cuda" if
# torch.cuda.is_available() else "cpu"`) is not one.
HAZARDS = [
    ("gpu", re.compile(r"""\.cuda\(|(?<![=!]=)(?<![=!]=\s)(['"])cuda(?::\d*)?\1""")),
    (
        "network",
        re.compile(
            r"urlopen\(|urlretrieve\(|requests\.get\(|\bwget\b|download\s*=\s*True|fetch_openml\(|torch\.hub\.load|hf_hub_download\("
        ),
    ),
]
# Hugging Face's `load_dataset(` fetches from the Hub; a repository's own function of that
# name (ppnp's `ppnp.data.io.load_dataset`) reads its files. It counts only in code that
# imports Hugging Face's `datasets`.
HF_LOAD = re.compile(r"\bload_dataset\(")
HF_DATASETS = re.compile(r"^\s*(from\s+datasets\s+import|import\s+datasets\b)", re.M)


def rel(path):
    return os.path.relpath(path, REPO).replace(os.sep, "/")


def literal_strings(node, names):
    """The strings of a list/tuple literal, or of a top-level name bound to one."""
    if isinstance(node, ast.Name) and node.id in names:
        node = names[node.id]
    if isinstance(node, (ast.List, ast.Tuple)):
        out = []
        for item in node.elts:
            if isinstance(item, ast.Constant) and isinstance(item.value, str):
                out.append(item.value)
            else:
                return None
        return out
    return None


def setup_py():
    path = os.path.join(REPO, "setup.py")
    if not os.path.isfile(path):
        return None
    try:
        tree = ast.parse(open(path, encoding="utf-8", errors="replace").read(), path)
    except SyntaxError as e:
        notes.append(f"setup.py: not Python this interpreter parses ({e.msg}, line {e.lineno})")
        return None
    names = {}
    for node in tree.body:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    names[target.id] = node.value
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
        if name != "setup":
            continue
        for kw in node.keywords:
            if kw.arg == "install_requires":
                found = literal_strings(kw.value, names)
                if found is None:
                    notes.append(
                        f"setup.py:{kw.value.lineno}: install_requires is computed, not a list of strings; not read"
                    )
                    return None
                return found
        return []
    return None


def code_of(path):
    """(where, text) of a Python file, or of each of a notebook's code cells (magics and
    shell lines out)."""
    text = open(path, encoding="utf-8", errors="replace").read()
    if not path.endswith(".ipynb"):
        return [(rel(path) + ":", text)]
    try:
        cells = json.loads(text).get("cells", [])
    except ValueError:
        notes.append(f"{rel(path)}: not a notebook")
        return []
    out = []
    for index, cell in enumerate(cells):
        if cell.get("cell_type") != "code":
            continue
        source = cell.get("source", "")
        if isinstance(source, list):
            source = "".join(source)
        lines = [l for l in source.splitlines() if not l.lstrip().startswith(("!", "%"))]
        out.append((f"{rel(path)}#cell={index} line ", "\n".join(lines)))
    return out


def guarded(node, parents):
    """Whether an import sits in a `try` whose handlers catch its failure."""
    for parent in parents:
        if isinstance(parent, ast.Try) and node_in(node, parent.body):
            for handler in parent.handlers:
                kind = handler.type
                names = []
                if kind is None:
                    return True
                for k in kind.elts if isinstance(kind, ast.Tuple) else [kind]:
                    names.append(k.id if isinstance(k, ast.Name) else getattr(k, "attr", ""))
                if GUARDS & set(names):
                    return True
    return False


def node_in(node, body):
    return any(node is n or any(node is m for m in ast.walk(n)) for n in body)


def imports_of(text, where):
    """(module, level, line, guarded, names, lazy) of each import statement in `text`;
    `lazy` when it sits inside a function (it runs only if that function is called)."""
    try:
        tree = ast.parse(text)
    except SyntaxError as e:
        notes.append(f"{where}: not Python this interpreter parses ({e.msg}, line {e.lineno})")
        return []
    out = []

    def visit(node, parents):
        lazy = any(isinstance(p, (ast.FunctionDef, ast.AsyncFunctionDef)) for p in parents)
        if isinstance(node, ast.Import):
            for alias in node.names:
                out.append((alias.name, 0, node.lineno, guarded(node, parents), [], lazy))
        elif isinstance(node, ast.ImportFrom):
            names = [a.name for a in node.names]
            out.append(
                (node.module or "", node.level, node.lineno, guarded(node, parents), names, lazy)
            )
        for child in ast.iter_child_nodes(node):
            visit(child, parents + [node])

    visit(tree, [])
    return out


def local_file(module, base):
    """The repository file of `module` seen from the folder `base` (a .py file, or a
    package's __init__.py), or None."""
    path = os.path.join(base, *module.split("."))
    for candidate in (path + ".py", os.path.join(path, "__init__.py")):
        if os.path.isfile(candidate) and os.path.abspath(candidate).startswith(REPO + os.sep):
            return os.path.abspath(candidate)
    if os.path.isdir(path) and os.path.abspath(path).startswith(REPO + os.sep):
        return os.path.abspath(path)  # a namespace package
    return None


def main():
    setup = setup_py()
    third_party = {}
    reached = []
    queue = []
    for entry in ENTRIES:
        path = os.path.abspath(os.path.join(REPO, entry))
        if os.path.isfile(path):
            queue.append(path)
    # The repository's top and its `src/` find the repository's own packages; a module found
    # only there is not importable by the run (Python puts the entry's folder on the path, not
    # the repository's top): it is the repository's own package, reported in `own`.
    top_roots = [REPO] + [os.path.join(REPO, "src")] * os.path.isdir(os.path.join(REPO, "src"))
    roots = list(top_roots)
    entry_folders = []
    for entry in queue:
        folder = os.path.dirname(entry)
        entry_folders.append(folder)
        if folder not in roots:
            roots.append(folder)
    own = {}
    entries = set(queue)
    lazy_only = {}
    seen = set()
    hazards = []
    while queue:
        path = queue.pop(0)
        if path in seen:
            continue
        seen.add(path)
        if os.path.isdir(path):
            for name in sorted(os.listdir(path)):
                if name.endswith(".py"):
                    queue.append(os.path.join(path, name))
            continue
        reached.append(rel(path))
        folder = os.path.dirname(path)
        for where, text in code_of(path):
            for number, line in enumerate(text.splitlines(), 1):
                code = line.split("#", 1)[0]
                if "is_available" in code:
                    continue
                found = [kind for kind, pattern in HAZARDS if pattern.search(code)]
                if HF_LOAD.search(code) and HF_DATASETS.search(text) and "network" not in found:
                    found.append("network")
                for kind in found:
                    if len(hazards) < 20:
                        hazards.append({"kind": kind, "at": f"{where}{number}", "line": line.strip()})
            for module, level, line, is_guarded, names, lazy in imports_of(
                text, where.rstrip(": ")
            ):
                if level > 0:
                    base = folder
                    for _ in range(level - 1):
                        base = os.path.dirname(base)
                    targets = [module] if module else []
                    targets += [f"{module}.{n}" if module else n for n in names]
                    for target in targets:
                        found = local_file(target, base)
                        if found:
                            queue.append(found)
                    continue
                top = module.split(".")[0]
                if not top or top in STDLIB:
                    continue
                local = None
                for root in roots + [folder]:
                    local = local_file(module, root) or local_file(top, root)
                    if local:
                        break
                if local:
                    if root in top_roots and root not in entry_folders and path in entries:
                        own.setdefault(top, {"module": top, "at": f"{where}{line}", "root": rel(root) if root != REPO else "."})
                    queue.append(local)
                    for n in names:
                        sub = local_file(f"{module}.{n}", root)
                        if sub:
                            queue.append(sub)
                    continue
                if is_guarded:
                    continue
                if lazy and path not in entries:
                    if top not in third_party and top not in lazy_only:
                        lazy_only[top] = f"{where}{line}"
                    continue
                third_party.setdefault(top, f"{where}{line}")
    for top, at in lazy_only.items():
        if top not in third_party:
            notes.append(
                f"{top} is imported only inside a function ({at}), so it is left out; if the run needs it, it says so"
            )
    print(
        json.dumps(
            {
                "setup_py": setup,
                "own": list(own.values()),
                "imports": [{"module": m, "at": at} for m, at in third_party.items()],
                "files": reached,
                "hazards": hazards,
                "notes": notes,
                "python": "%d.%d" % sys.version_info[:2],
            }
        )
    )


main()
