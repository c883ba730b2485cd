"""Numeric parity probe (`xstack parity`), the port's side (JAX): cleanrl/dqn.py run as the
source's probe runs it (1,500 steps, learning from step 1,000, an update every 100 steps, the
target network copied every 200, seed 1), the Q-network and its target starting from the
source's initial weights (`xstack_parity.load_inputs()`, loaded when the script creates its
TrainState); the same names as the source's probe (see its docstring).
"""
import runpy
import sys

import numpy as np
import torch.utils.tensorboard
from flax.training import train_state

import xstack_parity as xp

ARGS = ["--env-id", "CartPole-v1", "--seed", "1", "--total-timesteps", "1500",
        "--learning-starts", "1000", "--train-frequency", "100",
        "--target-network-frequency", "200"]
LOGGED = {"charts/episodic_return": "episodic_return", "losses/td_loss": "td_loss",
          "losses/q_values": "q_values"}

src = xp.load_inputs()


def source_params():
    """The source's initial Q-network as flax parameters (kernel = torch's weight transposed)."""
    layers = {}
    for i in range(3):
        layers[f"Dense_{i}"] = {"kernel": np.asarray(src[f"param.dense{i}.weight"]).T.copy(),
                                "bias": np.asarray(src[f"param.dense{i}.bias"]).copy()}
    return {"params": layers}


def record_params(prefix, params):
    """Flax's Dense_N kernel and bias under torch's names and layout."""
    for i in range(3):
        layer = params["params"][f"Dense_{i}"]
        xp.record(f"{prefix}.dense{i}.weight", np.asarray(layer["kernel"]).T)
        xp.record(f"{prefix}.dense{i}.bias", np.asarray(layer["bias"]))


class Writer:
    """A SummaryWriter that records the logged scalars instead of writing event files."""

    def __init__(self, *args, **kwargs):
        pass

    def add_text(self, *args, **kwargs):
        pass

    def add_scalar(self, tag, value, step):
        if tag in LOGGED:
            xp.record(f"{LOGGED[tag]}.{step}", np.asarray(value, dtype=np.float64).reshape(()))

    def close(self):
        pass


torch.utils.tensorboard.SummaryWriter = Writer
create = train_state.TrainState.create.__func__


def loading_create(cls, **kwargs):
    """TrainState.create with the source's initial weights as the Q-network and its target."""
    loaded = source_params()
    record_params("param", loaded)
    kwargs["params"] = loaded
    if "target_params" in kwargs:
        kwargs["target_params"] = source_params()
    return create(cls, **kwargs)


train_state.TrainState.create = classmethod(loading_create)
sys.argv = ["cleanrl/dqn.py", *ARGS]
script = runpy.run_path("cleanrl/dqn.py", run_name="__main__")
record_params("final.param", script["q_state"].params)
record_params("final.target", script["q_state"].target_params)
