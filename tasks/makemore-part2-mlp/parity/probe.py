"""Numeric parity probe (`xstack parity`), the source's side (PyTorch): the code cells of
lectures/makemore/makemore_part2_mlp.ipynb that form the experiment up to the training cell
(0 to 6: the data and its split; 21 to 26: the generator seeded 2147483647 and the
parameters), run in one namespace in the notebook's folder, cells 7 to 20 (the lecture's
first sketch, whose cell 19 raises on the whole data set) left out; then the training cell
(27) itself for four of its steps, i = 0, 1, 99999 and 100000: its loop's `range` is handed
those four, so each step is the cell's own code (batch, forward, backward, the step decay's
learning rate, SGD) applied to the parameters the previous one left.

Records, in this order:
- `data.sizes` (the train, dev and test examples), `data.Xtr.head` and `data.Ytr.head` (the
  first 16 training examples);
- `param.count` (11,897) and the initial parameters by name (`param.C`, `param.W1`,
  `param.b1`, `param.W2`, `param.b2`); the port loads them;
- `step0.batch_range`: the bounds the batch indices are drawn from (torch.randint(0, N));
- for each step i: `step{i}.ix` (the batch's indices; the port loads them); `step{i}.loss`;
  for step 0 the gradients (`step0.grad.*`); `step{i}.lr`, the learning rate the update
  applied (sum((p - p') g) / sum(g g) over every parameter: 0.1 before step 100,000, 0.01
  from it on); the parameters after the update (`step{i}.param.*`).
"""
import os

import numpy as np
import xstack_parity as xp

FOLDER = os.path.join("lectures", "makemore")
NOTEBOOK = os.path.abspath(os.path.join(FOLDER, "makemore_part2_mlp.ipynb"))
SKETCH = range(7, 21)
TRAINING = 27
STEPS = (0, 1, 99999, 100000)
NAMES = ("C", "W1", "b1", "W2", "b2")

cells = {"index": -1}


def skip(source):
    """Leaves out the sketch (cells 7 to 20), the training cell (kept to run below) and every
    cell after it. Every cell of the notebook is a code cell, so the calls count them."""
    cells["index"] += 1
    if cells["index"] == TRAINING:
        cells["training"] = source
    return cells["index"] in SKETCH or cells["index"] >= TRAINING


here = os.getcwd()
os.chdir(FOLDER)
nb = xp.notebook_namespace(NOTEBOOK, skip)
os.chdir(here)
import torch  # noqa: E402

torch.set_num_threads(1)


def applied_lr(before, after, grads):
    """The learning rate an SGD update applied: sum((p - p') g) / sum(g g)."""
    num = sum(np.sum((b.astype(np.float64) - a) * g) for b, a, g in zip(before, after, grads))
    den = sum(np.sum(g.astype(np.float64) ** 2) for g in grads)
    return np.float64(num / den)


xp.record("data.sizes", np.array([len(nb["Xtr"]), len(nb["Xdev"]), len(nb["Xte"])]))
xp.record("data.Xtr.head", nb["Xtr"][:16])
xp.record("data.Ytr.head", nb["Ytr"][:16])
xp.record("param.count", np.array(sum(p.nelement() for p in nb["parameters"])))
for name, value in zip(NAMES, nb["parameters"], strict=True):
    xp.record(f"param.{name}", value)

drawn = []
randint = torch.randint


def drawing(low, high, *args, **kwargs):
    """torch.randint, keeping the bounds the training cell draws its batch from."""
    drawn.append((low, high))
    return randint(low, high, *args, **kwargs)


def steps(max_steps):
    """The training loop's `range(200000)`: the probe's steps, each recorded once the cell
    has run it."""
    for i in STEPS:
        before = [p.detach().numpy().copy() for p in nb["parameters"]]
        yield i
        if i == STEPS[0]:
            xp.record(f"step{i}.batch_range", np.array(drawn[0]))
        xp.record(f"step{i}.ix", nb["ix"])
        xp.record(f"step{i}.loss", nb["loss"])
        grads = [p.grad.numpy() for p in nb["parameters"]]
        if i == STEPS[0]:
            for name, value in zip(NAMES, grads, strict=True):
                xp.record(f"step{i}.grad.{name}", value)
        after = [p.detach().numpy() for p in nb["parameters"]]
        xp.record(f"step{i}.lr", applied_lr(before, after, grads))
        for name, value in zip(NAMES, after, strict=True):
            xp.record(f"step{i}.param.{name}", value)


torch.randint = drawing
nb["range"] = steps
exec(compile(cells["training"], f"{NOTEBOOK}#cell={TRAINING}", "exec"), nb)
