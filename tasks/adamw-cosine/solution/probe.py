"""Numeric parity probe (`xstack parity`), the JAX side: the source's batch and parameters
loaded, the forward pass, the gradients of the loss, and two steps of train.py's optimizer
and training step, recorded in the source's layouts ((out, in) weights, nn.Sequential's
names)."""
import math

import jax
import jax.numpy as jnp
import numpy as np
import optax
import xstack_parity as xp

from train import BATCH_SIZE, EPOCHS, forward, loss_fn, make_optimizer

LAYERS = ["0", "2", "4"]  # nn.Sequential's indexes of the three Linear layers

src = xp.load_inputs()
x = jnp.asarray(src["input.x"])
y = jnp.asarray(src["input.y"]).astype(jnp.int32)
xp.record("input.x", x)
xp.record("input.y", src["input.y"])


def record_params(prefix, params):
    for layer, p in zip(LAYERS, params):
        xp.record(f"{prefix}.{layer}.weight", np.asarray(p["w"]).T)
        xp.record(f"{prefix}.{layer}.bias", p["b"])


params = [
    {"w": jnp.asarray(src[f"param.{l}.weight"]).T, "b": jnp.asarray(src[f"param.{l}.bias"])}
    for l in LAYERS
]
record_params("param", params)
logits = forward(params, x)
xp.record("logits", logits)
xp.record("loss", loss_fn(params, x, y))
record_params("grad", jax.jit(jax.grad(loss_fn))(params, x, y))

optimizer = make_optimizer(EPOCHS * math.ceil(1347 / BATCH_SIZE))
opt_state = optimizer.init(params)


@jax.jit
def train_step(params, opt_state):
    # As train.py's train_step.
    grads = jax.grad(loss_fn)(params, x, y)
    updates, opt_state = optimizer.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state


for _ in range(2):
    params, opt_state = train_step(params, opt_state)
record_params("step2", params)
