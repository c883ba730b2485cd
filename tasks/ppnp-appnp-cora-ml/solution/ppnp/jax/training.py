from typing import Tuple
import time
import logging

import numpy as np
import jax
import jax.numpy as jnp
import optax

from ..data.sparsegraph import SparseGraph
from ..preprocessing import gen_seeds, gen_splits, normalize_attributes
from .earlystopping import EarlyStopping, stopping_args
from .utils import matrix_to_jax


def nll_loss(log_preds, labels):
    return -jnp.mean(jnp.take_along_axis(log_preds, labels[:, None], axis=1))


def make_epoch(model, attr_mat_norm, idx_all, labels_all, reg_lambda, optimizer):
    """One epoch as the source runs it: a training step on the training nodes (dropout on,
    statistics from that forward pass), then the early-stopping nodes evaluated (dropout off)."""
    labels = {phase: jnp.asarray(labels_all[idx]) for phase, idx in idx_all.items()}
    idx = {phase: jnp.asarray(ind) for phase, ind in idx_all.items()}

    def loss_fn(params, phase, key, training):
        log_preds = model.apply(params, attr_mat_norm, idx[phase], key, training)
        cross_entropy_mean = nll_loss(log_preds, labels[phase])
        l2_reg = sum(jnp.sum(param ** 2) for param in model.reg_params(params))
        loss = cross_entropy_mean + reg_lambda / 2 * l2_reg
        acc = jnp.mean(jnp.argmax(log_preds, axis=1) == labels[phase])
        return loss, acc

    @jax.jit
    def epoch(params, opt_state, key):
        (train_loss, train_acc), grads = jax.value_and_grad(
                loss_fn, has_aux=True)(params, 'train', key, True)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        params = optax.apply_updates(params, updates)
        stopping_loss, stopping_acc = loss_fn(params, 'stopping', key, False)
        return params, opt_state, (train_loss, train_acc, stopping_loss, stopping_acc)

    return epoch


def train_model(
        name: str, model_class, graph: SparseGraph, model_args: dict,
        learning_rate: float, reg_lambda: float,
        idx_split_args: dict = {'ntrain_per_class': 20, 'nstopping': 500, 'nknown': 1500, 'seed': 2413340114},
        stopping_args: dict = stopping_args,
        test: bool = False, seed: int = None, print_interval: int = 10) -> Tuple[object, dict]:
    labels_all = graph.labels
    idx_np = {}
    idx_np['train'], idx_np['stopping'], idx_np['valtest'] = gen_splits(
            labels_all, idx_split_args, test=test)

    logging.log(21, f"{model_class.__name__}: {model_args}")
    if seed is None:
        seed = gen_seeds()
    key = jax.random.PRNGKey(int(seed))
    logging.log(22, f"JAX seed: {seed}")

    nfeatures = graph.attr_matrix.shape[1]
    nclasses = max(labels_all) + 1
    model = model_class(nfeatures, nclasses, **model_args)
    key, init_key = jax.random.split(key)
    params = model.init(init_key)

    optimizer = optax.adam(learning_rate)
    opt_state = optimizer.init(params)

    early_stopping = EarlyStopping(**stopping_args)
    attr_mat_norm_np = normalize_attributes(graph.attr_matrix)
    attr_mat_norm = matrix_to_jax(attr_mat_norm_np)
    epoch_step = make_epoch(model, attr_mat_norm, {k: idx_np[k] for k in ('train', 'stopping')},
                            labels_all, reg_lambda, optimizer)

    epoch_stats = {'train': {}, 'stopping': {}}

    start_time = time.time()
    last_time = start_time
    for epoch in range(early_stopping.max_epochs):
        key, epoch_key = jax.random.split(key)
        params, opt_state, stats = epoch_step(params, opt_state, epoch_key)
        train_loss, train_acc, stopping_loss, stopping_acc = (float(s) for s in stats)
        epoch_stats['train'] = {'loss': train_loss, 'acc': train_acc}
        epoch_stats['stopping'] = {'loss': stopping_loss, 'acc': stopping_acc}

        if epoch % print_interval == 0:
            duration = time.time() - last_time
            last_time = time.time()
            logging.info(f"Epoch {epoch}: "
                         f"Train loss = {epoch_stats['train']['loss']:.2f}, "
                         f"train acc = {epoch_stats['train']['acc'] * 100:.1f}, "
                         f"early stopping loss = {epoch_stats['stopping']['loss']:.2f}, "
                         f"early stopping acc = {epoch_stats['stopping']['acc'] * 100:.1f} "
                         f"({duration:.3f} sec)")

        if len(early_stopping.stop_vars) > 0:
            stop_vars = [epoch_stats['stopping'][key_]
                         for key_ in early_stopping.stop_vars]
            if early_stopping.check(stop_vars, epoch, params):
                break
    runtime = time.time() - start_time
    runtime_perepoch = runtime / (epoch + 1)
    logging.log(22, f"Last epoch: {epoch}, best epoch: {early_stopping.best_epoch} ({runtime:.3f} sec)")

    # The best epoch's parameters
    params = early_stopping.best_state

    train_preds = get_predictions(model, params, attr_mat_norm, idx_np['train'])
    train_acc = (train_preds == labels_all[idx_np['train']]).mean()

    stopping_preds = get_predictions(model, params, attr_mat_norm, idx_np['stopping'])
    stopping_acc = (stopping_preds == labels_all[idx_np['stopping']]).mean()
    logging.log(21, f"Early stopping accuracy: {stopping_acc * 100:.1f}%")

    valtest_preds = get_predictions(model, params, attr_mat_norm, idx_np['valtest'])
    valtest_acc = (valtest_preds == labels_all[idx_np['valtest']]).mean()
    valtest_name = 'Test' if test else 'Validation'
    logging.log(22, f"{valtest_name} accuracy: {valtest_acc * 100:.1f}%")

    result = {}
    result['predictions'] = get_predictions(model, params, attr_mat_norm, np.arange(len(labels_all)))
    result['train'] = {'accuracy': train_acc}
    result['early_stopping'] = {'accuracy': stopping_acc}
    result['valtest'] = {'accuracy': valtest_acc}
    result['runtime'] = runtime
    result['runtime_perepoch'] = runtime_perepoch

    return (model, params), result


def get_predictions(model, params, attr_matrix, idx):
    log_preds = model.apply(params, attr_matrix, jnp.asarray(idx), training=False)
    return np.asarray(jnp.argmax(log_preds, axis=1))
