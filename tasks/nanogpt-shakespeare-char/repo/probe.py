"""Numeric parity probe (`xstack parity`): train.py itself, run with a tiny model (2 layers, 2
heads, 32 wide, windows of 16 characters, batches of 4) up to its first evaluation
(--eval_only=True, one batch per split), then its get_batch and one forward and backward
pass of its model on one batch.

Records, in this order:
- the batch sampling, as integers a port must match exactly whatever generator it draws
  from: `batch.{split}.distinct_windows`, how many different windows 8 calls of get_batch
  draw (32 for fresh offsets on every call), and `batch.{split}.y_follows_x` (1 when y is x
  shifted by one character);
- the batch the rest runs on (`input.x`, `input.y`) and the parameters (`param.NAME`, the
  names of model.named_parameters(), PyTorch's layouts: Linear weights (out, in); the
  output head is the token embedding);
- the logits, the loss and the gradients (`grad.NAME`).
A port loads the batch and the parameters (`xstack_parity.load_inputs()`) and records the
same names in these layouts.
"""
import runpy
import sys

import numpy as np
import torch
import xstack_parity as xp

TINY = ["--device=cpu", "--compile=False", "--eval_only=True", "--eval_iters=1",
        "--block_size=16", "--batch_size=4", "--n_layer=2", "--n_head=2", "--n_embd=32",
        "--dropout=0.0"]

torch.set_num_threads(1)
sys.argv = ["train.py", "config/train_shakespeare_char.py", *TINY]
train = runpy.run_path("train.py", run_name="__main__")
get_batch = train["get_batch"]

for split in ("train", "val"):
    windows, follows = set(), True
    for _ in range(8):
        x, y = (b.numpy().astype(np.int64) for b in get_batch(split))
        windows.update(row.tobytes() for row in x)
        follows = follows and bool((x[:, 1:] == y[:, :-1]).all())
    xp.record(f"batch.{split}.distinct_windows", np.int64(len(windows)), at=get_batch)
    xp.record(f"batch.{split}.y_follows_x", np.int64(follows), at=get_batch)

x, y = get_batch("train")
xp.record("input.x", x)
xp.record("input.y", y)
model = train["model"]
for name, p in model.named_parameters():
    xp.record(f"param.{name}", p)

logits, loss = model(x, y)
xp.record("logits", logits)
xp.record("loss", loss)
loss.backward()
for name, p in model.named_parameters():
    xp.record(f"grad.{name}", p.grad)
