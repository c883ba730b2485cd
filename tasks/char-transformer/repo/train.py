"""Train a small character-level transformer on input.txt and report the validation loss.

Usage: python train.py
The seed comes from the environment variable XSTACK_SEED (default 0).
"""
import math
import os

import numpy as np
import torch
import torch.nn.functional as F

from model import CharTransformer

SEED = int(os.environ.get("XSTACK_SEED", "0"))
BLOCK_SIZE = 32
BATCH_SIZE = 32
STEPS = 300
EVAL_EVERY = 50
LR = 2e-3

# Tiny model: one thread is faster than several.
torch.set_num_threads(1)


def load_text(path="input.txt"):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    chars = sorted(set(text))
    stoi = {c: i for i, c in enumerate(chars)}
    data = np.array([stoi[c] for c in text], dtype=np.int64)
    n_train = int(0.9 * len(data))  # first 90% train, last 10% validation
    return torch.from_numpy(data[:n_train]), torch.from_numpy(data[n_train:]), len(chars)


def val_batches(val):
    # Every non-overlapping window of BLOCK_SIZE + 1 characters of the validation text:
    # the same windows for every seed and every evaluation.
    n = (len(val) - 1) // BLOCK_SIZE
    x = torch.stack([val[i * BLOCK_SIZE:(i + 1) * BLOCK_SIZE] for i in range(n)])
    y = torch.stack([val[i * BLOCK_SIZE + 1:(i + 1) * BLOCK_SIZE + 1] for i in range(n)])
    return x, y


def get_batch(train, generator):
    # BATCH_SIZE windows at random offsets of the training text.
    ix = torch.randint(len(train) - BLOCK_SIZE, (BATCH_SIZE,), generator=generator)
    x = torch.stack([train[i:i + BLOCK_SIZE] for i in ix])
    y = torch.stack([train[i + 1:i + 1 + BLOCK_SIZE] for i in ix])
    return x, y


def loss_of(logits, y):
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))


def main():
    torch.manual_seed(SEED)  # weights and dropout masks
    train, val, vocab_size = load_text()
    x_val, y_val = val_batches(val)
    model = CharTransformer(vocab_size, block_size=BLOCK_SIZE)
    optimizer = torch.optim.Adam(model.parameters(), lr=LR)
    batches = torch.Generator().manual_seed(SEED)  # batch offsets

    running = 0.0
    for step in range(1, STEPS + 1):
        x, y = get_batch(train, batches)
        loss = loss_of(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        running += loss.item()
        if step % EVAL_EVERY == 0:
            model.eval()  # no dropout
            with torch.no_grad():
                val_loss = loss_of(model(x_val), y_val).item()
            model.train()
            print(
                f"step {step}/{STEPS} train_loss={running / EVAL_EVERY:.4f} "
                f"val_loss={val_loss:.4f} val_bpc={val_loss / math.log(2):.4f}",
                flush=True,
            )
            running = 0.0
    print(f"final val_loss={val_loss:.4f}", flush=True)


if __name__ == "__main__":
    main()
