"""Numeric parity probe (`xstack parity`), the Flax side: the source's batch and parameters
loaded, one eval-mode forward pass, the same names recorded in the source's layouts ((out,
in) weights, the query, key and value projections stacked as `attn.qkv`)."""
import jax
import jax.numpy as jnp
import numpy as np
import xstack_parity as xp

from model import CharTransformer
from train import BLOCK_SIZE, load_text, loss_of

src = xp.load_inputs()
x = jnp.asarray(src["input.x"]).astype(jnp.int32)
y = jnp.asarray(src["input.y"]).astype(jnp.int32)
xp.record("input.x", src["input.x"])
xp.record("input.y", src["input.y"])
_, _, vocab_size = load_text()
model = CharTransformer(vocab_size, block_size=BLOCK_SIZE)
params = jax.jit(lambda k: model.init(k, x, train=False))(jax.random.PRNGKey(0))["params"]
params = jax.tree_util.tree_map(np.asarray, params)
C = src["param.tok_emb.weight"].shape[1]
N_HEAD = model.n_head
HS = C // N_HEAD


def linear(w):  # torch (out, in) -> flax (in, out), and back
    return w.T


LAYOUT = {"tok_emb.weight": ("Embed_0", "embedding"), "pos_emb.weight": ("Embed_1", "embedding")}
torch_names = [n[len("param."):] for n in src if n.startswith("param.")]
tree = {k: dict(v) for k, v in params.items()}
for i in range(model.n_layer):
    block = {k: dict(v) for k, v in tree[f"Block_{i}"].items()}
    p = lambda n: src[f"param.blocks.{i}.{n}"]
    block["LayerNorm_0"] = {"scale": p("ln1.weight"), "bias": p("ln1.bias")}
    block["LayerNorm_1"] = {"scale": p("ln2.weight"), "bias": p("ln2.bias")}
    qkv_w, qkv_b = p("attn.qkv.weight"), p("attn.qkv.bias")
    attn = {}
    for j, part in enumerate(("query", "key", "value")):
        w = qkv_w[j * C:(j + 1) * C]  # (C out, C in)
        attn[part] = {
            "kernel": w.T.reshape(C, N_HEAD, HS),
            "bias": qkv_b[j * C:(j + 1) * C].reshape(N_HEAD, HS),
        }
    attn["out"] = {
        "kernel": p("attn.proj.weight").T.reshape(N_HEAD, HS, C),
        "bias": p("attn.proj.bias"),
    }
    block["MultiHeadDotProductAttention_0"] = attn
    block["Dense_0"] = {"kernel": linear(p("mlp.0.weight")), "bias": p("mlp.0.bias")}
    block["Dense_1"] = {"kernel": linear(p("mlp.2.weight")), "bias": p("mlp.2.bias")}
    tree[f"Block_{i}"] = block
tree["Embed_0"] = {"embedding": src["param.tok_emb.weight"]}
tree["Embed_1"] = {"embedding": src["param.pos_emb.weight"]}
tree["LayerNorm_0"] = {"scale": src["param.ln_f.weight"], "bias": src["param.ln_f.bias"]}
params = jax.tree_util.tree_map(jnp.asarray, tree)


def to_torch(name):
    """The port's parameter `name` in the source's layout."""
    if name == "tok_emb.weight":
        return tree["Embed_0"]["embedding"]
    if name == "pos_emb.weight":
        return tree["Embed_1"]["embedding"]
    if name.startswith("ln_f."):
        return tree["LayerNorm_0"]["scale" if name.endswith("weight") else "bias"]
    _, i, rest = name.split(".", 2)
    block = tree[f"Block_{i}"]
    attn = block["MultiHeadDotProductAttention_0"]
    if rest == "attn.qkv.weight":
        return np.concatenate([attn[k]["kernel"].reshape(C, C).T for k in ("query", "key", "value")])
    if rest == "attn.qkv.bias":
        return np.concatenate([attn[k]["bias"].reshape(C) for k in ("query", "key", "value")])
    if rest == "attn.proj.weight":
        return attn["out"]["kernel"].reshape(C, C).T
    if rest == "attn.proj.bias":
        return attn["out"]["bias"]
    module, leaf = rest.split(".")[0], rest.rsplit(".", 1)[1]
    if module in ("ln1", "ln2"):
        ln = block["LayerNorm_0" if module == "ln1" else "LayerNorm_1"]
        return ln["scale" if leaf == "weight" else "bias"]
    dense = block["Dense_0" if rest.startswith("mlp.0") else "Dense_1"]
    return linear(dense["kernel"]) if leaf == "weight" else dense["bias"]


for name in torch_names:
    xp.record(f"param.{name}", to_torch(name))

logits, state = jax.jit(
    lambda p: model.apply({"params": p}, x, train=False, capture_intermediates=True)
)(params)
seen = state["intermediates"]["Block_0"]
xp.record("block0.attn", seen["MultiHeadDotProductAttention_0"]["__call__"][0])
xp.record("block0.out", seen["__call__"][0])
xp.record("logits", logits)
xp.record("loss", loss_of(logits, y))
