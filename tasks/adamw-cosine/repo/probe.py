"""Numeric parity probe (`xstack parity`): train.py's MLP, AdamW and schedule on one batch.

Records, in this order: the batch, the initial parameters, the logits and the loss, the
gradients of the loss, and the parameters after two optimizer steps as train.py takes them
(gradient clipping, AdamW with decay on the weight matrices only, the warm-up schedule: the
first step's learning rate is 0, the second's LR / WARMUP_STEPS). A port loads the batch and
the parameters (`xstack_parity.load_inputs()`) and records the same names in these layouts
(PyTorch's (out, in) weights, nn.Sequential's names).
"""
import math

import torch
import torch.nn as nn
import xstack_parity as xp

from train import BATCH_SIZE, CLIP_NORM, EPOCHS, LR, WEIGHT_DECAY, lr_lambda, make_model

torch.manual_seed(0)
# One batch shaped as train.py's (64 standardised features, labels 0..9).
x = torch.randn(BATCH_SIZE, 64)
y = torch.randint(0, 10, (BATCH_SIZE,))
xp.record("input.x", x)
xp.record("input.y", y)

model = make_model()
for name, p in model.named_parameters():
    xp.record(f"param.{name}", p)

loss_fn = nn.CrossEntropyLoss()
logits = model(x)
xp.record("logits", logits)
xp.record("loss", loss_fn(logits, y))

decay = [p for p in model.parameters() if p.ndim >= 2]
no_decay = [p for p in model.parameters() if p.ndim < 2]
optimizer = torch.optim.AdamW(
    [
        {"params": decay, "weight_decay": WEIGHT_DECAY},
        {"params": no_decay, "weight_decay": 0.0},
    ],
    lr=LR,
)
total_steps = EPOCHS * math.ceil(1347 / BATCH_SIZE)
scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: lr_lambda(s, total_steps))
for step in range(2):
    loss = loss_fn(model(x), y)
    optimizer.zero_grad()
    loss.backward()
    if step == 0:
        for name, p in model.named_parameters():
            xp.record(f"grad.{name}", p.grad)
    torch.nn.utils.clip_grad_norm_(model.parameters(), CLIP_NORM)
    optimizer.step()
    scheduler.step()
for name, p in model.named_parameters():
    xp.record(f"step2.{name}", p)
