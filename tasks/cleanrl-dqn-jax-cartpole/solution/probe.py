"""Numeric parity probe (`xstack parity`), the port's side (PyTorch): cleanrl/dqn_jax.py run
as the source's probe runs it (1,500 steps, learning from step 1,000, an update every 100
steps, the target network copied every 200, seed 1), the Q-network starting from the
source's initial weights (`xstack_parity.load_inputs()`, loaded when the script hands its
parameters to Adam, before the target network copies them); the same names as the source's
probe (see its docstring).
"""
import runpy
import sys

import numpy as np
import torch
import torch.utils.tensorboard

import xstack_parity as xp

ARGS = ["--env-id", "CartPole-v1", "--seed", "1", "--total-timesteps", "1500",
        "--learning-starts", "1000", "--train-frequency", "100",
        "--target-network-frequency", "200"]
LOGGED = {"charts/episodic_return": "episodic_return", "losses/td_loss": "td_loss",
          "losses/q_values": "q_values"}
NAMES = [f"dense{i}.{kind}" for i in range(3) for kind in ("weight", "bias")]

torch.set_num_threads(1)
src = xp.load_inputs()


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
adam_init = torch.optim.Adam.__init__


def loading_init(self, params, *args, **kwargs):
    """Adam's constructor, loading the source's initial weights into the Q-network first."""
    params = list(params)
    with torch.no_grad():
        for name, param in zip(NAMES, params):
            param.copy_(torch.from_numpy(src[f"param.{name}"]))
            xp.record(f"param.{name}", param)
    adam_init(self, params, *args, **kwargs)


torch.optim.Adam.__init__ = loading_init
sys.argv = ["cleanrl/dqn_jax.py", *ARGS]
script = runpy.run_path("cleanrl/dqn_jax.py", run_name="__main__")
for prefix, network in (("final.param", script["q_network"]), ("final.target", script["target_network"])):
    for name, param in zip(NAMES, network.parameters()):
        xp.record(f"{prefix}.{name}", param)
