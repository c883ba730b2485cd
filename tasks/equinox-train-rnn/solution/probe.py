"""Numeric parity probe (`xstack parity`), the port's side (PyTorch): the code cells of
docs/examples/train_rnn.ipynb, all but the last (`main()`), run in one namespace; then its
model on the source's spirals and initial parameters (`xstack_parity.load_inputs()`), the
same names as the source's probe in its layouts (see its docstring). nn.GRU keeps two
biases per gate: `bias_ih_l0` is equinox's `bias`, and `bias_hh_l0` is zero for the reset
and update gates and equinox's `bias_n` for the new gate (the same function). The hidden
state the classifier reads is the input of the model's `linear`, taken with a hook.
"""
import os

import xstack_parity as xp

NOTEBOOK = os.path.join("docs", "examples", "train_rnn.ipynb")

nb = xp.notebook_namespace(NOTEBOOK, skip=lambda source: source.startswith("main()"))
import torch  # noqa: E402

torch.set_num_threads(1)
src = xp.load_inputs()
xs, ys = torch.from_numpy(src["data.x"]), torch.from_numpy(src["data.y"])
xp.record("data.x", xs)
xp.record("data.y", ys)

model = nb["RNN"](in_size=2, out_size=1, hidden_size=16)
gru = model.cell
hidden = model.hidden_size


def parameters(pick):
    """The parameters (or, with `pick`, their gradients) by the source's names."""
    return {
        "cell.weight_ih": pick(gru.weight_ih_l0),
        "cell.weight_hh": pick(gru.weight_hh_l0),
        "cell.bias": pick(gru.bias_ih_l0),
        "cell.bias_n": pick(gru.bias_hh_l0)[2 * hidden:],
        "linear.weight": pick(model.linear.weight),
        "bias": pick(model.bias),
    }


with torch.no_grad():
    gru.weight_ih_l0.copy_(torch.from_numpy(src["param.cell.weight_ih"]))
    gru.weight_hh_l0.copy_(torch.from_numpy(src["param.cell.weight_hh"]))
    gru.bias_ih_l0.copy_(torch.from_numpy(src["param.cell.bias"]))
    gru.bias_hh_l0.zero_()
    gru.bias_hh_l0[2 * hidden:] = torch.from_numpy(src["param.cell.bias_n"])
    model.linear.weight.copy_(torch.from_numpy(src["param.linear.weight"]))
    model.bias.copy_(torch.from_numpy(src["param.bias"]))
for name, value in parameters(lambda p: p).items():
    xp.record(f"param.{name}", value)

seen = []
model.linear.register_forward_hook(lambda module, inputs, output: seen.append(inputs[0]))
pred = model(xs)
xp.record("hidden.last", seen[-1])
xp.record("pred", pred)

loss = -torch.mean(ys * torch.log(pred) + (1 - ys) * torch.log(1 - pred))
loss.backward()
xp.record("loss", loss)
for name, value in parameters(lambda p: p.grad).items():
    xp.record(f"grad.{name}", value)

defaults = dict(zip(nb["main"].__code__.co_varnames, nb["main"].__defaults__))
optim = torch.optim.Adam(model.parameters(), lr=defaults["learning_rate"])
optim.step()
for name, value in parameters(lambda p: p).items():
    xp.record(f"step1.{name}", value)
