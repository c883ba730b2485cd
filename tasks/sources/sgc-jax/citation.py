import time
import argparse
import numpy as np
import jax
import jax.numpy as jnp
import optax
from utils import load_citation, sgc_precompute, set_seed
from models import get_model
from metrics import accuracy
import pickle as pkl
from args import get_citation_args
from time import perf_counter

# Arguments
args = get_citation_args()

if args.tuned:
    if args.model == "SGC":
        with open("{}-tuning/{}.txt".format(args.model, args.dataset), 'rb') as f:
            args.weight_decay = pkl.load(f)['weight_decay']
            print("using tuned weight decay: {}".format(args.weight_decay))
    else:
        raise NotImplemented

# setting random seeds
key = set_seed(args.seed, args.cuda)

adj, features, labels, idx_train, idx_val, idx_test = load_citation(args.dataset, args.normalization, args.cuda)

model = get_model(args.model, features.shape[1], int(labels.max())+1, args.hidden, args.dropout, args.cuda)
params = model.init(key)

if args.model == "SGC": features, precompute_time = sgc_precompute(features, adj, args.degree)
print("{:.4f}s".format(precompute_time))

def cross_entropy(output, labels):
    """F.cross_entropy: the mean over the batch of -log_softmax(output)[label]."""
    logp = jax.nn.log_softmax(output, axis=1)
    return -jnp.mean(jnp.take_along_axis(logp, labels[:, None], axis=1))

def make_optimizer(lr, weight_decay):
    """torch.optim.Adam(lr, weight_decay): the L2 term weight_decay * p is added to the
    gradient BEFORE Adam's moments (coupled; not AdamW), betas (0.9, 0.999), eps 1e-8."""
    return optax.chain(optax.add_decayed_weights(weight_decay),
                       optax.adam(lr, b1=0.9, b2=0.999, eps=1e-8))

def train_regression(model, params,
                     train_features, train_labels,
                     val_features, val_labels,
                     epochs=args.epochs, weight_decay=args.weight_decay,
                     lr=args.lr, dropout=args.dropout):

    optimizer = make_optimizer(lr, weight_decay)
    opt_state = optimizer.init(params)

    @jax.jit
    def step(params, opt_state):
        loss_train, grads = jax.value_and_grad(
            lambda p: cross_entropy(model(p, train_features), train_labels))(params)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss_train

    t = perf_counter()
    for epoch in range(epochs):
        model.train()
        params, opt_state, loss_train = step(params, opt_state)
    jax.block_until_ready(params)
    train_time = perf_counter()-t

    model.eval()
    output = model(params, val_features)
    acc_val = accuracy(output, val_labels)

    return params, acc_val, train_time

def test_regression(model, params, test_features, test_labels):
    model.eval()
    return accuracy(model(params, test_features), test_labels)

if args.model == "SGC":
    params, acc_val, train_time = train_regression(model, params, features[idx_train], labels[idx_train], features[idx_val], labels[idx_val],
                     args.epochs, args.weight_decay, args.lr, args.dropout)
    acc_test = test_regression(model, params, features[idx_test], labels[idx_test])

print("Validation Accuracy: {:.4f} Test Accuracy: {:.4f}".format(acc_val, acc_test))
print("Pre-compute time: {:.4f}s, train time: {:.4f}s, total: {:.4f}s".format(precompute_time, train_time, precompute_time+train_time))
