"""Train an MLP on the scikit-learn digits with AdamW, gradient clipping and a linear
warm-up followed by cosine decay.

Usage: python train.py
The seed comes from the environment variable XSTACK_SEED (default 0).
"""
import math
import os

import numpy as np
import torch
import torch.nn as nn
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

SEED = int(os.environ.get("XSTACK_SEED", "0"))
EPOCHS = 20
BATCH_SIZE = 64
HIDDEN = 256
LR = 3e-3              # peak learning rate
WEIGHT_DECAY = 0.05    # decoupled (AdamW), weight matrices only
WARMUP_STEPS = 40
CLIP_NORM = 1.0

# Tiny model: one thread is faster than several.
torch.set_num_threads(1)


def load_data():
    digits = load_digits()
    x = digits.data.astype(np.float32)
    y = digits.target.astype(np.int64)
    # The split is fixed (random_state=0) whatever the seed.
    x_train, x_test, y_train, y_test = train_test_split(
        x, y, test_size=0.25, random_state=0, stratify=y
    )
    scaler = StandardScaler().fit(x_train)
    x_train = scaler.transform(x_train).astype(np.float32)
    x_test = scaler.transform(x_test).astype(np.float32)
    return (
        torch.from_numpy(x_train),
        torch.from_numpy(y_train),
        torch.from_numpy(x_test),
        torch.from_numpy(y_test),
    )


def make_model():
    return nn.Sequential(
        nn.Linear(64, HIDDEN),
        nn.GELU(),
        nn.Linear(HIDDEN, HIDDEN),
        nn.GELU(),
        nn.Linear(HIDDEN, 10),
    )


def lr_lambda(step, total_steps):
    """Multiplier of the peak learning rate for optimizer step `step` (0, 1, 2, ...)."""
    if step < WARMUP_STEPS:
        return step / WARMUP_STEPS
    progress = (step - WARMUP_STEPS) / (total_steps - WARMUP_STEPS)
    return 0.5 * (1.0 + math.cos(math.pi * min(1.0, progress)))


def weight_norm(model):
    # L2 norm of all weight matrices together (the parameters that are decayed).
    return math.sqrt(sum((p.detach() ** 2).sum().item() for p in model.parameters() if p.ndim >= 2))


def main():
    torch.manual_seed(SEED)
    x_train, y_train, x_test, y_test = load_data()
    model = make_model()

    # Weight decay on the weight matrices, none on the biases.
    decay = [p for p in model.parameters() if p.ndim >= 2]
    no_decay = [p for p in model.parameters() if p.ndim < 2]
    optimizer = torch.optim.AdamW(
        [
            {"params": decay, "weight_decay": WEIGHT_DECAY},
            {"params": no_decay, "weight_decay": 0.0},
        ],
        lr=LR,
    )

    n = x_train.shape[0]
    steps_per_epoch = math.ceil(n / BATCH_SIZE)
    total_steps = EPOCHS * steps_per_epoch
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda s: lr_lambda(s, total_steps))
    loss_fn = nn.CrossEntropyLoss()
    shuffle = torch.Generator().manual_seed(SEED)

    step = 0
    test_loss = wnorm = 0.0
    for epoch in range(1, EPOCHS + 1):
        perm = torch.randperm(n, generator=shuffle)
        total = 0.0
        for start in range(0, n, BATCH_SIZE):
            idx = perm[start:start + BATCH_SIZE]
            loss = loss_fn(model(x_train[idx]), y_train[idx])
            optimizer.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), CLIP_NORM)
            optimizer.step()
            scheduler.step()
            step += 1
            total += loss.item() * idx.shape[0]
        with torch.no_grad():
            logits = model(x_test)
            test_loss = loss_fn(logits, y_test).item()
            test_acc = (logits.argmax(dim=1) == y_test).float().mean().item()
        wnorm = weight_norm(model)
        print(
            f"step {step}/{total_steps} train_loss={total / n:.4f} test_loss={test_loss:.4f} "
            f"test_acc={test_acc:.4f} weight_norm={wnorm:.3f}",
            flush=True,
        )
    print(f"final test_loss={test_loss:.4f} weight_norm={wnorm:.3f}", flush=True)


if __name__ == "__main__":
    main()
