"""Numeric parity probe (`xstack parity`), the source's side (JAX): the code cells of
docs/examples/mnist.ipynb run in one namespace from docs/examples/ (where the notebook finds
MNIST), all but the cell that raises on purpose (`# This is an error!`), the first evaluation
and the training; then its model on eight test images.

Records, in this order:
- `data.x` (the first eight test images, normalised as the notebook does, (8, 1, 28, 28)) and
  `data.y` (their labels); the port loads them;
- the initial parameters of `CNN(PRNGKey(1))` in torch's layouts, the port loading each whose
  shape it shares: `param.conv.weight` (3, 1, 4, 4) and `param.conv.bias` (3), then
  `act.conv` (8, 3, 25, 25) and `act.pool` (after the max pool and relu, (8, 3, 24, 24)), then
  `param.linear1.*` (512, 1728), `param.linear2.*` (64, 512), `param.linear3.*` (10, 64), then
  `act.hidden1` (after the sigmoid, (8, 512)), `act.hidden2` (after the relu, (8, 64)) and
  `act.logp` (the log-probabilities, (8, 10));
- `loss` (the notebook's `loss`) and its gradients (`grad.*`, named as the parameters);
- `step1.*`: the parameters after one step of the notebook's optimiser (optax.adamw at
  LEARNING_RATE).
"""
import os

import xstack_parity as xp

# The notebook finds MNIST from its own folder; the probe records from the copy's root, so
# each tensor's location is relative to the copy (probe.py).
here = os.getcwd()
os.chdir(os.path.join("docs", "examples"))
SKIP = ("# This is an error!", "evaluate(model, testloader)", "model = train(")
nb = xp.notebook_namespace("mnist.ipynb", skip=lambda source: source.startswith(SKIP))
os.chdir(here)
import equinox as eqx  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
import optax  # noqa: E402

images = [nb["test_dataset"][i] for i in range(8)]
xs = np.stack([image.numpy() for image, _ in images])
ys = np.array([label for _, label in images], dtype=np.int64)
xp.record("data.x", xs)
xp.record("data.y", ys)

model = nb["CNN"](jax.random.PRNGKey(1))


def parameters(model):
    """The model's parameters by the names both sides record them under, in torch's layouts."""
    conv, linear1, linear2, linear3 = (model.layers[i] for i in (0, 4, 6, 8))
    return {
        "conv.weight": conv.weight,
        "conv.bias": conv.bias.reshape(-1),
        "linear1.weight": linear1.weight,
        "linear1.bias": linear1.bias,
        "linear2.weight": linear2.weight,
        "linear2.bias": linear2.bias,
        "linear3.weight": linear3.weight,
        "linear3.bias": linear3.bias,
    }


def activations(model, x):
    """The outputs the probe compares, for one image, as CNN.__call__ runs its layers."""
    seen = {}
    for index, layer in enumerate(model.layers):
        x = layer(x)
        seen[index] = x
    return seen[0], seen[2], seen[5], seen[7], seen[9]


# The convolution's parameters and what they make first, then the rest: a port whose pooled
# map differs shows it at `act.pool`, before the first Linear that had to change with it.
params = parameters(model)
outs = dict(
    zip(("conv", "pool", "hidden1", "hidden2", "logp"),
        jax.vmap(activations, in_axes=(None, 0))(model, jnp.asarray(xs)))
)
for name in ("conv.weight", "conv.bias"):
    xp.record(f"param.{name}", params[name])
for name in ("conv", "pool"):
    xp.record(f"act.{name}", outs[name])
for name, value in params.items():
    if not name.startswith("conv."):
        xp.record(f"param.{name}", value)
for name in ("hidden1", "hidden2", "logp"):
    xp.record(f"act.{name}", outs[name])

loss, grads = eqx.filter_value_and_grad(nb["loss"])(model, jnp.asarray(xs), jnp.asarray(ys))
xp.record("loss", loss)
for name, value in parameters(grads).items():
    xp.record(f"grad.{name}", value)

optim = optax.adamw(nb["LEARNING_RATE"])
opt_state = optim.init(eqx.filter(model, eqx.is_array))
updates, opt_state = optim.update(grads, opt_state, eqx.filter(model, eqx.is_array))
model = eqx.apply_updates(model, updates)
for name, value in parameters(model).items():
    xp.record(f"step1.{name}", value)
