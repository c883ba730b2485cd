"""Numeric parity probe (`xstack parity`), the source's side (JAX): the code cells of
docs/examples/latent_ode.ipynb, all but the last (`main()`), run in one namespace; then its
functions on small inputs.

Records, in this order:
- `data.ts` and `data.ys`: eight series from `get_data(8, key=PRNGKey(0))` ((8, 20) times,
  (8, 20, 2) values); the port loads the times and each series' first value and integrates
  them with its own data code;
- the initial parameters of `LatentODE(data_size=2, hidden_size=16, latent_size=16,
  width_size=16, depth=2, key=PRNGKey(1))` in PyTorch's layout (`param.*`: the vector field's
  scale and MLP, the GRU cell's weights and its two biases, hidden_to_latent,
  latent_to_hidden's MLP, hidden_to_data); the port loads them;
- `encoder.mean`, `encoder.std`: the GRU encoder's posterior over the latent (8, 16), read
  from each series' last observation to its first;
- `noise`: the standard normal draws of the reparameterisation (8, 16), from PRNGKey(2); the
  port loads them; `latent` = mean + noise * std;
- `decoder.y0` (the ODE's initial state, latent_to_hidden(latent)), `decoder.pred` (the
  decoded solution at each series' own times, Tsit5 at a constant step of 0.4), then
  `loss.per_series` (each series' 0.5 * squared error summed over times and channels plus
  its KL divergence, (8,)) and `loss` (their mean over the batch, main's value);
- `grad.*`: the gradients of that loss;
- `step1.*`: the parameters after one Adam step at main's default learning rate.
"""
import os

import numpy as np
import xstack_parity as xp

NOTEBOOK = os.path.join("docs", "examples", "latent_ode.ipynb")

os.environ.setdefault("MPLBACKEND", "Agg")
nb = xp.notebook_namespace(NOTEBOOK, skip=lambda source: source == "main()")
import equinox as eqx  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import jax.random as jr  # noqa: E402
import optax  # noqa: E402

ts, ys = nb["get_data"](8, key=jr.PRNGKey(0))
xp.record("data.ts", ts)
xp.record("data.ys", ys)

model = nb["LatentODE"](
    data_size=2, hidden_size=16, latent_size=16, width_size=16, depth=2, key=jr.PRNGKey(1)
)


def parameters(model):
    """The model's parameters by the names both sides record them under."""
    named = {"func.scale": model.func.scale}
    for part, mlp in (("func.mlp", model.func.mlp), ("latent_to_hidden", model.latent_to_hidden)):
        for n, layer in enumerate(mlp.layers):
            named[f"{part}.{n}.weight"] = layer.weight
            named[f"{part}.{n}.bias"] = layer.bias
    cell = model.rnn_cell
    for name in ("weight_ih", "weight_hh", "bias", "bias_n"):
        named[f"rnn_cell.{name}"] = getattr(cell, name)
    for part in ("hidden_to_latent", "hidden_to_data"):
        named[f"{part}.weight"] = getattr(model, part).weight
        named[f"{part}.bias"] = getattr(model, part).bias
    return named


for name, value in parameters(model).items():
    xp.record(f"param.{name}", value)

noise = jr.normal(jr.PRNGKey(2), (8, 16))


def encode(model):
    """Each series' posterior mean and std, as `_latent` computes them before its draw."""
    latent_size = model.latent_size

    def one(ts_i, ys_i):
        data = jnp.concatenate([ts_i[:, None], ys_i], axis=1)
        hidden = jnp.zeros((model.hidden_size,))
        for data_i in reversed(data):
            hidden = model.rnn_cell(data_i, hidden)
        context = model.hidden_to_latent(hidden)
        return context[:latent_size], jnp.exp(context[latent_size:])

    return jax.vmap(one)(ts, ys)


def forward(model):
    mean, std = encode(model)
    latent = mean + noise * std
    pred = jax.vmap(model._sample)(ts, latent)
    per_series = jax.vmap(model._loss)(ys, pred, mean, std)
    return jnp.mean(per_series), (mean, std, latent, pred, per_series)


(value, (mean, std, latent, pred, per_series)), grads = eqx.filter_value_and_grad(
    forward, has_aux=True
)(model)
xp.record("encoder.mean", mean)
xp.record("encoder.std", std)
xp.record("noise", noise)
xp.record("latent", latent)
xp.record("decoder.y0", jax.vmap(model.latent_to_hidden)(latent))
xp.record("decoder.pred", pred)
xp.record("loss.per_series", per_series)
xp.record("loss", value)
for name, grad in parameters(grads).items():
    xp.record(f"grad.{name}", grad)

defaults = dict(
    zip(nb["main"].__code__.co_varnames[: nb["main"].__code__.co_argcount], nb["main"].__defaults__)
)
optim = optax.adam(defaults["lr"])
opt_state = optim.init(eqx.filter(model, eqx.is_inexact_array))
updates, opt_state = optim.update(grads, opt_state)
for name, param in parameters(eqx.apply_updates(model, updates)).items():
    xp.record(f"step1.{name}", param)
