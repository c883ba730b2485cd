"""Train a small convolutional network with batch normalisation on the scikit-learn digits.

Usage: python train.py
The seed comes from the environment variable XSTACK_SEED (default 0).
"""
import os

import numpy as np
import torch
import torch.nn.functional as F
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split

from model import ConvNet

SEED = int(os.environ.get("XSTACK_SEED", "0"))
EPOCHS = 8
BATCH_SIZE = 32
LR = 0.01
MOMENTUM = 0.9

# Tiny model: one thread is faster than several.
torch.set_num_threads(1)


def load_data():
    digits = load_digits()
    # images: (1797, 8, 8), grey levels 0..16 -> NCHW float32 in [0, 1].
    x = (digits.images / 16.0).astype(np.float32)[:, None, :, :]
    y = digits.target.astype(np.int64)
    # The split is fixed (random_state=0) whatever the seed.
    x_train, x_test, y_train, y_test = train_test_split(
        x, y, test_size=0.25, random_state=0, stratify=y
    )
    return (
        torch.from_numpy(x_train),
        torch.from_numpy(y_train),
        torch.from_numpy(x_test),
        torch.from_numpy(y_test),
    )


def evaluate(model, x, y):
    # eval mode: BatchNorm normalises with its running statistics.
    model.eval()
    with torch.no_grad():
        logits = model(x)
        loss = F.cross_entropy(logits, y).item()
        acc = (logits.argmax(dim=1) == y).float().mean().item()
    model.train()
    return loss, acc


def main():
    torch.manual_seed(SEED)
    x_train, y_train, x_test, y_test = load_data()
    model = ConvNet()
    optimizer = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
    shuffle = torch.Generator().manual_seed(SEED)

    n = x_train.shape[0]
    test_acc = 0.0
    for epoch in range(1, EPOCHS + 1):
        perm = torch.randperm(n, generator=shuffle)
        total = 0.0
        for start in range(0, n, BATCH_SIZE):
            idx = perm[start:start + BATCH_SIZE]
            loss = F.cross_entropy(model(x_train[idx]), y_train[idx])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item() * idx.shape[0]
        test_loss, test_acc = evaluate(model, x_test, y_test)
        print(
            f"epoch {epoch}/{EPOCHS} train_loss={total / n:.4f} "
            f"test_loss={test_loss:.4f} test_acc={test_acc:.4f}",
            flush=True,
        )
    print(f"final test_acc={test_acc:.4f}", flush=True)


if __name__ == "__main__":
    main()
