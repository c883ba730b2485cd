"""Numeric parity probe (`xstack parity`), the source's side (PyTorch): the code cells of
lectures/makemore/makemore_part3_bn.ipynb up to the training cell (the data, the generator
seeded 2147483647 and the parameters), run in one namespace in the notebook's folder; then the
training cell itself for four of its steps, i = 0, 1, 99999 and 100000: its loop's `range` is
handed those four, so each step is the cell's own code (batch, forward with the batch
normalisation, backward, the running statistics, the step decay's learning rate, SGD)
applied to the parameters the previous one left.

Records, in this order:
- `data.sizes` (the train, val and test examples), `data.Xtr.head` and `data.Ytr.head` (the
  first 16 training examples);
- `param.count` (12,097) and the initial parameters by name (`param.C`, `param.W1`,
  `param.W2`, `param.b2`, `param.bngain`, `param.bnbias`); the port loads them;
- `running.bnmean_running` and `running.bnstd_running` at init (zeros and ones);
- `step0.batch_range`: the bounds the batch indices are drawn from (torch.randint(0, N));
- for each step i: `step{i}.ix` (the batch's indices; the port loads them), for step 0
  `step0.Xb` and `step0.Yb`; `step{i}.bnmeani` and `step{i}.bnstdi` (the batch's statistics);
  `step{i}.loss`; for step 0 the gradients (`step0.grad.*`); `step{i}.lr`, the learning rate
  the update applied (sum((p - p') g) / sum(g g) over every parameter: 0.1 before step
  100,000, 0.01 from it on); the parameters after the update (`step{i}.param.*`) and the
  running statistics after the step (`step{i}.running.*`).
"""
import os

import numpy as np
import xstack_parity as xp

FOLDER = os.path.join("lectures", "makemore")
NOTEBOOK = os.path.abspath(os.path.join(FOLDER, "makemore_part3_bn.ipynb"))
TRAINING = "# same optimization as last time"
STEPS = (0, 1, 99999, 100000)
NAMES = ("C", "W1", "W2", "b2", "bngain", "bnbias")
RUNNING = ("bnmean_running", "bnstd_running")

cells = {}


def skip(source):
    """Leaves out the first training cell (kept to run below) and every cell after it."""
    if source.startswith(TRAINING):
        cells.setdefault("training", source)
    return "training" in cells


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
for name in RUNNING:
    xp.record(f"running.{name}", nb[name])

drawn = []
randint = torch.randint


def drawing(low, high, *args, **kwargs):
    """torch.randint, keeping the bounds the training cell draws its batch from."""
    drawn.append((low, high))
    return randint(low, high, *args, **kwargs)


def steps(max_steps):
    """The training loop's `range(max_steps)`: the probe's steps, each recorded once the cell
    has run it."""
    for i in STEPS:
        before = [p.detach().numpy().copy() for p in nb["parameters"]]
        yield i
        if i == STEPS[0]:
            xp.record(f"step{i}.batch_range", np.array(drawn[0]))
        xp.record(f"step{i}.ix", nb["ix"])
        if i == STEPS[0]:
            xp.record(f"step{i}.Xb", nb["Xb"])
            xp.record(f"step{i}.Yb", nb["Yb"])
        xp.record(f"step{i}.bnmeani", nb["bnmeani"])
        xp.record(f"step{i}.bnstdi", nb["bnstdi"])
        xp.record(f"step{i}.loss", nb["loss"])
        grads = [p.grad.numpy() for p in nb["parameters"]]
        if i == STEPS[0]:
            for name, value in zip(NAMES, grads, strict=True):
                xp.record(f"step{i}.grad.{name}", value)
        after = [p.detach().numpy() for p in nb["parameters"]]
        xp.record(f"step{i}.lr", applied_lr(before, after, grads))
        for name, value in zip(NAMES, after, strict=True):
            xp.record(f"step{i}.param.{name}", value)
        for name in RUNNING:
            xp.record(f"step{i}.running.{name}", nb[name])


torch.randint = drawing
nb["range"] = steps
exec(compile(cells["training"], f"{NOTEBOOK}#cell=7", "exec"), nb)
