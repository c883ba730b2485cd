"""Evaluation for the linear-regression experiment. Pure numpy, framework-free.

The grader treats this file as protected: it is restored from the source before every
verify run, so a migration must leave it as it is.
"""
import json

import numpy as np


def mse(pred, target):
    """Mean squared error between predictions and targets, in float64."""
    pred = np.asarray(pred, dtype=np.float64).reshape(-1)
    target = np.asarray(target, dtype=np.float64).reshape(-1)
    if pred.shape != target.shape:
        raise ValueError(f"shape mismatch: pred {pred.shape}, target {target.shape}")
    return float(np.mean((pred - target) ** 2))


def report(pred, target, step):
    """Print the evaluation as one JSON line and return the value."""
    value = mse(pred, target)
    print(json.dumps({"eval_mse": round(value, 6), "step": step}), flush=True)
    return value
