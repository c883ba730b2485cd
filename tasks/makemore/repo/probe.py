"""Numeric parity probe (`xstack parity`): makemore.py itself, run with the README's input
and its default model for ONE training step (`--max-steps 1`, `--num-workers 0`), then on
eight fixed names (the first eight lines of names.txt):

- the dataset's encoding (`data.x`, `data.y`: CharDataset.__getitem__, <START> = 0 in front
  of x, y padded with -1 after the <STOP> 0: the positions the loss must ignore);
- the model's parameters after that step (`param.NAME`, the names of
  model.named_parameters(), PyTorch's layouts: Linear weights (out, in));
- the logits, the loss (cross-entropy with ignore_index=-1) and the gradients (`grad.NAME`);
- two steps of the run's own optimizer (its class and hyper-parameters as makemore.py built
  them: AdamW, lr 5e-4, betas (0.9, 0.99), eps 1e-8, weight decay 0.01 on every parameter)
  from a fresh state, fed those gradients and then twice those, as the change each step
  makes to each parameter (`adamw.step1.NAME`, `adamw.step2.NAME`). Fixed gradients, not
  recomputed ones: some are rounding noise around zero (the key biases' are exactly zero in
  exact arithmetic), which Adam's first step would blow up to +-lr either way.
A port loads the parameters (`xstack_parity.load_inputs()`) and records the same names in
these layouts.
"""
import os
import runpy
import sys

import numpy as np
import torch
import xstack_parity as xp

torch.set_num_threads(1)
sys.argv = ["makemore.py", "-i", "names.txt", "-o", os.path.join(".xstack-parity", "run"),
            "--max-steps", "1", "--num-workers", "0"]
run = runpy.run_path("makemore.py", run_name="__main__")
CharDataset, model, optimizer = run["CharDataset"], run["model"], run["optimizer"]
train_dataset = run["train_dataset"]

# eight fixed names, encoded by the run's own dataset class
with open("names.txt") as f:
    words = [w.strip() for w in f.read().splitlines() if w.strip()][:8]
ds = CharDataset(words, train_dataset.chars, train_dataset.max_word_length)
X = torch.stack([ds[i][0] for i in range(len(words))])
Y = torch.stack([ds[i][1] for i in range(len(words))])
xp.record("data.x", X, at=CharDataset.__getitem__)
xp.record("data.y", Y, at=CharDataset.__getitem__)

names = [n for n, _ in model.named_parameters()]
for name, p in model.named_parameters():
    xp.record(f"param.{name}", p.detach().clone()) # a copy: the optimizer steps below change p in place

logits, loss = model(X, Y)
xp.record("logits", logits, at=type(model).forward)
xp.record("loss", loss, at=type(model).forward)
model.zero_grad(set_to_none=True)
loss.backward()
for name, p in model.named_parameters():
    xp.record(f"grad.{name}", p.grad.detach().clone())

# the run's optimizer (its class and hyper-parameters), fresh, for two steps on fixed
# gradients: those above, then twice those (so that the second moment sees a change)
g = optimizer.param_groups[0]
opt = type(optimizer)(model.parameters(), lr=g["lr"], betas=g["betas"], eps=g["eps"],
                      weight_decay=g["weight_decay"])
grads = {n: p.grad.detach().clone() for n, p in model.named_parameters()}
for k in (1, 2):
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    for n, p in model.named_parameters():
        p.grad = grads[n] * k
    opt.step()
    for name, p in model.named_parameters():
        xp.record(f"adamw.step{k}.{name}", p.detach() - before[name])
