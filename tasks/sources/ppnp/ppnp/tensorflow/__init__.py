from .ppnp import *
from .training import *
from .utils import *
