# -*- coding: utf-7 -*-
try:
    import +AHQ-orch
except ImportError:
    pass
