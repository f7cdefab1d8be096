"""Pickling a running engine's object graph, for engine.checkpoint.

A cluster's state is a graph of plain objects, and much of it is code: the scheduler's pending
actions and the callbacks parked in brokers, clients and the network are closures (`lambda:
self._deliver(...)`, `Broker.schedule`'s `run`). `dumps`/`loads` carry the graph whole, with these
rules, which are the invariants a restored graph keeps:

- *Functions by value, globals by reference.* A nested function or lambda is pickled as its code
  (marshal), its closure cells (shared cells stay shared), defaults and attributes; restored, it
  runs on its defining module's real globals — never a copy of them. Module-level functions,
  methods and classes go by reference, as pickle does them. Marshalled code is only valid for this
  Python and this engine source: engine.checkpoint fingerprints both and refuses a mismatch.
- *Paths are relative to the data dir.* Every file path the engine keeps (PATH_FIELDS) is stored
  relative to the cluster's data dir and rebased onto the restore's data dir; a path outside the
  data dir cannot be pickled. So a restored graph only ever names files of its own data dir.
- *No OS handles.* Objects holding descriptors drop them in `__getstate__` (LogSegment, the
  indexes) and reopen by path; anything else that holds one fails to pickle, loudly.
- *Not the host's hooks.* Event-bus subscribers and the scheduler's `yield_step` belong to
  whoever drives the engine and are left out (HOST_FIELDS); the restorer attaches its own.
- *The graph is all there is.* The engine keeps no state in module-level tables keyed by its
  objects: what a broker, a client or the cluster owns is an attribute of it (a broker's group
  coordinator and producer-id block, the cluster's consumer apps and sinks) and travels with the
  graph. `side_tables()` finds any module-level weak dict, for the test that there is none.
"""
from __future__ import annotations

import contextlib
import contextvars
import gc
import importlib
import io
import marshal
import os
import pickle
import sys
import types
import weakref
from collections.abc import Callable, Iterator
from typing import Any

from engine.broker.broker import Broker
from engine.broker.controller_server import ControllerServer
from engine.cluster import Cluster
from engine.events import EventBus
from engine.node import World
from engine.raft.client import RaftClient
from engine.raft.quorum_state_store import FileQuorumStateStore
from engine.sim.scheduler import Scheduler
from engine.storage.index import OffsetIndex, TimeIndex
from engine.storage.leader_epoch_cache import LeaderEpochCache
from engine.storage.log import Log
from engine.storage.segment import LogSegment

PROTOCOL = pickle.HIGHEST_PROTOCOL

# Every attribute that holds a file path, per class. A new one must be added here: the checkpoint
# tests look for any string naming the old data dir in a restored graph.
PATH_FIELDS: dict[type, tuple[str, ...]] = {
    Cluster: ("data_dir",),
    World: ("data_dir",),
    Broker: ("data_dir",),
    Log: ("path",),
    LogSegment: ("directory", "log_path", "index_path", "time_index_path"),
    OffsetIndex: ("path",),
    TimeIndex: ("path",),
    LeaderEpochCache: ("path",),
    # KRaft: a voter's or observer's metadata log dir (reopened at its next start), its quorum-state
    # file (written on every election change), a dedicated controller's data dir.
    RaftClient: ("log_dir",),
    FileQuorumStateStore: ("path",),
    ControllerServer: ("data_dir",),
}
# Attributes that belong to the engine's host, not to the engine: left out, restored empty (the
# event bus's subscribers; the scheduler's hook for a driver of blocking calls, lab/blocking.py).
HOST_FIELDS: dict[type, dict[str, Callable[[], object]]] = {
    EventBus: {"_subscribers": list},
    Scheduler: {"yield_step": lambda: None},
}

_restore_root: contextvars.ContextVar[str] = contextvars.ContextVar("engine_restore_root")


class GraphPickleError(Exception):
    """The graph holds something a checkpoint cannot carry (a path outside the data dir, a
    function of a module that cannot be imported, an OS handle)."""


# -- pickling -----------------------------------------------------------------------------------
def dumps(graph: object, data_dir: str) -> bytes:
    """Pickle `graph`, storing paths relative to `data_dir` (an absolute path)."""
    out = io.BytesIO()
    with _no_cyclic_gc():
        _GraphPickler(out, data_dir).dump(graph)
    return out.getvalue()


class _GraphPickler(pickle.Pickler):
    def __init__(self, file: io.BytesIO, data_dir: str) -> None:
        super().__init__(file, protocol=PROTOCOL)
        self._root = data_dir.rstrip(os.sep)
        self._by_type: dict[type, Callable[[Any], Any]] = {
            types.FunctionType: self._reduce_function, types.CodeType: _reduce_code, types.CellType: _reduce_cell}
        self._by_type.update({cls: self._reduce_with_paths for cls in PATH_FIELDS})
        self._by_type.update({cls: _reduce_without_host_fields for cls in HOST_FIELDS})

    def reducer_override(self, obj: object) -> Any:
        reduce = self._by_type.get(type(obj))
        return NotImplemented if reduce is None else reduce(obj)

    def _reduce_function(self, func: types.FunctionType) -> object:
        if "<" not in func.__qualname__:
            return NotImplemented  # defined at module or class level: pickled by reference
        module = sys.modules.get(func.__module__ or "")
        if module is None or func.__globals__ is not vars(module):
            raise GraphPickleError(f"cannot checkpoint {func.__qualname__}: its globals are not module "
                                   f"{func.__module__!r}'s")
        state = (func.__defaults__, func.__kwdefaults__, func.__dict__ or None, func.__qualname__)
        return (_make_function, (func.__module__, func.__code__, func.__name__, func.__closure__),
                state, None, None, _set_function_state)

    def _reduce_with_paths(self, obj: object) -> object:
        func, args, state = _plain_reduce(obj)
        for name in PATH_FIELDS[type(obj)]:
            state[name] = self._relative(state[name], obj, name)
        return func, args, state, None, None, _set_state_with_paths

    def _relative(self, path: str, obj: object, name: str) -> str:
        if path == self._root:
            return ""
        if path.startswith(self._root + os.sep):
            return path[len(self._root) + 1:]
        raise GraphPickleError(f"{type(obj).__name__}.{name} = {path!r} is outside the data dir {self._root}")


def _plain_reduce(obj: object) -> tuple[Any, tuple, dict]:
    """(constructor, args, a copy of the state dict) of an ordinary instance."""
    reduced: Any = obj.__reduce_ex__(PROTOCOL)   # a tuple for an instance (a str names a global)
    if isinstance(reduced, str) or len(reduced) < 3 or not isinstance(reduced[2], dict) \
            or any(x is not None for x in reduced[3:]):
        raise GraphPickleError(f"{type(obj).__name__} does not pickle as an ordinary instance")
    return reduced[0], reduced[1], dict(reduced[2])


def _reduce_without_host_fields(obj: object) -> object:
    func, args, state = _plain_reduce(obj)
    for name, empty in HOST_FIELDS[type(obj)].items():
        state[name] = empty()
    return func, args, state


_CODE_BYTES: dict[int, tuple[types.CodeType, bytes]] = {}   # id -> (code kept alive, marshal)
_LOADED_CODE: dict[bytes, types.CodeType] = {}


def _reduce_code(code: types.CodeType) -> object:
    cached = _CODE_BYTES.get(id(code))
    if cached is None or cached[0] is not code:
        cached = _CODE_BYTES[id(code)] = (code, marshal.dumps(code))
    return _load_code, (cached[1],)


def _reduce_cell(cell: types.CellType) -> object:
    try:
        state = (True, cell.cell_contents)
    except ValueError:  # an empty cell: a variable not assigned yet
        state = (False, None)
    return _new_cell, (), state, None, None, _set_cell


# -- unpickling ---------------------------------------------------------------------------------
def loads(data: bytes, data_dir: str) -> object:
    """Unpickle a graph, its paths rebased onto `data_dir` (an absolute path)."""
    token = _restore_root.set(data_dir.rstrip(os.sep))
    try:
        with _no_cyclic_gc():
            return pickle.loads(data)
    finally:
        _restore_root.reset(token)


@contextlib.contextmanager
def _no_cyclic_gc() -> Iterator[None]:
    """The cyclic GC off while a graph is built or walked: it would scan the growing graph
    again and again (it doubled a restore's time), and the graph has no garbage to find."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def _load_code(data: bytes) -> types.CodeType:
    code = _LOADED_CODE.get(data)
    if code is None:
        code = _LOADED_CODE[data] = marshal.loads(data)
    return code


def _make_function(module: str, code: types.CodeType, name: str,
                   closure: tuple[types.CellType, ...] | None) -> types.FunctionType:
    globals_ = vars(sys.modules[module] if module in sys.modules else importlib.import_module(module))
    return types.FunctionType(code, globals_, name, None, closure)


def _set_function_state(func: types.FunctionType, state: tuple) -> None:
    func.__defaults__, func.__kwdefaults__, attributes, func.__qualname__ = state
    if attributes:
        func.__dict__.update(attributes)


def _new_cell() -> types.CellType:
    return types.CellType()


def _set_cell(cell: types.CellType, state: tuple[bool, object]) -> None:
    if state[0]:
        cell.cell_contents = state[1]


def _set_state_with_paths(obj: object, state: dict) -> None:
    root = _restore_root.get(None)
    if root is None:
        raise GraphPickleError("engine objects with paths are unpickled by graph_pickle.loads only")
    for name in PATH_FIELDS[type(obj)]:
        state[name] = os.path.join(root, state[name]) if state[name] else root
    setstate = getattr(obj, "__setstate__", None)
    if setstate is not None:
        setstate(state)
    else:
        obj.__dict__.update(state)


# -- side tables (there must be none) -----------------------------------------------------------
def side_tables() -> list[tuple[str, str, weakref.WeakKeyDictionary]]:
    """(module, name, table) for every module-level weak dict of the engine's loaded modules: state
    kept beside the graph, which a checkpoint would leave behind."""
    out = []
    for module_name, module in list(sys.modules.items()):
        if module is None or not (module_name == "engine" or module_name.startswith("engine.")):
            continue
        for name, value in list(vars(module).items()):
            if isinstance(value, weakref.WeakKeyDictionary):
                out.append((module_name, name, value))
    return out


