"""Build the optional C extension; everything else about the package is in pyproject.toml.

engine.broker._columnar decodes record batches straight to Arrow buffers (see
engine/broker/columnar.py). optional=True: without a C compiler the install still succeeds and
the pure-Python fallback of identical output is used.
"""
from setuptools import Extension, setup

setup(ext_modules=[
    Extension("engine.broker._columnar", ["engine/broker/_columnar.c"], optional=True),
])
