import numpy as np
import scipy.sparse as sp
import jax
import jax.numpy as jnp
from jax.experimental import sparse as jsparse
import sys
import pickle as pkl
import networkx as nx
from normalization import fetch_normalization, row_normalize
from time import perf_counter

def parse_index_file(filename):
    """Parse index file."""
    index = []
    for line in open(filename):
        index.append(int(line.strip()))
    return index

def preprocess_citation(adj, features, normalization="FirstOrderGCN"):
    adj_normalizer = fetch_normalization(normalization)
    adj = adj_normalizer(adj)
    features = row_normalize(features)
    return adj, features

def sparse_mx_to_jax_sparse_tensor(sparse_mx):
    """Convert a scipy sparse matrix to a JAX sparse (BCOO) float32 tensor."""
    sparse_mx = sparse_mx.tocoo().astype(np.float32)
    indices = np.vstack((sparse_mx.row, sparse_mx.col)).astype(np.int32).T
    values = sparse_mx.data
    return jsparse.BCOO((jnp.asarray(values), jnp.asarray(indices)), shape=sparse_mx.shape)

def load_citation(dataset_str="cora", normalization="AugNormAdj", cuda=True):
    """
    Load Citation Networks Datasets.
    """
    names = ['x', 'y', 'tx', 'ty', 'allx', 'ally', 'graph']
    objects = []
    for i in range(len(names)):
        with open("data/ind.{}.{}".format(dataset_str.lower(), names[i]), 'rb') as f:
            if sys.version_info > (3, 0):
                objects.append(pkl.load(f, encoding='latin1'))
            else:
                objects.append(pkl.load(f))

    x, y, tx, ty, allx, ally, graph = tuple(objects)
    test_idx_reorder = parse_index_file("data/ind.{}.test.index".format(dataset_str))
    test_idx_range = np.sort(test_idx_reorder)

    if dataset_str == 'citeseer':
        # Fix citeseer dataset (there are some isolated nodes in the graph)
        # Find isolated nodes, add them as zero-vecs into the right position
        test_idx_range_full = range(min(test_idx_reorder), max(test_idx_reorder)+1)
        tx_extended = sp.lil_matrix((len(test_idx_range_full), x.shape[1]))
        tx_extended[test_idx_range-min(test_idx_range), :] = tx
        tx = tx_extended
        ty_extended = np.zeros((len(test_idx_range_full), y.shape[1]))
        ty_extended[test_idx_range-min(test_idx_range), :] = ty
        ty = ty_extended

    features = sp.vstack((allx, tx)).tolil()
    features[test_idx_reorder, :] = features[test_idx_range, :]
    adj = nx.adjacency_matrix(nx.from_dict_of_lists(graph))
    adj = adj + adj.T.multiply(adj.T > adj) - adj.multiply(adj.T > adj)
    labels = np.vstack((ally, ty))
    labels[test_idx_reorder, :] = labels[test_idx_range, :]

    idx_test = test_idx_range.tolist()
    idx_train = range(len(y))
    idx_val = range(len(y), len(y)+500)

    adj, features = preprocess_citation(adj, features, normalization)

    # porting to JAX (arrays live on JAX's default device: nothing to move when cuda is set)
    features = jnp.asarray(np.array(features.todense()), dtype=jnp.float32)
    labels = jnp.asarray(np.argmax(labels, axis=1), dtype=jnp.int32)
    adj = sparse_mx_to_jax_sparse_tensor(adj)
    idx_train = jnp.asarray(np.array(idx_train), dtype=jnp.int32)
    idx_val = jnp.asarray(np.array(idx_val), dtype=jnp.int32)
    idx_test = jnp.asarray(np.array(idx_test), dtype=jnp.int32)

    return adj, features, labels, idx_train, idx_val, idx_test

def sgc_precompute(features, adj, degree):
    t = perf_counter()
    for i in range(degree):
        features = adj @ features
    features = features.block_until_ready()
    precompute_time = perf_counter()-t
    return features, precompute_time

def set_seed(seed, cuda):
    """Seeds NumPy's global generator and returns the JAX key the parameters are drawn from
    (JAX has no global generator: torch.manual_seed(seed) becomes jax.random.PRNGKey(seed))."""
    np.random.seed(seed)
    return jax.random.PRNGKey(seed)

def loadRedditFromNPZ(dataset_dir):
    adj = sp.load_npz(dataset_dir+"reddit_adj.npz")
    data = np.load(dataset_dir+"reddit.npz")

    return adj, data['feats'], data['y_train'], data['y_val'], data['y_test'], data['train_index'], data['val_index'], data['test_index']

def load_reddit_data(data_path="data/", normalization="AugNormAdj", cuda=True):
    adj, features, y_train, y_val, y_test, train_index, val_index, test_index = loadRedditFromNPZ("data/")
    labels = np.zeros(adj.shape[0])
    labels[train_index]  = y_train
    labels[val_index]  = y_val
    labels[test_index]  = y_test
    adj = adj + adj.T
    train_adj = adj[train_index, :][:, train_index]
    features = jnp.asarray(np.array(features), dtype=jnp.float32)
    # torch's std is the unbiased one (ddof=1)
    features = (features-features.mean(axis=0))/features.std(axis=0, ddof=1)
    adj_normalizer = fetch_normalization(normalization)
    adj = adj_normalizer(adj)
    adj = sparse_mx_to_jax_sparse_tensor(adj)
    train_adj = adj_normalizer(train_adj)
    train_adj = sparse_mx_to_jax_sparse_tensor(train_adj)
    labels = jnp.asarray(labels, dtype=jnp.int32)
    return adj, train_adj, features, labels, train_index, val_index, test_index
