"""Numeric parity probe (`xstack parity`), the port's side (JAX): the code cells of
lectures/makemore/makemore_part5_cnn1.ipynb up to the training cell, run in one namespace in
the notebook's folder; then the training cell's definitions (its loop of compiled 10,000-step
chunks left out) and its `step` for i = 0, 1, 149999 and 150000, from the source's initial
parameters (`xstack_parity.load_inputs()`) and on the source's batches: the batch indices
`jax.random.randint` returns inside `step` are the source's. The same names as the source's
probe, in its layouts (see its docstring); the port's parameters and running statistics are
lists with one dict per layer, so `param.3.gamma` is `params[3]['gamma']`.
"""
import os
from unittest import mock

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
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

src = xp.load_inputs()
params, state = nb["params"], nb["state"]


def named(tree, keys):
    """The entries `keys` ('weight', 'bias', 'gamma', 'beta' or the running statistics) of
    the per-layer dicts of `tree`, by layer index and name."""
    return {
        f"{index}.{key}": layer[key]
        for index, layer in enumerate(tree)
        for key in keys
        if key in layer
    }


PARAMS = ("weight", "bias", "gamma", "beta")
BUFFERS = ("running_mean", "running_var")


def applied_lr(before, after, grads):
    """The learning rate an SGD update applied: sum((p - p') g) / sum(g g)."""
    before, after, grads = (
        [np.asarray(x, dtype=np.float64) for x in jax.tree_util.tree_leaves(t)]
        for t in (before, after, grads)
    )
    num = sum(np.sum((b - a) * g) for b, a, g in zip(before, after, grads))
    den = sum(np.sum(g**2) for g in grads)
    return np.float64(num / den)


xp.record("data.sizes", np.array([len(nb["Xtr"]), len(nb["Xdev"]), len(nb["Xte"])]))
xp.record("data.Xtr.head", nb["Xtr"][:16])
xp.record("data.Ytr.head", nb["Ytr"][:16])
xp.record("param.count", np.array(sum(p.size for p in jax.tree_util.tree_leaves(params))))
for index, layer in enumerate(params):
    for key in layer:
        layer[key] = jnp.asarray(src[f"param.{index}.{key}"])
for name, value in named(params, PARAMS).items():
    xp.record(f"param.{name}", value)
for name, value in named(state, BUFFERS).items():
    xp.record(f"buffer.{name}", value)

# The training cell's definitions; its loop (range(0, max_steps, 10000)) runs no chunk.
nb["range"] = lambda *args: ()
exec(compile(cells["training"], f"{NOTEBOOK}#cell=10", "exec"), nb)
del nb["range"]

drawn = []
key = nb["batch_key"]
for i in STEPS:
    ix = jnp.asarray(src[f"step{i}.ix"])

    def source_batch(key, shape, minval, maxval, ix=ix):
        """jax.random.randint inside `step`: the source's batch, keeping the bounds."""
        drawn.append((int(minval), int(maxval)))
        return ix.reshape(shape)

    Xb, Yb = nb["Xtr"][ix], nb["Ytr"][ix]
    logits, _ = nb["model"](params, state, Xb, True)
    _, grads = jax.value_and_grad(nb["loss_fn"], has_aux=True)(params, state, Xb, Yb)
    with mock.patch.object(jax.random, "randint", source_batch):
        (new_params, state, key), loss = nb["step"]((params, state, key), i)
    if i == STEPS[0]:
        xp.record(f"step{i}.batch_range", np.array(drawn[0]))
    xp.record(f"step{i}.ix", ix)
    if i == STEPS[0]:
        xp.record(f"step{i}.Xb", Xb)
        xp.record(f"step{i}.Yb", Yb)
        xp.record(f"step{i}.logits", logits)
    xp.record(f"step{i}.loss", loss)
    if i == STEPS[0]:
        for name, value in named(grads, PARAMS).items():
            xp.record(f"step{i}.grad.{name}", value)
    xp.record(f"step{i}.lr", applied_lr(params, new_params, grads))
    params = new_params
    for name, value in named(params, PARAMS).items():
        xp.record(f"step{i}.param.{name}", value)
    for name, value in named(state, BUFFERS).items():
        xp.record(f"step{i}.buffer.{name}", value)
