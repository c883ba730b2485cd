"""Numeric parity probe (`xstack parity`), the source's side (JAX): the code cells of
docs/examples/kalman_filter.ipynb but the two that call `main(...)`, run in one namespace;
then its functions on main's defaults.

Records, in this order:
- `defaults.*`: main's keyword defaults (the times, both systems' A, B, C, the initial
  states, Q_root, R_root, P0);
- `data.xs` and `data.clean`: the true system's states and its noise-free measurements
  (`simulate_lti_system` with `std_measurement_noise=0.0`), then `data.ys`, the noisy
  measurements of main's data (the port loads them: its generator draws other noise);
- `filter.xhats`: the Kalman-Filter's state estimates from those measurements with main's
  initial Q_root and R_root, `loss` (the mean squared error against `data.xs`) and its
  gradients `grad.Q_root`, `grad.R_root`;
- `after_main.*`: main's defaults for the model system (A, B, C), its initial state and P0
  once `main(n_gradient_steps=2, plot=False)` has run: training changes Q_root and R_root
  only, so these are as they were.
"""
import os
import sys

import xstack_parity as xp

NOTEBOOK = os.path.join("docs", "examples", "kalman_filter.ipynb")

os.environ.setdefault("MPLBACKEND", "Agg")
nb = xp.notebook_namespace(NOTEBOOK, skip=lambda source: source.startswith("main("))
import equinox as eqx  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402

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
xs, clean = simulate(d["sys_true"], d["sys_true_x0"], ts, std_measurement_noise=0.0)
xp.record("data.xs", xs)
xp.record("data.clean", clean)
_, ys = simulate(
    d["sys_true"], d["sys_true_x0"], ts, std_measurement_noise=d["sys_true_std_measurement_noise"]
)
xp.record("data.ys", ys)

kmf = nb["KalmanFilter"](d["sys_model"], d["sys_model_x0"], d["P0"], d["Q_root"], d["R_root"])
xp.record("filter.xhats", kmf(ts, ys))


def loss(Q_root, R_root):
    """main's loss as a function of the two trained matrices."""
    model = eqx.tree_at(lambda k: (k.Q_root, k.R_root), kmf, replace=(Q_root, R_root))
    return jnp.mean((xs - model(ts, ys)) ** 2)


value, (grad_Q, grad_R) = jax.value_and_grad(loss, argnums=(0, 1))(kmf.Q_root, kmf.R_root)
xp.record("loss", value)
xp.record("grad.Q_root", grad_Q)
xp.record("grad.R_root", grad_R)

main(n_gradient_steps=2, plot=False)
model_defaults("after_main")
sys.stdout.flush()
