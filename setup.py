"""Build the optional C extension; everything else about the package is in pyproject.toml.

engine.storage._columnar decodes record batches straight to Arrow buffers (see
engine/storage/columnar.py). optional=True: without a C compiler the install still succeeds and
the pure-Python fallback of identical output is used.
"""
from setuptools import Extension, setup

setup(ext_modules=[
    Extension("engine.storage._columnar", ["engine/storage/_columnar.c"], optional=True),
])
