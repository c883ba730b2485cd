"""Numeric parity probe (`xstack parity`), the source's side (PyTorch): the code cells of
lectures/makemore/makemore_part5_cnn1.ipynb up to the training cell (the data, the layers,
torch.manual_seed(42) and the model), run in one namespace in the notebook's folder; then the
training cell itself for four of its steps, i = 0, 1, 149999 and 150000: its loop's `range` is
handed those four, so each step is the cell's own code (batch, forward, backward, the step
decay's learning rate, SGD) applied to the parameters the previous one left.

Records, in this order:
- `data.sizes` (the train, val and test examples), `data.Xtr.head` and `data.Ytr.head` (the
  first 16 training examples);
- `param.count` (76,579) and the initial parameters by layer index and name (`param.0.weight`
  the embedding, `param.2.weight` the first Linear, `param.3.gamma`, ... `param.13.bias`), in
  the notebook's layout (Linear weights fan_in x fan_out); the port loads them;
- `buffer.3.running_mean` ... `buffer.11.running_var`: the BatchNorm running statistics at
  init, flattened;
- `step0.batch_range`: the bounds the batch indices are drawn from (torch.randint(0, N));
- for each step i: `step{i}.ix` (the batch's indices; the port loads them), then for step 0
  `step0.Xb`, `step0.Yb` and `step0.logits`; `step{i}.loss`; for step 0 the gradients
  (`step0.grad.*`); `step{i}.lr`, the learning rate the update applied (sum((p - p') g) /
  sum(g g) over every parameter: 0.1 before step 150,000, 0.01 from it on); the parameters
  after the update (`step{i}.param.*`) and the running statistics after the forward
  (`step{i}.buffer.*`).
"""
import os

import numpy as np
import xstack_parity as xp

FOLDER = os.path.join("lectures", "makemore")
NOTEBOOK = os.path.abspath(os.path.join(FOLDER, "makemore_part5_cnn1.ipynb"))
TRAINING = "# same optimization as last time"
STEPS = (0, 1, 149999, 150000)

cells = {}


def skip(source):
    """Leaves out the training cell (kept to run below) and every cell after it."""
    if source.startswith(TRAINING):
        cells["training"] = source
    return "training" in cells


here = os.getcwd()
os.chdir(FOLDER)
nb = xp.notebook_namespace(NOTEBOOK, skip)
os.chdir(here)
import torch  # noqa: E402

torch.set_num_threads(1)
model = nb["model"]


def named(values):
    """`values` (one per parameter, in model.parameters() order) by layer index and name."""
    names = []
    for index, layer in enumerate(model.layers):
        for attribute in ("weight", "bias", "gamma", "beta"):
            value = getattr(layer, attribute, None)
            if isinstance(value, torch.Tensor):
                names.append(f"{index}.{attribute}")
    return dict(zip(names, values, strict=True))


def buffers():
    """The BatchNorm running statistics by layer index, flattened."""
    out = {}
    for index, layer in enumerate(model.layers):
        if hasattr(layer, "running_mean"):
            out[f"{index}.running_mean"] = layer.running_mean.reshape(-1)
            out[f"{index}.running_var"] = layer.running_var.reshape(-1)
    return out


def applied_lr(before, after, grads):
    """The learning rate an SGD update applied: sum((p - p') g) / sum(g g)."""
    num = sum(np.sum((b.astype(np.float64) - a) * g) for b, a, g in zip(before, after, grads))
    den = sum(np.sum(g.astype(np.float64) ** 2) for g in grads)
    return np.float64(num / den)


xp.record("data.sizes", np.array([len(nb["Xtr"]), len(nb["Xdev"]), len(nb["Xte"])]))
xp.record("data.Xtr.head", nb["Xtr"][:16])
xp.record("data.Ytr.head", nb["Ytr"][:16])
xp.record("param.count", np.array(sum(p.nelement() for p in nb["parameters"])))
for name, value in named(nb["parameters"]).items():
    xp.record(f"param.{name}", value)
for name, value in buffers().items():
    xp.record(f"buffer.{name}", value)

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
            xp.record(f"step{i}.logits", nb["logits"])
        xp.record(f"step{i}.loss", nb["loss"])
        grads = [p.grad.numpy() for p in nb["parameters"]]
        if i == STEPS[0]:
            for name, value in named(grads).items():
                xp.record(f"step{i}.grad.{name}", value)
        after = [p.detach().numpy() for p in nb["parameters"]]
        xp.record(f"step{i}.lr", applied_lr(before, after, grads))
        for name, value in named(after).items():
            xp.record(f"step{i}.param.{name}", value)
        for name, value in buffers().items():
            xp.record(f"step{i}.buffer.{name}", value)


torch.randint = drawing
nb["range"] = steps
exec(compile(cells["training"], f"{NOTEBOOK}#cell=10", "exec"), nb)
