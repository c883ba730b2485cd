"""Numeric parity probe (`xstack parity`), the JAX side: makemore.py run for one training step
as the source's probe runs it, then the same eight names encoded by its CharDataset, the
source's parameters loaded by name (the port keeps PyTorch's names and layouts), the logits,
the loss and the gradients of one forward and backward pass, and two steps of the run's own
optax optimizer from a fresh state on the source's gradients (then twice those), recorded
under the source's names."""
import os
import runpy
import sys

import jax
import jax.numpy as jnp
import numpy as np
import optax
import xstack_parity as xp

sys.argv = ["makemore.py", "-i", "names.txt", "-o", os.path.join(".xstack-parity", "run"),
            "--max-steps", "1", "--num-workers", "0"]
run = runpy.run_path("makemore.py", run_name="__main__")
CharDataset, model, optimizer = run["CharDataset"], run["model"], run["optimizer"]
train_dataset = run["train_dataset"]

with open("names.txt") as f:
    words = [w.strip() for w in f.read().splitlines() if w.strip()][:8]
ds = CharDataset(words, train_dataset.chars, train_dataset.max_word_length)
X = np.stack([ds[i][0] for i in range(len(words))]).astype(np.int64)
Y = np.stack([ds[i][1] for i in range(len(words))]).astype(np.int64)
xp.record("data.x", X, at=CharDataset.__getitem__)
xp.record("data.y", Y, at=CharDataset.__getitem__)

src = xp.load_inputs()
names = [n[len("param."):] for n in src if n.startswith("param.")]
params = {n: jnp.asarray(src[f"param.{n}"]) for n in names}
for n in names:
    xp.record(f"param.{n}", params[n])

# the port's model on the source's batch (its own encoding is compared above)
Xj, Yj = jnp.asarray(src["data.x"], jnp.int32), jnp.asarray(src["data.y"], jnp.int32)


def loss_and_logits(p):
    logits, loss = model(p, Xj, Yj)
    return loss, logits


grad_fn = jax.jit(jax.value_and_grad(loss_and_logits, has_aux=True))
(loss, logits), grads = grad_fn(params)
xp.record("logits", logits, at=type(model).__call__)
xp.record("loss", loss, at=type(model).__call__)
for n in names:
    xp.record(f"grad.{n}", grads[n])

# the run's optimizer, fresh, for two steps on the source's gradients, then twice those
grads = {n: jnp.asarray(src[f"grad.{n}"]) for n in names}
state = optimizer.init(params)
for k in (1, 2):
    updates, state = optimizer.update({n: g * k for n, g in grads.items()}, state, params)
    new = optax.apply_updates(params, updates)
    for n in names:
        xp.record(f"adamw.step{k}.{n}", new[n] - params[n])
    params = new
