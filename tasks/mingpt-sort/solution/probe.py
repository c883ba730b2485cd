"""Numeric parity probe (`xstack parity`), the port's side (JAX): the code cells of demo.ipynb
up to the training cell, run in one namespace; then, from the source's initial parameters and
on the source's batch (`xstack_parity.load_inputs()`), with dropout off, the port's forward
pass, loss (the model called with targets), gradients, clipping and the optimiser
`configure_optimizers` builds, for one step. The same names as the source's probe, in its
layouts (see its docstring).
"""
import numpy as np
import xstack_parity as xp

NOTEBOOK = "demo.ipynb"
TRAINING = "def batch_end_callback"

cells = {}


def skip(source):
    """Leaves out the training cell and every cell after it."""
    if source.startswith(TRAINING):
        cells.setdefault("training", source)
    return "training" in cells


nb = xp.notebook_namespace(NOTEBOOK, skip)
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import optax  # noqa: E402

model, trainer, dataset = nb["model"], nb["trainer"], nb["train_dataset"]
n = dataset.length

samples = [dataset[i] for i in range(64)]
x = np.stack([np.asarray(a) for a, _ in samples])
y = np.stack([np.asarray(b) for _, b in samples])
masked = bool((y[:, : n - 1] == -1).all())
sorted_ok = bool((y[:, -n:] == np.sort(x[:, :n], axis=1)).all())
shifted = bool(((x[:, 1:] == y[:, :-1]) | (y[:, :-1] == -1)).all())
xp.record("data.checks", np.array([masked, sorted_ok, shifted], dtype=np.int64))

src = xp.load_inputs()
names = [k[len("param."):] for k in src if k.startswith("param.") and k != "param.count"]
assert set(names) == set(model.params), sorted(set(names) ^ set(model.params))
xp.record("param.count", np.array(sum(p.size for k, p in model.params.items() if k.startswith("transformer."))))
model.params = {name: jnp.asarray(src[f"param.{name}"]) for name in names}
for name in names:
    xp.record(f"param.{name}", model.params[name])

x, y = jnp.asarray(src["batch.x"]), jnp.asarray(src["batch.y"])
xp.record("batch.x", x)
xp.record("batch.y", y)

model.eval()
logits, loss = model(x, y)
xp.record("eval.logits", logits)
xp.record("eval.loss", loss)


def loss_of(params):
    """The loss the model computes for (x, y) with these parameters, dropout off."""
    saved = model.params
    model.params = params
    try:
        return model(x, y)[1]
    finally:
        model.params = saved


grads = jax.grad(loss_of)(model.params)
for name in names:
    xp.record(f"grad.{name}", grads[name])
xp.record("grad.norm", optax.global_norm(grads))
optimizer = model.configure_optimizers(trainer.config)
updates, _ = optimizer.update(grads, optimizer.init(model.params), model.params)
params = optax.apply_updates(model.params, updates)
for name in names:
    xp.record(f"step.param.{name}", params[name])
