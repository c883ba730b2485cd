"""Numeric parity probe (`xstack parity`), the port's side (PyTorch): the code cells of
docs/examples/kalman_filter.ipynb but the two that call `main(...)`, run in one namespace;
then its functions on main's defaults and the source's noisy measurements
(`xstack_parity.load_inputs()["data.ys"]`: torch's generator draws other noise). The same
names as the source's probe, in its layouts (see its docstring): main's defaults, the true
system's states and noise-free measurements, the Kalman-Filter's estimates, the loss and its
gradients, and main's model defaults once `main(n_gradient_steps=2, plot=False)` has run.
"""
import os
import sys

import xstack_parity as xp

NOTEBOOK = os.path.join("docs", "examples", "kalman_filter.ipynb")

os.environ.setdefault("MPLBACKEND", "Agg")
nb = xp.notebook_namespace(NOTEBOOK, skip=lambda source: source.startswith("main("))
import torch  # noqa: E402

torch.set_num_threads(1)
src = xp.load_inputs()
main = nb["main"]


def main_defaults():
    """main's keyword defaults, by name."""
    names = main.__code__.co_varnames[: main.__code__.co_argcount]
    return dict(zip(names[len(names) - len(main.__defaults__) :], main.__defaults__))


def model_defaults(prefix):
    """Record main's defaults that training must leave as they are."""
    d = main_defaults()
    for m in ("A", "B", "C"):
        xp.record(f"{prefix}.sys_model.{m}", getattr(d["sys_model"], m))
    xp.record(f"{prefix}.sys_model_x0", d["sys_model_x0"])
    xp.record(f"{prefix}.P0", d["P0"])


d = main_defaults()
xp.record("defaults.ts", d["ts"])
for m in ("A", "B", "C"):
    xp.record(f"defaults.sys_true.{m}", getattr(d["sys_true"], m))
xp.record("defaults.sys_true_x0", d["sys_true_x0"])
xp.record("defaults.Q_root", d["Q_root"])
xp.record("defaults.R_root", d["R_root"])
model_defaults("defaults")

ts = d["ts"]
simulate = nb["simulate_lti_system"]
with torch.no_grad():
    xs, clean = simulate(d["sys_true"], d["sys_true_x0"], ts, std_measurement_noise=0.0)
xp.record("data.xs", xs)
xp.record("data.clean", clean)
# The source's noisy measurements from here on: what follows compares the filter alone.
ys = torch.from_numpy(src["data.ys"])
xp.record("data.ys", ys)

kmf = nb["KalmanFilter"](d["sys_model"], d["sys_model_x0"], d["P0"], d["Q_root"], d["R_root"])
xhats = kmf(ts, ys)
xp.record("filter.xhats", xhats)
value = torch.mean((xs - xhats) ** 2)
value.backward()
xp.record("loss", value)
xp.record("grad.Q_root", kmf.Q_root.grad)
xp.record("grad.R_root", kmf.R_root.grad)

main(n_gradient_steps=2, plot=False)
model_defaults("after_main")
sys.stdout.flush()
