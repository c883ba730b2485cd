"""xstack's parity helper: what a parity probe records, and the inputs the port loads.

Stdlib and numpy only; xstack puts this folder on PYTHONPATH for both sides of the probe.

    import xstack_parity as xp
    x = xp.load_inputs()["input.x"]        # the port: the source's recorded arrays
    xp.record("logits", logits)            # both sides: same names, the source's layouts

`record(name, array)` keeps the arrays in the order they are recorded, with the file and line
of the call (or, with `at=function`, of the function that computes the array), and writes them (with every earlier one) to `$XSTACK_PARITY_OUT`, an `.npz`
archive; the source's side writes the inputs and weights the port must use, and
`load_inputs()` reads them back on the port's side from `$XSTACK_PARITY_IN`. Without
`$XSTACK_PARITY_OUT` (a probe run by hand) the arrays are only kept in memory.
`notebook_namespace(path, skip)` runs a notebook's code cells in one namespace (IPython's
magics left out), for a probe of a notebook task.
"""

import inspect
import json
import os
import sys
import zipfile

import numpy as np

__all__ = ["record", "load_inputs", "recorded", "notebook_namespace"]

MANIFEST = "__xstack_parity__.json"
"""The archive member that lists the arrays in order, with the caller's file and line."""

_records = []


def _as_numpy(array):
    """A NumPy copy (in C order) of a NumPy, PyTorch, JAX or plain Python array, and the
    name of its dtype before float16 or bfloat16 were widened to float32."""
    detach = getattr(array, "detach", None)
    if callable(detach):
        array = detach().cpu().numpy()
    out = np.array(array, copy=True, order="C")
    if out.dtype.kind == "f" and out.dtype.itemsize < 4 or out.dtype.kind == "V":
        # float16 and bfloat16 (a void type to NumPy) are compared as float32.
        return out.astype(np.float32), str(out.dtype)
    if out.dtype.kind not in "biuf":
        raise TypeError(
            f"xstack_parity.record: dtype {out.dtype} is not a bool, integer or float array"
        )
    return out, str(out.dtype)


def _location(at):
    """The file and first line of the function `at` (unwrapped from decorators such as
    `jax.jit`)."""
    function = inspect.unwrap(at)
    code = getattr(function, "__code__", None)
    if code is None:
        raise TypeError(f"xstack_parity.record: at={at!r} is not a Python function")
    return code.co_filename, code.co_firstlineno


def record(name, array, at=None):
    """Record `array` under `name` (each name once), and write everything recorded so far.

    The location kept is the caller's file and line, or with `at=function` where that
    function is defined: the code that computes the array, which the Diff pane opens."""
    if not isinstance(name, str) or not name or name == MANIFEST:
        raise ValueError(f"xstack_parity.record: {name!r} is not a usable name")
    if any(r["name"] == name for r in _records):
        raise ValueError(f"xstack_parity.record: {name!r} is recorded twice")
    if at is None:
        caller = sys._getframe(1)
        file, line = caller.f_code.co_filename, caller.f_lineno
    else:
        file, line = _location(at)
    values, dtype = _as_numpy(array)
    _records.append(
        {
            "name": name,
            "array": values,
            "dtype": dtype,
            "file": os.path.relpath(os.path.abspath(file)),
            "line": line,
        }
    )
    _write()


def recorded():
    """The names recorded so far, in order."""
    return [r["name"] for r in _records]


def notebook_namespace(path, skip):
    """The namespace of the notebook at `path` after its code cells ran in order, leaving out
    each cell whose stripped source `skip` accepts (the cell that trains, say); a cell's code
    is compiled as `PATH#cell=N`, so a traceback and `record` name the cell. In a cell that is
    not Python as written, IPython's magics and shell escapes (`%matplotlib inline`, `!ls`: a
    line starting with `%` or `!`) are left out, the line numbers kept."""
    with open(path) as f:
        cells = json.load(f)["cells"]
    namespace = {"__name__": "__notebook__"}
    for index, cell in enumerate(cells):
        source = "".join(cell["source"])
        if cell["cell_type"] != "code" or skip(source.strip()):
            continue
        exec(_compile_cell(source, f"{path}#cell={index}"), namespace)
    return namespace


def _compile_cell(source, name):
    """A code cell compiled as `name`: as written, or, when that is not Python, with each
    IPython magic or shell-escape line replaced by `pass` at its indentation."""
    try:
        return compile(source, name, "exec")
    except SyntaxError:
        lines = source.split("\n")
        for i, line in enumerate(lines):
            code = line.lstrip()
            if code.startswith(("%", "!")):
                lines[i] = line[: len(line) - len(code)] + "pass"
        return compile("\n".join(lines), name, "exec")


def load_inputs():
    """The arrays the source's side recorded (`$XSTACK_PARITY_IN`), by name, in order."""
    path = os.environ.get("XSTACK_PARITY_IN")
    if not path:
        raise RuntimeError(
            "xstack_parity.load_inputs: XSTACK_PARITY_IN is not set "
            "(only the port's side of a parity probe is given the source's arrays)"
        )
    with np.load(path) as archive:
        return {name: archive[name] for name in archive.files if name != MANIFEST}


def _write():
    out = os.environ.get("XSTACK_PARITY_OUT")
    if not out:
        return
    folder = os.path.dirname(os.path.abspath(out))
    os.makedirs(folder, exist_ok=True)
    partial = out + ".partial"
    with zipfile.ZipFile(partial, "w", zipfile.ZIP_STORED) as archive:
        for r in _records:
            with archive.open(r["name"] + ".npy", "w", force_zip64=True) as member:
                np.lib.format.write_array(member, r["array"], allow_pickle=False)
        manifest = [
            {k: r[k] for k in ("name", "dtype", "file", "line")} for r in _records
        ]
        archive.writestr(MANIFEST, json.dumps(manifest))
    os.replace(partial, out)
