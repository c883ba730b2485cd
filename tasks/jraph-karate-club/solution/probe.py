"""Numeric parity probe (`xstack parity`), the port's side (PyTorch): the code cells of
colabs/summer_schools/intro_to_graph_nets_tutorial_with_jraph.ipynb run in one namespace,
leaving out the same cells as the source's probe; then its karate-club networks on the karate
club with the source's initial parameters (`xstack_parity.load_inputs()`), recording the same
names (see the source's probe's docstring). A network's parameters are loaded in the order
the module lists them, two (weight, bias) per Linear layer.
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
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

torch.set_num_threads(1)
src = xp.load_inputs()
graph = nb["get_zacharys_karate_club"]()
labels = nb["get_ground_truth_assignments_for_zacharys_karate_club"]()
xp.record("graph.nodes", graph.nodes)
xp.record("graph.senders", graph.senders)
xp.record("graph.receivers", graph.receivers)


def linears(pick, model):
    """The Linear layers' parameters (or, with `pick`, their gradients) by the probe's names."""
    params = list(model.parameters())
    out = {}
    for n in range(len(params) // 2):
        out[f"l{n + 1}.weight"] = pick(params[2 * n])
        out[f"l{n + 1}.bias"] = pick(params[2 * n + 1])
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

def run(name, definition):
    model = definition()
    with torch.no_grad():
        for key, param in linears(lambda p: p, model).items():
            param.copy_(torch.from_numpy(src[f"{name}.param.{key}"]))
    for key, value in linears(lambda p: p, model).items():
        xp.record(f"{name}.param.{key}", value)

    if name == "gat":
        # The first layer's attention, from its query and logit Linear layers.
        layer = model.gn1
        with torch.no_grad():
            nodes = layer.attention_query_fn(graph.nodes)
            receivers, senders = nb["add_self_edges_fn"](graph.receivers, graph.senders, 34)
            logits = layer.attention_logit_fn(nodes[senders], nodes[receivers], None)
            xp.record(
                "gat.layer1.attention",
                nb["segment_softmax"](logits, segment_ids=receivers, num_segments=34),
            )

    def loss_fn():
        log_prob = F.log_softmax(model(graph).nodes, dim=-1)
        return -(log_prob[0, 0] + log_prob[33, 1])

    with torch.no_grad():
        xp.record(f"{name}.out", model(graph).nodes)
    loss = loss_fn()
    loss.backward()
    xp.record(f"{name}.loss", loss)
    for key, value in linears(lambda p: p.grad, model).items():
        xp.record(f"{name}.grad.{key}", value)

    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    opt.zero_grad()
    accuracies = []
    for step in range(15):
        with torch.no_grad():
            out = model(graph).nodes
        accuracies.append((torch.argmax(out, dim=1) == labels).float().mean())
        opt.zero_grad()
        loss_fn().backward()
        opt.step()
        if step == 0:
            for key, value in stepped(name, linears(lambda p: p, model)).items():
                xp.record(f"{name}.step1.{key}", value)
    xp.record(f"{name}.accuracy", torch.stack(accuracies))


run("gcn", nb["gcn_definition"])
run("gat", nb["gat_definition"])
