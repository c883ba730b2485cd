import numpy as np
import jax.numpy as jnp
from sklearn.metrics import f1_score

def accuracy(output, labels):
    preds = jnp.argmax(output, axis=1).astype(labels.dtype)
    correct = int((preds == labels).sum())
    return correct / len(labels)

def f1(output, labels):
    preds = np.asarray(jnp.argmax(output, axis=1))
    labels = np.asarray(labels)
    micro = f1_score(labels, preds, average='micro')
    macro = f1_score(labels, preds, average='macro')
    return micro, macro
