"""Numeric parity probe (`xstack parity`), the source's side (JAX): the code cells of
docs/examples/neural_cde.ipynb, all but the last (`main()`), run in one namespace; then its
functions on small inputs.

Records, in this order:
- `data.ts` (the 100 times), `data.values` (eight series from `get_data`, read off their
  interpolation at the times: (8, 100, 3), time first among the channels) and `data.labels`;
  the port loads them and interpolates them with its own code;
- `control.midpoints` and `control.derivative`: each series' interpolated path and its
  derivative halfway between consecutive times (8, 99, 3);
- the initial parameters of `NeuralCDE(3, 8, 128, 1)` in PyTorch's layout
  (`param.initial.N.*`, `param.func.N.*` for the linear layers N = 0, 1 of the two MLPs,
  `param.linear.*`); the port loads them;
- `y0` (the initial hidden states, (8, 8)), `vector_field` (the CDE's matrix at them, (8, 8,
  3)), `pred` (the eight predictions), `loss` and `accuracy` (main's binary cross-entropy and
  accuracy) and the gradients `grad.*` of the loss;
- `step1.*`: the parameters after one Adam step at main's default learning rate;
- then `main(steps=2)` run on those eight series (for training and testing, the whole batch
  every step) from those initial parameters: `optimizer.lr`, the learning rate main gives its
  optimiser, and `main.grad1.*`, `main.grad2.*`, the gradients its optimiser is handed at
  each of the two steps (the second, of the loss after one step; a port that never clears
  torch's accumulated gradients hands it the sum of both).
"""
import os
import types

import numpy as np
import xstack_parity as xp

NOTEBOOK = os.path.join("docs", "examples", "neural_cde.ipynb")

os.environ.setdefault("MPLBACKEND", "Agg")
nb = xp.notebook_namespace(NOTEBOOK, skip=lambda source: source == "main()")
import diffrax  # noqa: E402
import equinox as eqx  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import jax.random as jr  # noqa: E402
import optax  # noqa: E402

ts, coeffs, labels, data_size = nb["get_data"](8, False, key=jr.PRNGKey(0))
controls = [diffrax.CubicInterpolation(ts[i], tuple(c[i] for c in coeffs)) for i in range(8)]
times = ts[0]
midpoints = (times[:-1] + times[1:]) / 2
xp.record("data.ts", times)
xp.record("data.values", jnp.stack([jax.vmap(c.evaluate)(times) for c in controls]))
xp.record("data.labels", labels)
xp.record("control.midpoints", jnp.stack([jax.vmap(c.evaluate)(midpoints) for c in controls]))
xp.record("control.derivative", jnp.stack([jax.vmap(c.derivative)(midpoints) for c in controls]))

model = nb["NeuralCDE"](data_size, 8, 128, 1, key=jr.PRNGKey(1))


def parameters(model):
    """The model's parameters by the names both sides record them under."""
    named = {}
    for part, mlp in (("initial", model.initial), ("func", model.func.mlp)):
        for n, layer in enumerate(mlp.layers):
            named[f"{part}.{n}.weight"] = layer.weight
            named[f"{part}.{n}.bias"] = layer.bias
    named["linear.weight"] = model.linear.weight
    named["linear.bias"] = model.linear.bias
    return named


for name, value in parameters(model).items():
    xp.record(f"param.{name}", value)

y0 = jnp.stack([model.initial(c.evaluate(times[0])) for c in controls])
xp.record("y0", y0)
xp.record("vector_field", jax.vmap(lambda y: model.func(times[0], y, None))(y0))


def loss(model):
    pred = jax.vmap(model)(ts, coeffs)
    bxe = -jnp.mean(labels * jnp.log(pred) + (1 - labels) * jnp.log(1 - pred))
    return bxe, (pred, jnp.mean((pred > 0.5) == (labels == 1)))


(bxe, (pred, acc)), grads = eqx.filter_value_and_grad(loss, has_aux=True)(model)
xp.record("pred", pred)
xp.record("loss", bxe)
xp.record("accuracy", acc)
for name, value in parameters(grads).items():
    xp.record(f"grad.{name}", value)

defaults = dict(zip(nb["main"].__code__.co_varnames, nb["main"].__defaults__))
optim = optax.adam(defaults["lr"])
opt_state = optim.init(eqx.filter(model, eqx.is_inexact_array))
updates, opt_state = optim.update(grads, opt_state)
for name, value in parameters(eqx.apply_updates(model, updates)).items():
    xp.record(f"step1.{name}", value)

rates = []
seen = []


def recording_adam(learning_rate, *args, **kwargs):
    """optax.adam, noting the learning rate main gives it and the gradients of each step."""
    rates.append(learning_rate)
    inner = optax.adam(learning_rate, *args, **kwargs)

    def update(grads, state, params=None):
        seen.append(grads)
        return inner.update(grads, state, params)

    return optax.GradientTransformation(inner.init, update)


class EqxWithoutJit:
    """equinox, with filter_jit left out, so that main's steps hand the optimiser arrays."""

    def __getattr__(self, name):
        return (lambda f: f) if name == "filter_jit" else getattr(eqx, name)


def eight_series(dataset_size, add_noise, *, key):
    """main's data: the eight series above, for training and for testing."""
    return ts, coeffs, labels, data_size


def whole_batch(arrays, batch_size, *, key):
    """main's batches: the eight series, every step."""
    while True:
        yield arrays


nb["optax"] = types.SimpleNamespace(adam=recording_adam)
nb["eqx"] = EqxWithoutJit()
nb["get_data"] = eight_series
nb["dataloader"] = whole_batch
nb["NeuralCDE"] = lambda *args, key: model
nb["main"](steps=2)
xp.record("optimizer.lr", np.array(rates, dtype=np.float64))
for step, grads in enumerate(seen, start=1):
    for name, value in parameters(grads).items():
        xp.record(f"main.grad{step}.{name}", value)
