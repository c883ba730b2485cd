"""Numeric parity probe (`xstack parity`), the source's side (PyTorch): cleanrl/dqn.py itself,
run as its command runs it but short (1,500 steps: learning from step 1,000, an update every
100 steps, the target network copied every 200), with the same seed (1).

The script draws its actions from `random` and the action space (seeded by the script) and
its batches from `np.random` (the replay buffer): a port that starts from the same weights
takes the same actions and trains on the same batches, so the whole short run can be
compared. The TensorBoard writer is replaced by one that records what the script logs.

Records, in this order:
- `param.dense{0,1,2}.{weight,bias}`: the initial Q-network (torch's (out, in) layout), taken
  when the script hands its parameters to Adam; the port loads them;
- what the script logs, in the order it logs it: `episodic_return.<step>` for each finished
  episode, `td_loss.<step>` (the mean squared TD error of the update at that step) and
  `q_values.<step>` (the mean Q-value of the taken actions) for the updates at steps
  1,100 to 1,400;
- `final.param.*` and `final.target.*`: the Q-network and the target network after the run.
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


class Writer:
    """A SummaryWriter that records the logged scalars instead of writing event files."""

    def __init__(self, *args, **kwargs):
        pass

    def add_text(self, *args, **kwargs):
        pass

    def add_scalar(self, tag, value, step):
        if tag in LOGGED:
            value = value.detach() if isinstance(value, torch.Tensor) else value
            xp.record(f"{LOGGED[tag]}.{step}", np.asarray(value, dtype=np.float64).reshape(()))

    def close(self):
        pass


torch.utils.tensorboard.SummaryWriter = Writer
adam_init = torch.optim.Adam.__init__


def recording_init(self, params, *args, **kwargs):
    """Adam's constructor, recording the Q-network's initial parameters first."""
    params = list(params)
    for name, param in zip(NAMES, params):
        xp.record(f"param.{name}", param.detach())
    adam_init(self, params, *args, **kwargs)


torch.optim.Adam.__init__ = recording_init
sys.argv = ["cleanrl/dqn.py", *ARGS]
script = runpy.run_path("cleanrl/dqn.py", run_name="__main__")
for prefix, network in (("final.param", script["q_network"]), ("final.target", script["target_network"])):
    for name, param in zip(NAMES, network.parameters()):
        xp.record(f"{prefix}.{name}", param.detach())
