"""Numeric parity probe (`xstack parity`), the source's side (JAX): cleanrl/dqn_jax.py itself,
run as its command runs it but short (1,500 steps: learning from step 1,000, an update every
100 steps, the target network copied every 200), with the same seed (1).

The script draws its actions from `random` and the action space (seeded by the script) and
its batches from `np.random` (the replay buffer): a port that starts from the same weights
takes the same actions and trains on the same batches, so the whole short run can be
compared. The TensorBoard writer is replaced by one that records what the script logs.

Records, in this order:
- `param.dense{0,1,2}.{weight,bias}`: the initial Q-network (weights in torch's (out, in)
  layout: flax's kernel transposed); the port loads them;
- what the script logs, in the order it logs it: `episodic_return.<step>` for each finished
  episode, `td_loss.<step>` (the mean squared TD error of the update at that step) and
  `q_values.<step>` (the mean Q-value of the taken actions) for the updates at steps
  1,100 to 1,400;
- `final.param.*` and `final.target.*`: the Q-network and the target network after the run.
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
created = []


def recording_create(cls, **kwargs):
    """TrainState.create, recording the initial parameters the first time."""
    if not created:
        record_params("param", kwargs["params"])
    created.append(True)
    return create(cls, **kwargs)


train_state.TrainState.create = classmethod(recording_create)
sys.argv = ["cleanrl/dqn_jax.py", *ARGS]
script = runpy.run_path("cleanrl/dqn_jax.py", run_name="__main__")
record_params("final.param", script["q_state"].params)
record_params("final.target", script["q_state"].target_params)
