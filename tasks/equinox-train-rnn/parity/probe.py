"""Numeric parity probe (`xstack parity`), the source's side (JAX): the code cells of
docs/examples/train_rnn.ipynb, all but the last (`main()`), run in one namespace; then its
functions on small inputs.

Records, in this order:
- `data.x` (eight spirals from `get_data`, (8, 16, 2): batch, time, channel) and `data.y`;
  the port loads them;
- the initial parameters of `RNN(2, 1, 16)` (`param.cell.weight_ih` (48, 2),
  `param.cell.weight_hh` (48, 16), `param.cell.bias` (48: the reset, update and new gates'
  input biases), `param.cell.bias_n` (16: the new gate's hidden bias), `param.linear.weight`
  (1, 16), `param.bias` (1)); the port loads them;
- `hidden.last`: the hidden state the classifier reads, after the 16 inputs (8, 16);
- `pred` (8, 1), `loss` (the binary cross-entropy main trains with) and its gradients
  (`grad.*`, named as the parameters);
- `step1.*`: the parameters after one step of main's optimiser (optax.adam at main's
  default learning rate).
"""
import os

import xstack_parity as xp

NOTEBOOK = os.path.join("docs", "examples", "train_rnn.ipynb")

nb = xp.notebook_namespace(NOTEBOOK, skip=lambda source: source.startswith("main()"))
import equinox as eqx  # noqa: E402
import jax  # noqa: E402
import jax.lax as lax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import jax.random as jrandom  # noqa: E402
import optax  # noqa: E402

xs, ys = nb["get_data"](8, key=jrandom.PRNGKey(0))
xp.record("data.x", xs)
xp.record("data.y", ys)

model = nb["RNN"](in_size=2, out_size=1, hidden_size=16, key=jrandom.PRNGKey(1))


def parameters(model):
    """The model's parameters by the names both sides record them under."""
    return {
        "cell.weight_ih": model.cell.weight_ih,
        "cell.weight_hh": model.cell.weight_hh,
        "cell.bias": model.cell.bias,
        "cell.bias_n": model.cell.bias_n,
        "linear.weight": model.linear.weight,
        "bias": model.bias,
    }


for name, value in parameters(model).items():
    xp.record(f"param.{name}", value)


def last_hidden(model, x):
    """The hidden state after the inputs, as RNN.__call__ scans its cell."""
    hidden = jnp.zeros((model.hidden_size,))
    out, _ = lax.scan(lambda carry, inp: (model.cell(inp, carry), None), hidden, x)
    return out


xp.record("hidden.last", jax.vmap(last_hidden, in_axes=(None, 0))(model, xs))
xp.record("pred", jax.vmap(model)(xs))


@eqx.filter_value_and_grad
def compute_loss(model, x, y):
    pred_y = jax.vmap(model)(x)
    return -jnp.mean(y * jnp.log(pred_y) + (1 - y) * jnp.log(1 - pred_y))


loss, grads = compute_loss(model, xs, ys)
xp.record("loss", loss)
for name, value in parameters(grads).items():
    xp.record(f"grad.{name}", value)

defaults = dict(zip(nb["main"].__code__.co_varnames, nb["main"].__defaults__))
optim = optax.adam(defaults["learning_rate"])
opt_state = optim.init(eqx.filter(model, eqx.is_array))
updates, opt_state = optim.update(grads, opt_state, eqx.filter(model, eqx.is_array))
model = eqx.apply_updates(model, updates)
for name, value in parameters(model).items():
    xp.record(f"step1.{name}", value)
