"""Numeric parity probe (`xstack parity`), the source's side (JAX/Haiku/jraph): the code
cells of colabs/summer_schools/intro_to_graph_nets_tutorial_with_jraph.ipynb run in one
namespace, leaving out the two training runs (cells 61 and 76), the cells that show or draw
their result and the drawings; then its karate-club networks on the karate club.

Records, in this order, for `gcn` (gcn_definition) and then `gat` (gat_definition):
- `graph.nodes`, `graph.senders`, `graph.receivers`: the karate club (get_zacharys_karate_club);
- `NET.param.*`: the parameters optimize_club starts from (`network.init(PRNGKey(42), graph)`),
  each Linear as `lN.weight` (out, in: torch's layout) and `lN.bias`, N numbering them in the
  order a torch module lists them (for the GCN: the first layer's, then the second's; for the
  GAT: layer 1's query and attention logit, then layer 2's query, attention logit and update);
  the port loads them;
- `gat.layer1.attention`: the attention weights of the GAT's first layer (one per edge, the
  156 edges and then the 34 self-edges), a softmax over the edges into each node;
- `NET.out` (34, 2), `NET.loss` (optimize_club's prediction_loss) and its gradients
  `NET.grad.*`;
- `NET.step1.*`: the parameters after one step of optax.adam(1e-2) (of the GAT's
  attention-logit layers, the sender half of the weight only: `stepped`);
- `NET.accuracy`: the 15 accuracies optimize_club prints (before each of its 15 steps), from
  those parameters.
"""
import os

os.environ.setdefault("MPLBACKEND", "Agg")

import xstack_parity as xp  # noqa: E402

NOTEBOOK = os.path.join(
    "colabs", "summer_schools", "intro_to_graph_nets_tutorial_with_jraph.ipynb"
)


def skipped(source):
    """The training runs, what shows or draws their result, and the drawings."""
    return (
        ("optimize_club(network" in source and not source.startswith("def "))
        or source == "result"
        or source.startswith(("draw_jraph_graph_structure(", "nx_graph =", "zacharys_karate_club ="))
    )


nb = xp.notebook_namespace(NOTEBOOK, skip=skipped)
import haiku as hk  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import jraph  # noqa: E402
import optax  # noqa: E402

graph = nb["get_zacharys_karate_club"]()
labels = nb["get_ground_truth_assignments_for_zacharys_karate_club"]()
xp.record("graph.nodes", graph.nodes)
xp.record("graph.senders", graph.senders)
xp.record("graph.receivers", graph.receivers)


def linears(params, order):
    """The Linear layers' parameters, in torch's layout, by the probe's names."""
    out = {}
    for n, module in enumerate(order, start=1):
        out[f"l{n}.weight"] = params[module]["w"].T
        out[f"l{n}.bias"] = params[module]["b"]
    return out



def stepped(name, params):
    """The parameters after a step, by the probe's names, but the GAT's attention-logit biases
    and the receiver half of their weights: the softmax over each node's incoming edges does
    not change when a logit term that is the same for all of them (a bias, the receiver's
    features) changes, so their gradients are zero up to rounding (1e-10) and Adam's first
    step (about lr * g / (|g| + eps)) turns that rounding into steps of 1e-4 that differ."""
    if name != "gat":
        return params
    out = {}
    for key, value in params.items():
        if key in ("l2.bias", "l4.bias"):
            continue
        out[key + (".sender" if key in ("l2.weight", "l4.weight") else "")] = (
            value[:, :8] if key in ("l2.weight", "l4.weight") else value
        )
    return out

def run(name, definition, order, shapes):
    network = hk.without_apply_rng(hk.transform(definition))
    params = network.init(jax.random.PRNGKey(42), graph)
    assert sorted(params) == sorted(order), sorted(params)
    assert [params[m]["w"].shape for m in order] == shapes, params
    for key, value in linears(params, order).items():
        xp.record(f"{name}.param.{key}", value)

    if name == "gat":
        # The first layer's attention, from its query and logit Linear layers.
        query, logit = params[order[0]], params[order[1]]
        nodes = graph.nodes @ query["w"] + query["b"]
        receivers, senders = nb["add_self_edges_fn"](graph.receivers, graph.senders, 34)
        x = jnp.concatenate((nodes[senders], nodes[receivers]), axis=1)
        logits = x @ logit["w"] + logit["b"]
        xp.record(
            "gat.layer1.attention",
            jraph.segment_softmax(logits, segment_ids=receivers, num_segments=34),
        )

    def loss_fn(p):
        log_prob = jax.nn.log_softmax(network.apply(p, graph).nodes)
        return -(log_prob[0, 0] + log_prob[33, 1])

    xp.record(f"{name}.out", network.apply(params, graph).nodes)
    loss, grads = jax.value_and_grad(loss_fn)(params)
    xp.record(f"{name}.loss", loss)
    for key, value in linears(grads, order).items():
        xp.record(f"{name}.grad.{key}", value)

    opt = optax.adam(1e-2)
    state = opt.init(params)
    accuracies = []
    current = params
    for step in range(15):
        out = network.apply(current, graph).nodes
        accuracies.append(jnp.mean(jnp.argmax(out, axis=1) == labels))
        updates, state = opt.update(jax.grad(loss_fn)(current), state)
        current = optax.apply_updates(current, updates)
        if step == 0:
            for key, value in stepped(name, linears(current, order)).items():
                xp.record(f"{name}.step1.{key}", value)
    xp.record(f"{name}.accuracy", jnp.stack(accuracies))


run("gcn", nb["gcn_definition"], ["linear", "linear_1"], [(34, 8), (8, 2)])
# Layer 2's update Linear is built (and named) before its query and logit Linear layers.
run(
    "gat",
    nb["gat_definition"],
    ["linear", "linear_1", "linear_3", "linear_4", "linear_2"],
    [(34, 8), (16, 1), (8, 8), (16, 1), (8, 2)],
)
