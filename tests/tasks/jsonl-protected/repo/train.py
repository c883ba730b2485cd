"""Linear regression on generated data, trained by full-batch gradient descent.

Prints one JSON line per step, {"step": S, "loss": L}, and at the end the test
error from eval.py, {"eval_mse": E, "step": 50}. The seed is XSTACK_SEED (default 0).
"""
import json
import os

import numpy as np
import torch

import eval as evaluation

SEED = int(os.environ.get("XSTACK_SEED", "0"))
N_TRAIN, N_TEST, DIM = 200, 100, 5
NOISE = 0.1
STEPS = 50
LR = 0.05


def make_data(seed):
    rng = np.random.RandomState(seed)
    w_true = rng.normal(size=(DIM,))
    b_true = rng.normal()
    x = rng.normal(size=(N_TRAIN + N_TEST, DIM))
    y = x @ w_true + b_true + NOISE * rng.normal(size=(N_TRAIN + N_TEST,))
    x, y = x.astype(np.float32), y.astype(np.float32)
    return x[:N_TRAIN], y[:N_TRAIN], x[N_TRAIN:], y[N_TRAIN:]


def main():
    torch.manual_seed(SEED)
    x_train, y_train, x_test, y_test = make_data(SEED)
    x_train, y_train = torch.from_numpy(x_train), torch.from_numpy(y_train)

    model = torch.nn.Linear(DIM, 1)
    for step in range(1, STEPS + 1):
        loss = torch.mean((model(x_train).squeeze(1) - y_train) ** 2)
        model.zero_grad()
        loss.backward()
        with torch.no_grad():
            for p in model.parameters():
                p -= LR * p.grad
        print(json.dumps({"step": step, "loss": round(loss.item(), 6)}), flush=True)

    with torch.no_grad():
        pred = model(torch.from_numpy(x_test)).squeeze(1).numpy()
    evaluation.report(pred, y_test, STEPS)


if __name__ == "__main__":
    main()
