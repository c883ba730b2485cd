"""
Sample from a trained model (the JAX port: reads the ckpt.pkl that train.py writes)
"""
import os
import pickle
import jax
import jax.numpy as jnp
from model import GPTConfig, GPT

# -----------------------------------------------------------------------------
init_from = 'resume' # 'resume' (from an out_dir); GPT-2 weights are not part of this port
out_dir = 'out' # ignored if init_from is not 'resume'
start = "\n" # or "<|endoftext|>" or etc. Can also specify a file, use as: "FILE:prompt.txt"
num_samples = 10 # number of samples to draw
max_new_tokens = 500 # number of tokens generated in each sample
temperature = 0.8 # 1.0 = no change, < 1.0 = less random, > 1.0 = more random, in predictions
top_k = 200 # retain only the top_k most likely tokens, clamp others to have 0 probability
seed = 1337
device = 'cuda' # 'cpu', or 'cuda' / 'cuda:N' for an accelerator JAX finds
dtype = 'float32' # kept for the command line; the port computes in float32
compile = False # kept for the command line; generation is jax.jit-compiled
exec(open('configurator.py').read()) # overrides from command line or config file
# -----------------------------------------------------------------------------

key = jax.random.PRNGKey(seed)
if 'cuda' not in device:
    jax.config.update('jax_default_device', jax.devices('cpu')[0])

# model
if init_from == 'resume':
    # init from a model saved in a specific directory
    ckpt_path = os.path.join(out_dir, 'ckpt.pkl')
    with open(ckpt_path, 'rb') as f:
        checkpoint = pickle.load(f)
    gptconf = GPTConfig(**checkpoint['model_args'])
    model = GPT(gptconf)
    params = jax.tree_util.tree_map(jnp.asarray, checkpoint['model'])
elif init_from.startswith('gpt2'):
    # init from a given GPT-2 model
    model = GPT.from_pretrained(init_from, dict(dropout=0.0))

# look for the meta pickle in case it is available in the dataset folder
load_meta = False
if init_from == 'resume' and 'config' in checkpoint and 'dataset' in checkpoint['config']: # older checkpoints might not have these...
    meta_path = os.path.join('data', checkpoint['config']['dataset'], 'meta.pkl')
    load_meta = os.path.exists(meta_path)
if load_meta:
    print(f"Loading meta from {meta_path}...")
    with open(meta_path, 'rb') as f:
        meta = pickle.load(f)
    # TODO want to make this more general to arbitrary encoder/decoder schemes
    stoi, itos = meta['stoi'], meta['itos']
    encode = lambda s: [stoi[c] for c in s]
    decode = lambda l: ''.join([itos[i] for i in l])
else:
    # ok let's assume gpt-2 encodings by default
    import tiktoken
    print("No meta.pkl found, assuming GPT-2 encodings...")
    enc = tiktoken.get_encoding("gpt2")
    encode = lambda s: enc.encode(s, allowed_special={"<|endoftext|>"})
    decode = lambda l: enc.decode(l)

# encode the beginning of the prompt
if start.startswith('FILE:'):
    with open(start[5:], 'r', encoding='utf-8') as f:
        start = f.read()
start_ids = encode(start)
x = jnp.asarray(start_ids, dtype=jnp.int32)[None, ...]

# run generation
for k in range(num_samples):
    key, sub = jax.random.split(key)
    y = model.generate(params, x, max_new_tokens, sub, temperature=temperature, top_k=top_k)
    print(decode(y[0].tolist()))
    print('---------------')
