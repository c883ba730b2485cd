"""Numeric parity probe (`xstack parity`), the Flax side: the source's batch and parameters
loaded, one training-mode step, the same names recorded in the source's layouts (NCHW,
PyTorch's weight shapes)."""
import jax
import jax.numpy as jnp
import numpy as np
import optax
import xstack_parity as xp

from model import ConvNet

BN = "BatchNorm"  # the class name Flax names the BatchNorm layers after

src = xp.load_inputs()
x = jnp.asarray(src["input.x"]).transpose(0, 2, 3, 1)  # NCHW -> NHWC
y = jnp.asarray(src["input.y"])
xp.record("input.x", np.asarray(x).transpose(0, 3, 1, 2))
xp.record("input.y", y)

# PyTorch name -> (Flax module, Flax parameter, PyTorch layout -> Flax layout, and back).
conv = (lambda w: w.transpose(2, 3, 1, 0), lambda k: k.transpose(3, 2, 0, 1))
dense = (lambda w: w.T, lambda k: k.T)
same = (lambda v: v, lambda v: v)
LAYOUT = {
    "conv1.weight": ("Conv_0", "kernel", conv),
    "conv1.bias": ("Conv_0", "bias", same),
    "bn1.weight": (f"{BN}_0", "scale", same),
    "bn1.bias": (f"{BN}_0", "bias", same),
    "conv2.weight": ("Conv_1", "kernel", conv),
    "conv2.bias": ("Conv_1", "bias", same),
    "bn2.weight": (f"{BN}_1", "scale", same),
    "bn2.bias": (f"{BN}_1", "bias", same),
    "fc1.weight": ("Dense_0", "kernel", dense),
    "fc1.bias": ("Dense_0", "bias", same),
    "bn3.weight": (f"{BN}_2", "scale", same),
    "bn3.bias": (f"{BN}_2", "bias", same),
    "fc2.weight": ("Dense_1", "kernel", dense),
    "fc2.bias": ("Dense_1", "bias", same),
}

model = ConvNet()
variables = jax.jit(lambda k, x: model.init(k, x, train=True))(jax.random.PRNGKey(0), x[:2])
params = jax.tree_util.tree_map(lambda v: v, variables["params"])
for name, (module, leaf, (to_flax, _)) in LAYOUT.items():
    params[module][leaf] = jnp.asarray(to_flax(src[f"param.{name}"]))
for name, (module, leaf, (_, to_torch)) in LAYOUT.items():
    xp.record(f"param.{name}", to_torch(np.asarray(params[module][leaf])))


def loss_fn(params):
    logits, updates = model.apply(
        {"params": params, "batch_stats": variables["batch_stats"]},
        x, train=True, mutable=["batch_stats"],
    )
    loss = optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()
    return loss, (logits, updates["batch_stats"])


(loss, (logits, stats)), grads = jax.jit(jax.value_and_grad(loss_fn, has_aux=True))(params)
xp.record("logits", logits)
xp.record("loss", loss)
for i, bn in enumerate(("bn1", "bn2", "bn3")):
    xp.record(f"{bn}.running_mean", stats[f"{BN}_{i}"]["mean"])
    xp.record(f"{bn}.running_var", stats[f"{BN}_{i}"]["var"])
for name, (module, leaf, (_, to_torch)) in LAYOUT.items():
    xp.record(f"grad.{name}", to_torch(np.asarray(grads[module][leaf])))
