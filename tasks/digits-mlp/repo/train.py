"""Train a small MLP on the scikit-learn digits data set.

Usage: python train.py
The seed comes from the environment variable XSTACK_SEED (default 0).
"""
import os

import numpy as np
import torch
import torch.nn as nn
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

SEED = int(os.environ.get("XSTACK_SEED", "0"))
EPOCHS = 30
BATCH_SIZE = 32
LR = 1e-3
HIDDEN = 128

# Tiny model: one thread is faster than several.
torch.set_num_threads(1)


def load_data():
    digits = load_digits()
    x = digits.data.astype(np.float32)
    y = digits.target.astype(np.int64)
    # The split is fixed (random_state=0) whatever the seed: the seed only
    # changes the initial weights and the order of the mini-batches.
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


class MLP(nn.Module):
    def __init__(self, d_in=64, hidden=HIDDEN, n_classes=10):
        super().__init__()
        self.fc1 = nn.Linear(d_in, hidden)
        self.fc2 = nn.Linear(hidden, n_classes)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


def accuracy(model, x, y):
    model.eval()
    with torch.no_grad():
        pred = model(x).argmax(dim=1)
    model.train()
    return (pred == y).float().mean().item()


def main():
    torch.manual_seed(SEED)
    x_train, y_train, x_test, y_test = load_data()
    model = MLP()
    optimizer = torch.optim.Adam(model.parameters(), lr=LR)
    loss_fn = nn.CrossEntropyLoss()
    shuffle = torch.Generator().manual_seed(SEED)

    n = x_train.shape[0]
    test_acc = 0.0
    for epoch in range(1, EPOCHS + 1):
        perm = torch.randperm(n, generator=shuffle)
        total = 0.0
        for start in range(0, n, BATCH_SIZE):
            idx = perm[start:start + BATCH_SIZE]
            logits = model(x_train[idx])
            loss = loss_fn(logits, y_train[idx])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item() * idx.shape[0]
        test_acc = accuracy(model, x_test, y_test)
        print(f"epoch {epoch}/{EPOCHS} train_loss={total / n:.4f} test_acc={test_acc:.4f}", flush=True)
    print(f"final test_acc={test_acc:.4f}", flush=True)


if __name__ == "__main__":
    main()
