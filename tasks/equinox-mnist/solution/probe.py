"""Numeric parity probe (`xstack parity`), the port's side (PyTorch): the code cells of
docs/examples/mnist.ipynb run in one namespace from docs/examples/, all but the cell kept
from the source's error demonstration, the first evaluation and the training; then its model
on the source's eight test images and initial parameters (`xstack_parity.load_inputs()`), the
same names as the source's probe (see its docstring). The model's layers are found by kind:
its Conv2d and its three Linear layers in order; a parameter whose shape differs from the
source's is left as the port made it (and differs). `act.pool` is the first Linear's input as
(images, 3, side, side); `act.hidden1` and `act.hidden2` the second and third Linear's inputs.
`step1.*` comes from the notebook's own optimiser (`optim`: its class, learning rate, betas,
eps, weight decay and amsgrad).
"""
import math
import os

import xstack_parity as xp

# The notebook finds MNIST from its own folder; the probe records from the copy's root, so
# each tensor's location is relative to the copy (probe.py).
here = os.getcwd()
os.chdir(os.path.join("docs", "examples"))
SKIP = ("# This is an error!", "# In PyTorch the parameters", "evaluate(model, testloader)",
        "model = train(")
nb = xp.notebook_namespace("mnist.ipynb", skip=lambda source: source.startswith(SKIP))
os.chdir(here)
import torch  # noqa: E402
from torch import nn  # noqa: E402

torch.set_num_threads(1)
src = xp.load_inputs()
xs, ys = torch.from_numpy(src["data.x"]), torch.from_numpy(src["data.y"])
xp.record("data.x", xs)
xp.record("data.y", ys)

model = nb["CNN"]()
(conv,) = [m for m in model.modules() if isinstance(m, nn.Conv2d)]
linear1, linear2, linear3 = [m for m in model.modules() if isinstance(m, nn.Linear)]
layers = {"conv": conv, "linear1": linear1, "linear2": linear2, "linear3": linear3}


def parameters(pick):
    """The parameters (or, with `pick`, their gradients) by the source's names."""
    return {
        f"{layer}.{kind}": pick(getattr(module, kind))
        for layer, module in layers.items()
        for kind in ("weight", "bias")
    }


with torch.no_grad():
    for name, param in parameters(lambda p: p).items():
        value = torch.from_numpy(src[f"param.{name}"])
        if value.shape == param.shape:
            param.copy_(value)

seen = {}
for name, module in (("pool", linear1), ("hidden1", linear2), ("hidden2", linear3)):
    module.register_forward_pre_hook(lambda m, inputs, name=name: seen.__setitem__(name, inputs[0]))
conv.register_forward_hook(lambda m, inputs, output: seen.__setitem__("conv", output))
logp = model(xs)
pooled = seen["pool"]
side = math.isqrt(pooled[0].numel() // 3)
seen["pool"] = pooled.reshape(len(xs), 3, side, side)
seen["logp"] = logp

params = parameters(lambda p: p)
for name in ("conv.weight", "conv.bias"):
    xp.record(f"param.{name}", params[name])
for name in ("conv", "pool"):
    xp.record(f"act.{name}", seen[name])
for name, value in params.items():
    if not name.startswith("conv."):
        xp.record(f"param.{name}", value)
for name in ("hidden1", "hidden2", "logp"):
    xp.record(f"act.{name}", seen[name])

loss = nb["loss"](model, xs, ys)
loss.backward()
xp.record("loss", loss)
for name, value in parameters(lambda p: p.grad).items():
    xp.record(f"grad.{name}", value)

# The notebook's own optimiser, its class and settings, on the probe's model.
settings = ("lr", "betas", "eps", "weight_decay", "amsgrad")
defaults = nb["optim"].defaults
optim = type(nb["optim"])(model.parameters(), **{k: defaults[k] for k in settings if k in defaults})
optim.step()
for name, value in parameters(lambda p: p).items():
    xp.record(f"step1.{name}", value)
