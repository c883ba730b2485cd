"""Numeric parity probe (`xstack parity`), the port's side (JAX): the code cells of
lectures/makemore/makemore_part2_mlp.ipynb that form the experiment up to the training cell
(0 to 6 and 21 to 26; the sketch, cells 7 to 20, left out), run in one namespace in the
notebook's folder; then the training cell's definitions (its loop of compiled 10,000-step
chunks left out) and its `step` for i = 0, 1, 99999 and 100000, from the source's initial
parameters (`xstack_parity.load_inputs()`) and on the source's batches: the batch indices
`jax.random.randint` returns inside `step` are the source's. The same names as the source's
probe, in its layouts (see its docstring).
"""
import os
from unittest import mock

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
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

src = xp.load_inputs()
params = [jnp.asarray(src[f"param.{name}"]) for name in NAMES]


def applied_lr(before, after, grads):
    """The learning rate an SGD update applied: sum((p - p') g) / sum(g g)."""
    num = sum(
        np.sum((np.asarray(b, np.float64) - np.asarray(a)) * np.asarray(g))
        for b, a, g in zip(before, after, grads)
    )
    den = sum(np.sum(np.asarray(g, np.float64) ** 2) for g in grads)
    return np.float64(num / den)


xp.record("data.sizes", np.array([len(nb["Xtr"]), len(nb["Xdev"]), len(nb["Xte"])]))
xp.record("data.Xtr.head", nb["Xtr"][:16])
xp.record("data.Ytr.head", nb["Ytr"][:16])
xp.record("param.count", np.array(sum(p.size for p in nb["parameters"])))
for name, value in zip(NAMES, params, strict=True):
    xp.record(f"param.{name}", value)

# The training cell's definitions; its loop (range(0, 200000, 10000)) runs no chunk.
nb["range"] = lambda *args: ()
exec(compile(cells["training"], f"{NOTEBOOK}#cell={TRAINING}", "exec"), nb)
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
    grads = jax.grad(nb["loss_of"])(params, Xb, Yb)
    with mock.patch.object(jax.random, "randint", source_batch):
        (new_params, key), loss = nb["step"]((params, key), i)
    if i == STEPS[0]:
        xp.record(f"step{i}.batch_range", np.array(drawn[0]))
    xp.record(f"step{i}.ix", ix)
    xp.record(f"step{i}.loss", loss)
    if i == STEPS[0]:
        for name, value in zip(NAMES, grads, strict=True):
            xp.record(f"step{i}.grad.{name}", value)
    xp.record(f"step{i}.lr", applied_lr(params, new_params, grads))
    params = new_params
    for name, value in zip(NAMES, params, strict=True):
        xp.record(f"step{i}.param.{name}", value)
