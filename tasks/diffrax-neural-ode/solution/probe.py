"""Numeric parity probe (`xstack parity`), the port's side (PyTorch): the code cells of
docs/examples/neural_ode.ipynb, all but the last (`main()`), run in one namespace; then its
functions on the source's inputs (`xstack_parity.load_inputs()`): the eight initial
conditions and times of `data.y0`, `data.ts`, the series `data.ys` (once the port's own are
recorded) and the initial parameters `param.*`. The
same names as the source's probe, in its layouts (see its docstring): the data the port
integrates, the vector field, the solution over the first stage's window, the loss and its
gradients, the parameters after one and two optimiser steps, and the length and batch size
main's data loader is given in each stage of a run of
`main(dataset_size=64, steps_strategy=(1, 1), plot=False)`.
"""
import os
import sys

import numpy as np
import xstack_parity as xp

NOTEBOOK = os.path.join("docs", "examples", "neural_ode.ipynb")

os.environ.setdefault("MPLBACKEND", "Agg")
nb = xp.notebook_namespace(NOTEBOOK, skip=lambda source: source.endswith("main()"))
import torch  # noqa: E402

torch.set_num_threads(1)
src = xp.load_inputs()
ts = torch.from_numpy(src["data.ts"])
y0 = torch.from_numpy(src["data.y0"])
xp.record("data.ts", ts)
xp.record("data.y0", y0)
xp.record("data.ys", nb["_get_data"](ts, y0))
# The source's series from here on: what follows then compares the model alone.
ys = torch.from_numpy(src["data.ys"])

model = nb["NeuralODE"](2, 64, 2)
linears = [m for m in model.func.mlp if isinstance(m, torch.nn.Linear)]


def parameters(of):
    """The model's parameters (or, with `of=grad`, their gradients) by the source's names."""
    pick = (lambda p: p.grad) if of == "grad" else (lambda p: p)
    named = {"out_scale": pick(model.func.out_scale)}
    for n, layer in enumerate(linears):
        named[f"mlp.{n}.weight"] = pick(layer.weight)
        named[f"mlp.{n}.bias"] = pick(layer.bias)
    return named


with torch.no_grad():
    for name, p in parameters("param").items():
        p.copy_(torch.from_numpy(src[f"param.{name}"]))
for name, value in parameters("param").items():
    xp.record(f"param.{name}", value)

with torch.no_grad():
    xp.record("vector_field", model.func(torch.tensor(0.0), ys[0]))
    xp.record("forward.stage1", model(ts[:10], y0))


def stage1_loss():
    yi = ys[:, :10]
    return torch.mean((yi - model(ts[:10], yi[:, 0])) ** 2)


model.zero_grad()
loss = stage1_loss()
loss.backward()
xp.record("loss.stage1", loss)
for name, value in parameters("grad").items():
    xp.record(f"grad.{name}", value)

defaults = dict(zip(nb["main"].__code__.co_varnames, nb["main"].__defaults__))
optim = nb["AdaBelief"](model.parameters(), defaults["lr"])
for step in (1, 2):
    optim.zero_grad()
    stage1_loss().backward()
    optim.step()
    for name, value in parameters("param").items():
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
