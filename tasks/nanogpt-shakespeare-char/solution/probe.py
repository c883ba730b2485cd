"""Numeric parity probe (`xstack parity`), the JAX side: train.py run with the source probe's
tiny model up to its first evaluation, its get_batch drawn from 8 times per split, then the
source's batch and parameters loaded and one forward and backward pass of the model, the
same names recorded in the source's layouts (Linear weights (out, in), as PyTorch keeps
them; the parameters' names are those of the source's model.named_parameters())."""
import runpy
import sys

import jax
import jax.numpy as jnp
import numpy as np
import xstack_parity as xp

TINY = ["--device=cpu", "--compile=False", "--eval_only=True", "--eval_iters=1",
        "--block_size=16", "--batch_size=4", "--n_layer=2", "--n_head=2", "--n_embd=32",
        "--dropout=0.0"]

sys.argv = ["train.py", "config/train_shakespeare_char.py", *TINY]
train = runpy.run_path("train.py", run_name="__main__")
get_batch = train["get_batch"]

for split in ("train", "val"):
    windows, follows = set(), True
    for _ in range(8):
        x, y = (np.asarray(b).astype(np.int64) for b in get_batch(split))
        windows.update(row.tobytes() for row in x)
        follows = follows and bool((x[:, 1:] == y[:, :-1]).all())
    xp.record(f"batch.{split}.distinct_windows", np.int64(len(windows)), at=get_batch)
    xp.record(f"batch.{split}.y_follows_x", np.int64(follows), at=get_batch)

src = xp.load_inputs()
x, y = (jnp.asarray(src[n], jnp.int32) for n in ("input.x", "input.y"))
xp.record("input.x", src["input.x"])
xp.record("input.y", src["input.y"])
torch_names = [n[len("param."):] for n in src if n.startswith("param.")]


def leaf(tree, name):
    """The (container, key) of the source's parameter `name` in the port's pytree, and
    whether the port keeps it transposed (Linear weights: (in, out) here)."""
    parts = name.removeprefix("transformer.").split(".")
    if parts in (["wte", "weight"], ["wpe", "weight"]):
        return tree, parts[0], False
    node = tree
    for part in parts[:-1]:
        node = node[int(part)] if part.isdigit() else node[part]
    return node, parts[-1], node[parts[-1]].ndim == 2


def to_torch(tree):
    """The pytree's leaves by the source's names, in the source's layouts."""
    out = {}
    for name in torch_names:
        node, key, transposed = leaf(tree, name)
        out[name] = node[key].T if transposed else node[key]
    return out


params = jax.tree_util.tree_map(np.array, train["params"])
for name in torch_names:
    node, key, transposed = leaf(params, name)
    value = src[f"param.{name}"]
    node[key] = value.T if transposed else value
params = jax.tree_util.tree_map(jnp.asarray, params)
for name, value in to_torch(params).items():
    xp.record(f"param.{name}", value)



def loss_and_logits(params):
    logits, loss = train["model"](params, x, y)
    return loss, logits


# One compiled forward and backward pass (op by op, JAX would compile every operation).
(loss, logits), grads = jax.jit(jax.value_and_grad(loss_and_logits, has_aux=True))(params)
xp.record("logits", logits)
xp.record("loss", loss)
for name, value in to_torch(grads).items():
    xp.record(f"grad.{name}", value)
