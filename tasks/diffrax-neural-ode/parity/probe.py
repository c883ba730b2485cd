"""Numeric parity probe (`xstack parity`), the source's side (JAX): the code cells of
docs/examples/neural_ode.ipynb, all but the last (`main()`), run in one namespace; then its
functions on small inputs.

Records, in this order:
- `data.ts` and `data.y0` (eight initial conditions drawn by `get_data`), then `data.ys`,
  the eight series `_get_data` integrates from them (the port loads `data.y0` and
  integrates them with its own data code);
- the initial parameters of `NeuralODE(2, 64, 2)`, in PyTorch's layout (`param.out_scale`,
  `param.mlp.N.weight` (out, in) and `param.mlp.N.bias` for the three linear layers N = 0,
  1, 2): the port loads them;
- `vector_field`: the vector field at the 100 points of the first series;
- `forward.stage1`: the model's solution from the eight initial conditions over the first
  10 times (the first stage's window; over all 100 an untrained field's solutions by two
  different 5(4) pairs at rtol 1e-3 part by up to 5e-4, each within its tolerance, so the
  solve is compared where the methods agree to 3e-6);
- `loss.stage1` (the mean squared error over the first 10 times of the eight series) and
  its gradients `grad.*`;
- `step1.*` and `step2.*`: the parameters after one and two steps of the optimiser
  `main` uses, with its default learning rate, on that loss;
- `curriculum.lengths`, `curriculum.batch`: a run of
  `main(dataset_size=64, steps_strategy=(1, 1), plot=False)`, with the series' length in each
  stage and the batch size the data loader is given.
"""
import os
import sys

import numpy as np
import xstack_parity as xp

NOTEBOOK = os.path.join("docs", "examples", "neural_ode.ipynb")

os.environ.setdefault("MPLBACKEND", "Agg")
nb = xp.notebook_namespace(NOTEBOOK, skip=lambda source: source.endswith("main()"))
import equinox as eqx  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import jax.random as jr  # noqa: E402
import optax  # noqa: E402

ts, ys = nb["get_data"](8, key=jr.PRNGKey(0))
xp.record("data.ts", ts)
xp.record("data.y0", ys[:, 0])
xp.record("data.ys", ys)

model = nb["NeuralODE"](2, 64, 2, key=jr.PRNGKey(1))


def parameters(model):
    """The model's parameters by the names the port records them under."""
    named = {"out_scale": model.func.out_scale}
    for n, layer in enumerate(model.func.mlp.layers):
        named[f"mlp.{n}.weight"] = layer.weight
        named[f"mlp.{n}.bias"] = layer.bias
    return named


for name, value in parameters(model).items():
    xp.record(f"param.{name}", value)

xp.record("vector_field", jax.vmap(lambda y: model.func(0.0, y, None))(ys[0]))
xp.record("forward.stage1", jax.vmap(model, in_axes=(None, 0))(ts[:10], ys[:, 0]))


@eqx.filter_value_and_grad
def grad_loss(model, ti, yi):
    y_pred = jax.vmap(model, in_axes=(None, 0))(ti, yi[:, 0])
    return jnp.mean((yi - y_pred) ** 2)


loss, grads = grad_loss(model, ts[:10], ys[:, :10])
xp.record("loss.stage1", loss)
for name, value in parameters(grads).items():
    xp.record(f"grad.{name}", value)

defaults = dict(zip(nb["main"].__code__.co_varnames, nb["main"].__defaults__))
optim = optax.adabelief(defaults["lr"])
opt_state = optim.init(eqx.filter(model, eqx.is_inexact_array))
for step in (1, 2):
    loss, grads = grad_loss(model, ts[:10], ys[:, :10])
    updates, opt_state = optim.update(grads, opt_state)
    model = eqx.apply_updates(model, updates)
    for name, value in parameters(model).items():
        xp.record(f"step{step}.{name}", value)

lengths, batches = [], []
dataloader = nb["dataloader"]


def recording_dataloader(arrays, batch_size, **kwargs):
    """main's data loader, noting the series' length and the batch size of each stage."""
    lengths.append(arrays[0].shape[1])
    batches.append(batch_size)
    return dataloader(arrays, batch_size, **kwargs)


nb["dataloader"] = recording_dataloader
nb["main"](dataset_size=64, steps_strategy=(1, 1), plot=False)
xp.record("curriculum.lengths", np.array(lengths, dtype=np.int64))
xp.record("curriculum.batch", np.array(batches, dtype=np.int64))
sys.stdout.flush()
