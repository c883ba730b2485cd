"""Train an MLP on an imbalanced subset of the scikit-learn digits with a class-weighted,
label-smoothed cross-entropy.

Usage: python train.py
The seed comes from the environment variable XSTACK_SEED (default 0).
"""
import os

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import StandardScaler

SEED = int(os.environ.get("XSTACK_SEED", "0"))
EPOCHS = 15
BATCH_SIZE = 32
LR = 0.05
MOMENTUM = 0.9
HIDDEN = 128
LABEL_SMOOTHING = 0.1
# Training images kept per digit: 120, 96, 77, 61, 49, 39, 31, 25, 20, 16.
KEEP = [round(120 * 0.8 ** c) for c in range(10)]

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
    # Imbalanced training set: the first KEEP[c] training images of digit c, in their
    # original order. The test set stays balanced (45 images per digit).
    keep = np.sort(np.concatenate([np.flatnonzero(y_train == c)[:KEEP[c]] for c in range(10)]))
    x_train, y_train = x_train[keep], y_train[keep]
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
    # nn.Linear keeps PyTorch's default initialisation.
    return nn.Sequential(
        nn.Linear(64, HIDDEN),
        nn.ReLU(),
        nn.Linear(HIDDEN, HIDDEN),
        nn.ReLU(),
        nn.Linear(HIDDEN, 10),
    )


def main():
    torch.manual_seed(SEED)
    x_train, y_train, x_test, y_test = load_data()
    # "Balanced" class weights: n_samples / (n_classes * count of the class).
    counts = torch.bincount(y_train, minlength=10).float()
    class_weights = counts.sum() / (10 * counts)
    model = make_model()
    loss_fn = nn.CrossEntropyLoss(weight=class_weights, label_smoothing=LABEL_SMOOTHING)
    optimizer = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
    shuffle = torch.Generator().manual_seed(SEED)

    n = x_train.shape[0]
    test_nll = 0.0
    for epoch in range(1, EPOCHS + 1):
        perm = torch.randperm(n, generator=shuffle)
        total = 0.0
        for start in range(0, n, BATCH_SIZE):
            idx = perm[start:start + BATCH_SIZE]
            loss = loss_fn(model(x_train[idx]), y_train[idx])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item() * idx.shape[0]
        with torch.no_grad():
            logits = model(x_test)
            # Plain, unweighted and unsmoothed cross-entropy on the balanced test set.
            test_nll = F.cross_entropy(logits, y_test).item()
            test_acc = (logits.argmax(dim=1) == y_test).float().mean().item()
        print(
            f"epoch {epoch}/{EPOCHS} train_loss={total / n:.4f} "
            f"test_nll={test_nll:.4f} test_acc={test_acc:.4f}",
            flush=True,
        )
    print(f"final test_nll={test_nll:.4f}", flush=True)


if __name__ == "__main__":
    main()
