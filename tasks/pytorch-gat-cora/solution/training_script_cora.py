"""GAT on Cora in JAX: the port of training_script_cora.py (same command line, same loop, same
patience rule, same printed lines)."""
import argparse
import os
import pickle
import time


import jax
import jax.numpy as jnp
import optax


from models.definitions.GAT import GAT
from utils.data_loading import load_graph_data
from utils.constants import *
import utils.utils as utils


def seed_key():
    """The source seeds nothing (every run draws fresh weights and dropout masks): the key comes
    from XSTACK_SEED when it is set, else from the operating system's entropy."""
    seed = os.environ.get('XSTACK_SEED')
    return jax.random.PRNGKey(int(seed) if seed is not None else int.from_bytes(os.urandom(4), 'little'))


def cross_entropy_loss(scores, labels):
    """nn.CrossEntropyLoss(reduction='mean')."""
    return -jnp.mean(jnp.take_along_axis(jax.nn.log_softmax(scores, -1), labels[:, None], axis=-1))


def make_optimizer(config):
    """torch's Adam(lr, weight_decay): an L2 term (weight_decay * p) added to the gradient of every
    parameter before Adam's moments (not AdamW's decoupled decay), betas (0.9, 0.999), eps 1e-8."""
    return optax.chain(optax.add_decayed_weights(config['weight_decay']), optax.adam(config['lr']))


def get_main_loop(config, gat, optimizer, node_features, node_labels, edge_index, train_indices, val_indices,
                  test_indices, patience_period, time_start, key):
    state = {'params': gat.params, 'opt_state': optimizer.init(gat.params), 'key': key}

    train_labels = node_labels[train_indices]
    val_labels = node_labels[val_indices]
    test_labels = node_labels[test_indices]

    def train_loss(params, dropout_key):
        scores = gat.apply(params, node_features, edge_index, True, dropout_key)[train_indices]
        return cross_entropy_loss(scores, train_labels), scores

    @jax.jit
    def train_step(params, opt_state, dropout_key):
        (loss, scores), grads = jax.value_and_grad(train_loss, has_aux=True)(params, dropout_key)
        updates, opt_state = optimizer.update(grads, opt_state, params)
        params = optax.apply_updates(params, updates)
        accuracy = jnp.mean(jnp.argmax(scores, -1) == train_labels)
        return params, opt_state, loss, accuracy

    @jax.jit
    def evaluate(params, indices, labels):
        scores = gat.apply(params, node_features, edge_index, False, jax.random.PRNGKey(0))[indices]
        correct = jnp.sum(jnp.argmax(scores, -1) == labels)
        return cross_entropy_loss(scores, labels), correct

    def main_loop(phase, epoch=0):
        global BEST_VAL_PERF, BEST_VAL_LOSS, PATIENCE_CNT

        if phase == LoopPhase.TRAIN:
            state['key'], dropout_key = jax.random.split(state['key'])
            state['params'], state['opt_state'], loss, accuracy = train_step(
                state['params'], state['opt_state'], dropout_key)
            gat.params = state['params']

            # Save model checkpoint
            if config['checkpoint_freq'] is not None and (epoch + 1) % config['checkpoint_freq'] == 0:
                ckpt_model_name = f'gat_{config["dataset_name"]}_ckpt_epoch_{epoch + 1}.pth'
                config['test_perf'] = -1
                with open(os.path.join(CHECKPOINTS_PATH, ckpt_model_name), 'wb') as f:
                    pickle.dump(utils.get_training_state(config, gat), f)

        elif phase == LoopPhase.VAL:
            loss, correct = evaluate(state['params'], val_indices, val_labels)
            accuracy = int(correct) / len(val_labels)
            loss = float(loss)

            # Log to console
            if config['console_log_freq'] is not None and epoch % config['console_log_freq'] == 0:
                print(f'GAT training: time elapsed= {(time.time() - time_start):.2f} [s] | epoch={epoch + 1} | val acc={accuracy}')

            # The patience: reset when the val accuracy or the val loss improves on the best seen so far
            if accuracy > BEST_VAL_PERF or loss < BEST_VAL_LOSS:
                BEST_VAL_PERF = max(accuracy, BEST_VAL_PERF)
                BEST_VAL_LOSS = min(loss, BEST_VAL_LOSS)
                PATIENCE_CNT = 0
            else:
                PATIENCE_CNT += 1

            if PATIENCE_CNT >= patience_period:
                raise Exception('Stopping the training, the universe has no more patience for this training.')

        else:
            _, correct = evaluate(state['params'], test_indices, test_labels)
            return int(correct) / len(test_labels)

    return main_loop


def train_gat_cora(config):
    global BEST_VAL_PERF, BEST_VAL_LOSS

    if config['enable_tensorboard']:
        raise Exception('--enable_tensorboard is not ported (it used torch.utils.tensorboard).')

    # Step 1: load the graph data
    node_features, node_labels, edge_index, train_indices, val_indices, test_indices = load_graph_data(config)

    # Step 2: prepare the model
    init_key, loop_key = jax.random.split(seed_key())
    gat = GAT(
        num_of_layers=config['num_of_layers'],
        num_heads_per_layer=config['num_heads_per_layer'],
        num_features_per_layer=config['num_features_per_layer'],
        add_skip_connection=config['add_skip_connection'],
        bias=config['bias'],
        dropout=config['dropout'],
        layer_type=config['layer_type'],
        log_attention_weights=False,
        key=init_key,
    )

    # Step 3: the optimizer (torch's Adam with its coupled weight decay)
    optimizer = make_optimizer(config)

    main_loop = get_main_loop(
        config,
        gat,
        optimizer,
        node_features,
        node_labels,
        edge_index,
        train_indices,
        val_indices,
        test_indices,
        config['patience_period'],
        time.time(),
        loop_key)

    BEST_VAL_PERF, BEST_VAL_LOSS, PATIENCE_CNT = [0, 0, 0]  # reset vars used for early stopping

    # Step 4: Start the training procedure
    for epoch in range(config['num_of_epochs']):
        main_loop(phase=LoopPhase.TRAIN, epoch=epoch)
        try:
            main_loop(phase=LoopPhase.VAL, epoch=epoch)
        except Exception as e:  # "patience has run out" exception :O
            print(str(e))
            break

    # Step 5: Potentially test your model
    if config['should_test']:
        test_acc = main_loop(phase=LoopPhase.TEST)
        config['test_perf'] = test_acc
        print(f'Test accuracy = {test_acc}')
    else:
        config['test_perf'] = -1

    # Save the latest GAT in the binaries directory
    with open(os.path.join(BINARIES_PATH, utils.get_available_binary_name(config['dataset_name'])), 'wb') as f:
        pickle.dump(utils.get_training_state(config, gat), f)


def get_training_args():
    parser = argparse.ArgumentParser()

    # Training related
    parser.add_argument("--num_of_epochs", type=int, help="number of training epochs", default=10000)
    parser.add_argument("--patience_period", type=int, help="number of epochs with no improvement on val before terminating", default=1000)
    parser.add_argument("--lr", type=float, help="model learning rate", default=5e-3)
    parser.add_argument("--weight_decay", type=float, help="L2 regularization on model weights", default=5e-4)
    parser.add_argument("--should_test", action='store_true', help='should test the model on the test dataset? (no by default)')

    # Dataset related
    parser.add_argument("--dataset_name", choices=[el.name for el in DatasetType], help='dataset to use for training', default=DatasetType.CORA.name)
    parser.add_argument("--should_visualize", action='store_true', help='should visualize the dataset? (no by default)')

    # Logging/debugging/checkpoint related (helps a lot with experimentation)
    parser.add_argument("--enable_tensorboard", action='store_true', help="enable tensorboard logging (no by default)")
    parser.add_argument("--console_log_freq", type=int, help="log to output console (epoch) freq (None for no logging)", default=100)
    parser.add_argument("--checkpoint_freq", type=int, help="checkpoint model saving (epoch) freq (None for no logging)", default=1000)
    args = parser.parse_args()

    # Model architecture related
    gat_config = {
        "num_of_layers": 2,
        "num_heads_per_layer": [8, 1],
        "num_features_per_layer": [CORA_NUM_INPUT_FEATURES, 8, CORA_NUM_CLASSES],
        "add_skip_connection": False,  # hurts perf on Cora
        "bias": True,
        "dropout": 0.6,
        "layer_type": LayerType.IMP3
    }

    training_config = dict()
    for arg in vars(args):
        training_config[arg] = getattr(args, arg)
    training_config.update(gat_config)

    return training_config


if __name__ == '__main__':

    # Train the graph attention network (GAT)
    train_gat_cora(get_training_args())
