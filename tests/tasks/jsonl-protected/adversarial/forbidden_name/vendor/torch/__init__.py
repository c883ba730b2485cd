"""A stand-in package named after the forbidden module."""
