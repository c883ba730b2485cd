"""Numeric parity probe (`xstack parity`), the port's side (JAX): the code cells of
lectures/makemore/makemore_part3_bn.ipynb up to the training cell, run in one namespace in the
notebook's folder; then the training cell's definitions (its loop of compiled 10,000-step
chunks left out) and its `step` for i = 0, 1, 99999 and 100000, from the source's initial
parameters (`xstack_parity.load_inputs()`) and on the source's batches: the batch indices
`jax.random.randint` returns inside `step` are the source's. The same names as the source's
probe, in its layouts (see its docstring); the batch's statistics are `forward`'s own: its
running update from zero running statistics (0.001 times the batch's), divided by 0.001.
"""
import os
from unittest import mock

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
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

src = xp.load_inputs()
params = {name: jnp.asarray(src[f"param.{name}"]) for name in NAMES}
running = dict(nb["running"])


def applied_lr(before, after, grads):
    """The learning rate an SGD update applied: sum((p - p') g) / sum(g g)."""
    num = sum(
        np.sum((np.asarray(before[n], np.float64) - np.asarray(after[n])) * np.asarray(grads[n]))
        for n in NAMES
    )
    den = sum(np.sum(np.asarray(grads[n], np.float64) ** 2) for n in NAMES)
    return np.float64(num / den)


xp.record("data.sizes", np.array([len(nb["Xtr"]), len(nb["Xdev"]), len(nb["Xte"])]))
xp.record("data.Xtr.head", nb["Xtr"][:16])
xp.record("data.Ytr.head", nb["Ytr"][:16])
xp.record("param.count", np.array(sum(p.size for p in nb["parameters"].values())))
for name in NAMES:
    xp.record(f"param.{name}", params[name])
for name in RUNNING:
    xp.record(f"running.{name}", running[name])

# The training cell's definitions; its loop (range(0, max_steps, 10000)) runs no chunk.
nb["range"] = lambda *args: ()
exec(compile(cells["training"], f"{NOTEBOOK}#cell=7", "exec"), nb)
del nb["range"]

drawn = []
key = nb["key"]
for i in STEPS:
    ix = jnp.asarray(src[f"step{i}.ix"])

    def source_batch(key, shape, minval, maxval, ix=ix):
        """jax.random.randint inside `step`: the source's batch, keeping the bounds."""
        drawn.append((int(minval), int(maxval)))
        return ix.reshape(shape)

    Xb, Yb = nb["Xtr"][ix], nb["Ytr"][ix]
    zero = {k: jnp.zeros_like(v) for k, v in running.items()}
    _, batch_stats = nb["forward"](params, Xb, Yb, zero)
    grads = jax.grad(lambda p: nb["forward"](p, Xb, Yb, running)[0])(params)
    with mock.patch.object(jax.random, "randint", source_batch):
        (new_params, running, key), loss = nb["step"]((params, running, key), i)
    if i == STEPS[0]:
        xp.record(f"step{i}.batch_range", np.array(drawn[0]))
    xp.record(f"step{i}.ix", ix)
    if i == STEPS[0]:
        xp.record(f"step{i}.Xb", Xb)
        xp.record(f"step{i}.Yb", Yb)
    xp.record(f"step{i}.bnmeani", batch_stats["bnmean_running"] / 0.001)
    xp.record(f"step{i}.bnstdi", batch_stats["bnstd_running"] / 0.001)
    xp.record(f"step{i}.loss", loss)
    if i == STEPS[0]:
        for name in NAMES:
            xp.record(f"step{i}.grad.{name}", grads[name])
    xp.record(f"step{i}.lr", applied_lr(params, new_params, grads))
    params = new_params
    for name in NAMES:
        xp.record(f"step{i}.param.{name}", params[name])
    for name in RUNNING:
        xp.record(f"step{i}.running.{name}", running[name])
