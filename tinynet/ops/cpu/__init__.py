"""CPU fast paths of ops whose readable generic code lives in :mod:`tinynet.ops`."""
