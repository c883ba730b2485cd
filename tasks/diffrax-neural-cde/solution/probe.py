"""Numeric parity probe (`xstack parity`), the port's side (PyTorch): the code cells of
docs/examples/neural_cde.ipynb, all but the last (`main()`), run in one namespace; then its
functions on the source's series and initial parameters (`xstack_parity.load_inputs()`),
the same names as the source's probe in its layouts (see its docstring): the series'
interpolation (`interpolation_coeffs`, `make_control`) at the midpoints and its derivative,
the initial hidden states, the vector field, the predictions, loss, accuracy and gradients,
the parameters after one Adam step, then main(steps=2) on those series from those parameters:
the learning rate it gives torch.optim.Adam and the gradients Adam steps on at each step.
"""
import os

import numpy as np
import xstack_parity as xp

NOTEBOOK = os.path.join("docs", "examples", "neural_cde.ipynb")

os.environ.setdefault("MPLBACKEND", "Agg")
nb = xp.notebook_namespace(NOTEBOOK, skip=lambda source: source == "main()")
import torch  # noqa: E402

torch.set_num_threads(1)
src = xp.load_inputs()
times = torch.from_numpy(src["data.ts"])
values = torch.from_numpy(src["data.values"])
labels = torch.from_numpy(src["data.labels"])
xp.record("data.ts", times)
xp.record("data.values", values)
xp.record("data.labels", labels)
coeffs = nb["interpolation_coeffs"](times, values)
control = nb["make_control"](times, coeffs)
midpoints = (times[:-1] + times[1:]) / 2
xp.record("control.midpoints", torch.stack([control.evaluate(t) for t in midpoints], dim=1))
xp.record("control.derivative", torch.stack([control.derivative(t) for t in midpoints], dim=1))

model = nb["NeuralCDE"](values.shape[-1], 8, 128, 1)


def linears(module):
    return [m for m in module if isinstance(m, torch.nn.Linear)]


def parameters(pick):
    """The parameters (or, with `pick`, their gradients) by the source's names."""
    named = {}
    for part, mlp in (("initial", model.initial), ("func", model.func.mlp)):
        for n, layer in enumerate(linears(mlp)):
            named[f"{part}.{n}.weight"] = pick(layer.weight)
            named[f"{part}.{n}.bias"] = pick(layer.bias)
    named["linear.weight"] = pick(model.linear.weight)
    named["linear.bias"] = pick(model.linear.bias)
    return named


with torch.no_grad():
    for name, p in parameters(lambda p: p).items():
        p.copy_(torch.from_numpy(src[f"param.{name}"]))
for name, value in parameters(lambda p: p).items():
    xp.record(f"param.{name}", value)

with torch.no_grad():
    y0 = model.initial(control.evaluate(times[0]))
    xp.record("y0", y0)
    xp.record("vector_field", model.func(times[0], y0))

pred = model(times, coeffs)
bxe = -torch.mean(labels * torch.log(pred) + (1 - labels) * torch.log(1 - pred))
bxe.backward()
xp.record("pred", pred)
xp.record("loss", bxe)
xp.record("accuracy", torch.mean(((pred > 0.5) == (labels == 1)).float()))
for name, value in parameters(lambda p: p.grad).items():
    xp.record(f"grad.{name}", value)

defaults = dict(zip(nb["main"].__code__.co_varnames, nb["main"].__defaults__))
torch.optim.Adam(model.parameters(), lr=defaults["lr"]).step()
for name, value in parameters(lambda p: p).items():
    xp.record(f"step1.{name}", value)

rates = []
seen = []
fresh = nb["NeuralCDE"](values.shape[-1], 8, 128, 1)
names = {}
with torch.no_grad():
    for part, mlp in (("initial", fresh.initial), ("func", fresh.func.mlp)):
        for n, layer in enumerate(linears(mlp)):
            for kind in ("weight", "bias"):
                p = getattr(layer, kind)
                p.copy_(torch.from_numpy(src[f"param.{part}.{n}.{kind}"]))
                names[id(p)] = f"{part}.{n}.{kind}"
    for kind in ("weight", "bias"):
        p = getattr(fresh.linear, kind)
        p.copy_(torch.from_numpy(src[f"param.linear.{kind}"]))
        names[id(p)] = f"linear.{kind}"
adam = torch.optim.Adam


class RecordingAdam(adam):
    """torch.optim.Adam, noting the learning rate main gives it and the gradients it steps on."""

    def __init__(self, params, *args, **kwargs):
        super().__init__(params, *args, **kwargs)
        rates.append(self.param_groups[0]["lr"])

    def step(self, closure=None):
        grads = {}
        for group in self.param_groups:
            for p in group["params"]:
                grads[names[id(p)]] = p.grad.detach().clone()
        seen.append(grads)
        return super().step(closure)


def eight_series(dataset_size, add_noise, *, generator):
    """main's data: the source's eight series, for training and for testing."""
    return times, coeffs, labels, values.shape[-1]


def whole_batch(arrays, batch_size, *, generator):
    """main's batches: the eight series, every step."""
    while True:
        yield arrays


torch.optim.Adam = RecordingAdam
nb["get_data"] = eight_series
nb["dataloader"] = whole_batch
nb["NeuralCDE"] = lambda *args: fresh
nb["main"](steps=2)
xp.record("optimizer.lr", np.array(rates, dtype=np.float64))
order = list(parameters(lambda p: p))
for step, grads in enumerate(seen, start=1):
    for name in order:
        xp.record(f"main.grad{step}.{name}", grads[name])
