"""Numeric parity probe (`xstack parity`): one training-mode step of ConvNet on one batch.

Records, in this order: the batch, the initial parameters, the logits and the loss of a
training-mode forward pass, the BatchNorm running statistics that pass updated, and the
gradients. A port loads the batch and the parameters (`xstack_parity.load_inputs()`) and
records the same names in these layouts (NCHW, PyTorch's weight shapes).
"""
import torch
import torch.nn.functional as F
import xstack_parity as xp

from model import ConvNet

torch.set_num_threads(1)
torch.manual_seed(0)
# One batch shaped as train.py's (NCHW grey levels in [0, 1], labels 0..9).
x = torch.rand(32, 1, 8, 8)
y = torch.randint(0, 10, (32,))
xp.record("input.x", x)
xp.record("input.y", y)

model = ConvNet()
model.train()
for name, p in model.named_parameters():
    xp.record(f"param.{name}", p)

logits = model(x)
loss = F.cross_entropy(logits, y)
loss.backward()
xp.record("logits", logits)
xp.record("loss", loss)
for bn in ("bn1", "bn2", "bn3"):
    xp.record(f"{bn}.running_mean", getattr(model, bn).running_mean)
    xp.record(f"{bn}.running_var", getattr(model, bn).running_var)
for name, p in model.named_parameters():
    xp.record(f"grad.{name}", p.grad)
