"""Numeric parity probe (`xstack parity`), the port's side (PyTorch): the code cells of
docs/examples/latent_ode.ipynb, all but the last (`main()`), run in one namespace; then its
functions on the source's series, initial parameters and noise (`xstack_parity.load_inputs()`),
the same names as the source's probe in its layouts (see its docstring): the series integrated
from their first values at their times by the port's solver (`tsit5_solve`), the encoder's
posterior, the decoder's solution, the loss per series and its mean, the gradients, and the
parameters after one Adam step.
"""
import os

import xstack_parity as xp

NOTEBOOK = os.path.join("docs", "examples", "latent_ode.ipynb")

os.environ.setdefault("MPLBACKEND", "Agg")
nb = xp.notebook_namespace(NOTEBOOK, skip=lambda source: source == "main()")
import torch  # noqa: E402

torch.set_num_threads(1)
src = xp.load_inputs()
ts = torch.from_numpy(src["data.ts"])
ys_source = torch.from_numpy(src["data.ys"])
matrix = torch.tensor([[-0.1, 1.3], [-1, -0.1]])
xp.record("data.ts", ts)
xp.record("data.ys", nb["tsit5_solve"](lambda y: y @ matrix.T, ts, ys_source[:, 0], 0.1))
ys = ys_source

model = nb["LatentODE"](data_size=2, hidden_size=16, latent_size=16, width_size=16, depth=2)


def parameters(pick):
    """The parameters (or, with `pick`, their gradients) by the source's names."""
    named = {"func.scale": pick(model.func.scale)}
    for part, mlp in (("func.mlp", model.func.mlp), ("latent_to_hidden", model.latent_to_hidden)):
        for n, layer in enumerate(mlp.layers):
            named[f"{part}.{n}.weight"] = pick(layer.weight)
            named[f"{part}.{n}.bias"] = pick(layer.bias)
    for name in ("weight_ih", "weight_hh", "bias", "bias_n"):
        named[f"rnn_cell.{name}"] = pick(getattr(model.rnn_cell, name))
    for part in ("hidden_to_latent", "hidden_to_data"):
        named[f"{part}.weight"] = pick(getattr(model, part).weight)
        named[f"{part}.bias"] = pick(getattr(model, part).bias)
    return named


with torch.no_grad():
    for name, p in parameters(lambda p: p).items():
        p.copy_(torch.from_numpy(src[f"param.{name}"]))
for name, value in parameters(lambda p: p).items():
    xp.record(f"param.{name}", value)

noise = torch.from_numpy(src["noise"])


class SourceNoise(torch.Generator):
    """A generator whose one draw is the source's noise: `_latent` draws through it."""


_randn = torch.randn


def randn_from_source(*args, generator=None, **kwargs):
    return noise.clone() if isinstance(generator, SourceNoise) else _randn(*args, generator=generator, **kwargs)


torch.randn = randn_from_source
latent, mean, std = model._latent(ts, ys, SourceNoise())
torch.randn = _randn
pred = model._sample(ts, latent)
per_series = model._loss(ys, pred, mean, std)
value = per_series.mean()
model.zero_grad()
value.backward()
xp.record("encoder.mean", mean)
xp.record("encoder.std", std)
xp.record("noise", noise)
xp.record("latent", latent)
xp.record("decoder.y0", model.latent_to_hidden(latent))
xp.record("decoder.pred", pred)
xp.record("loss.per_series", per_series)
xp.record("loss", value)
for name, grad in parameters(lambda p: p.grad).items():
    xp.record(f"grad.{name}", grad)

lr = nb["main"].__defaults__[nb["main"].__code__.co_varnames.index("lr")]
optim = torch.optim.Adam(model.parameters(), lr=lr)
optim.step()
for name, param in parameters(lambda p: p).items():
    xp.record(f"step1.{name}", param)
