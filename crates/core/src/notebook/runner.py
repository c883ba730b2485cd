"""xstack's notebook runner: runs a Jupyter notebook top to bottom in a kernel of this
environment, headless, as `python -m _xstack_notebook NOTEBOOK [--cells 0-6,21-34]`.

Installed into every environment xstack builds (docs/TASKS.md, "Notebook tasks"). The kernel
is ipykernel's own (`python3`, this interpreter), started in the notebook's folder as Jupyter
starts it; matplotlib draws to no screen (`MPLBACKEND=Agg` unless set). The kernel talks to
the runner over local sockets, and Jupyter's, IPython's and matplotlib's own files go to a
folder of its own that is removed at the end (a confined run's home is read-only). Each code cell's
output is written as the kernel produces it: a line `── NOTEBOOK#cell=N ──` first (N is the
cell's index in the notebook, from 0, markdown cells included, as nbformat, the Diff pane and
claims number them), stream text as it comes, a result's or a display's `text/plain` (with
`[image/png]` for a picture). A cell that raises ends the run with exit status 1 and the line
`NOTEBOOK#cell=N raised NAME: VALUE`, unless the notebook was committed with that cell's output
an error of the same name (its author ran it to show the error, as Jupyter keeps it): the run
then goes on after the line `NOTEBOOK#cell=N: NAME, as in its committed output; going on`.
A line that installs packages (`!pip install …`, `%pip …`, `!python -m pip …`, `!conda …`,
`%conda …`, `!uv pip …`) is not run: the environment is the task's, built from its package
lists, and such a line would reach a pip outside it or the network. The cell prints
`xstack: skipped `LINE`: the task's environment provides its packages` in its place.
With `--cells` (a task's `[run] cells`: indices and inclusive ranges, in increasing order)
only those code cells run, in order, in the one kernel; each code cell left out gets the line
`── NOTEBOOK#cell=N left out ([run] cells) ──` in its place and does not run.
"""

import os
import re
import shutil
import sys
import tempfile
import warnings

# A line of a code cell that installs packages through the shell or a magic.
INSTALL = re.compile(r"^\s*(?:[!%](?:pip3?|conda|mamba|micromamba)\b|!\s*uv\s+pip\b|!\s*python3?\s+-m\s+pip\b)")


def write(stream, text):
    stream.write(text)
    stream.flush()


def shown(data):
    """One display's text: its `text/plain`, then the kinds of picture it holds."""
    parts = []
    if "text/plain" in data:
        parts.append(str(data["text/plain"]))
    parts.extend("[%s]" % kind for kind in sorted(data) if kind.startswith("image/"))
    return " ".join(parts)


USAGE = "usage: python -m _xstack_notebook NOTEBOOK.ipynb [--cells 0-6,21-34]\n"


def selection(text):
    """The cell indices `0-6,21-34` names (increasing, inclusive ranges), or None if malformed."""
    chosen = []
    for item in text.split(","):
        first, _, last = item.strip().partition("-")
        if not first.strip().isdigit() or (last and not last.strip().isdigit()):
            return None
        first = int(first)
        last = int(last) if last else first
        if last < first or (chosen and first <= chosen[-1]):
            return None
        chosen.extend(range(first, last + 1))
    return set(chosen)


def left_out_cells(notebook, name, chosen):
    """The code cells `chosen` (None: all) leaves out, each tagged `skip-execution` (nbclient's
    tag for a cell not to run); an error message if `chosen` names a cell that is not code."""
    if chosen is None:
        return set(), None
    for index in sorted(chosen):
        if index >= len(notebook.cells) or notebook.cells[index].cell_type != "code":
            return set(), "--cells: %s#cell=%d is not a code cell of the notebook" % (name, index)
    left_out = set()
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type == "code" and index not in chosen:
            left_out.add(index)
            tags = cell.metadata.setdefault("tags", [])
            if "skip-execution" not in tags:
                tags.append("skip-execution")
    return left_out, None


def main(argv):
    chosen = None
    if len(argv) == 4 and argv[2] == "--cells":
        chosen = selection(argv[3])
        if chosen is None:
            write(sys.stderr, "xstack notebook runner: --cells %r: not indices and ranges such as 0-6,21-34\n" % argv[3])
            return 2
    elif len(argv) != 2:
        write(sys.stderr, USAGE)
        return 2
    if argv[1].startswith("-"):
        write(sys.stderr, USAGE)
        return 2
    path = os.path.abspath(argv[1])
    os.environ.setdefault("MPLBACKEND", "Agg")
    try:
        import nbformat
        from nbclient import NotebookClient
        from nbclient.exceptions import CellExecutionError, DeadKernelError
    except ImportError as e:
        write(sys.stderr, "xstack notebook runner: %s (the environment needs nbclient and ipykernel)\n" % e)
        return 3
    try:
        with warnings.catch_warnings():
            # A notebook written before cells had ids is run as Jupyter runs it, unwarned.
            warnings.simplefilter("ignore")
            notebook = nbformat.read(path, as_version=4)
    except (OSError, ValueError) as e:
        write(sys.stderr, "xstack notebook runner: cannot read %s: %s\n" % (argv[1], e))
        return 2
    left_out, wrong = left_out_cells(notebook, argv[1], chosen)
    if wrong:
        write(sys.stderr, "xstack notebook runner: %s\n" % wrong)
        return 2

    scratch = tempfile.mkdtemp(prefix="xstack-nb-")
    try:
        for var, sub in (("JUPYTER_RUNTIME_DIR", "runtime"), ("IPYTHONDIR", "ipython"),
                         ("MPLCONFIGDIR", "matplotlib")):
            os.environ.setdefault(var, os.path.join(scratch, sub))
        return execute(notebook, argv[1], path, scratch, left_out, NotebookClient,
                       CellExecutionError, DeadKernelError)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def without_installs(notebook):
    """Each code cell's package-installing lines (and their `\\` continuations) replaced, in
    place and line for line, by a print saying they were skipped."""
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        lines = cell.source.split("\n")
        i = 0
        while i < len(lines):
            if not INSTALL.match(lines[i]):
                i += 1
                continue
            start = i
            while lines[i].rstrip().endswith("\\") and i + 1 < len(lines):
                i += 1
            whole = " ".join(l.rstrip().rstrip("\\").strip() for l in lines[start:i + 1])
            indent = lines[start][: len(lines[start]) - len(lines[start].lstrip())]
            note = "xstack: skipped `%s`: the task's environment provides its packages" % whole
            lines[start] = "%sprint(%r)" % (indent, note)
            for j in range(start + 1, i + 1):
                lines[j] = ""
            i += 1
        cell.source = "\n".join(lines)


def committed_errors(notebook):
    """The code cells committed with an error as an output: index -> the error's name. Each is
    tagged `raises-exception` (nbclient's tag for a cell expected to raise) for this run."""
    expected = {}
    for index, cell in enumerate(notebook.cells):
        if cell.cell_type != "code":
            continue
        names = [o.get("ename") for o in cell.get("outputs", []) if o.get("output_type") == "error"]
        if names:
            expected[index] = names[0]
            tags = cell.metadata.setdefault("tags", [])
            if "raises-exception" not in tags:
                tags.append("raises-exception")
    return expected


def execute(notebook, name, path, scratch, left_out, NotebookClient, CellExecutionError,
            DeadKernelError):
    """Runs `notebook` (`name` as the command gave it, read from `path`) but its code cells
    `left_out`; the exit status."""
    from jupyter_client.manager import KernelManager

    failed = {}
    expected = committed_errors(notebook)
    without_installs(notebook)

    class Streaming(NotebookClient):
        """nbclient's client, writing each output message as it arrives."""

        def output(self, outs, msg, display_id, cell_index):
            kind = msg["msg_type"]
            content = msg["content"]
            if kind == "stream":
                target = sys.stderr if content.get("name") == "stderr" else sys.stdout
                write(target, content.get("text", ""))
            elif kind in ("execute_result", "display_data"):
                text = shown(content.get("data", {}))
                if text:
                    write(sys.stdout, text + "\n")
            elif kind == "error":
                write(sys.stderr, "\n".join(content.get("traceback", [])) + "\n")
            return super().output(outs, msg, display_id, cell_index)

    def started(cell, cell_index):
        if cell_index in left_out:
            write(sys.stdout, "── %s#cell=%d left out ([run] cells) ──\n" % (name, cell_index))
        elif cell.cell_type == "code":
            write(sys.stdout, "── %s#cell=%d ──\n" % (name, cell_index))

    def errored(cell, cell_index, execute_reply):
        failed["cell"] = cell_index
        content = execute_reply["content"]
        if cell_index not in expected:
            return
        if content.get("ename") != expected[cell_index]:
            raise CellExecutionError.from_cell_and_msg(cell, content)
        write(sys.stderr, "%s#cell=%d: %s, as in its committed output; going on\n"
              % (name, cell_index, content.get("ename")))

    kernel = KernelManager(kernel_name="python3", transport="ipc",
                           ip=os.path.join(scratch, "kernel"))
    client = Streaming(
        notebook,
        km=kernel,
        # The kernel's own log (not the cells' output) is quiet unless something is wrong.
        extra_arguments=["--IPKernelApp.log_level=ERROR"],
        timeout=None,
        kernel_name="python3",
        resources={"metadata": {"path": os.path.dirname(path)}},
        on_cell_start=started,
        on_cell_error=errored,
    )
    try:
        client.execute()
    except CellExecutionError as e:
        cell = failed.get("cell", "?")
        write(sys.stderr, "%s#cell=%s raised %s: %s\n" % (name, cell, e.ename, e.evalue))
        return 1
    except DeadKernelError as e:
        cell = failed.get("cell", "?")
        write(sys.stderr, "%s#cell=%s: the kernel died (%s)\n" % (name, cell, e))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
