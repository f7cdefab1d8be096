"""Engine checkpoints: keep a running cluster's whole state, and start it again from there.

    cp = checkpoint.take(cluster, "/tmp/lab/checkpoints/12000")   # between two steps
    ...
    again = checkpoint.restore(cp, "/tmp/lab/run-7", on_event=host_callback)
    again.step()   # what cluster.step() did right after the take: same events, same bytes

A restored cluster continues exactly where the checkpoint was taken: the same events (kinds,
fields, `seq` numbers, virtual times), the same `state()`, the same bytes in every file, as the
original run from that point and as a replay of the same commands from the start.

A checkpoint is a directory:

    <checkpoint>/checkpoint.json   step, virtual time, event count, the original data dir, the
                                   fingerprint (Python version + engine source), engine modules
    <checkpoint>/engine.pickle     the object graph (engine.graph_pickle), zlib-compressed: the
                                   Cluster and all it reaches — scheduler heap and its pending
                                   closures, RNG states, brokers, logs, network in flight, metadata
                                   store, coordinators, clients, the event counter
    <checkpoint>/data/…            the data dir's files in one flat directory (their relative
                                   paths encoded in the names: a tree of partition dirs costs a
                                   directory block each, more than the links in them), and in
                                   checkpoint.json how each comes back (`layout`)

What is taken, and the rules that make a restore exact:
- Only between scheduler actions, on the thread that runs the engine (not from an event
  callback): `take` refuses while an action runs. Buffered index entries are handed to the OS
  first, so the files hold everything the graph knows of.
- Taking one costs a hard link per file, whatever the logs hold: sealed segment files (`.log`,
  `.index`, `.timeindex` of every segment below the newest one in a partition dir) and the
  offset and leader-epoch checkpoint files (only ever replaced by a rename) come back as links;
  the active segments' files, which the cluster goes on appending to through the same inode, are
  linked with their length recorded, and a restore copies that prefix (appends never change the
  bytes a checkpoint holds); anything else is copied. engine.storage.cow makes every write that
  changes bytes already written (a truncation, an index rebuild or rewrite) copy a shared file
  first. Where a hard link is not possible (another file system), the file is copied.
- Paths: the graph stores paths relative to the data dir; `restore` rebases them onto the data
  dir it is given — any new or empty directory, anywhere. Restored objects reopen their files by
  path when first used: no descriptor crosses a checkpoint.
- Hooks: event-bus subscribers (the cluster's `on_event`, `subscribe()` callbacks) and the
  scheduler's `yield_step` belong to the host and are not part of a checkpoint;
  `restore(..., on_event=)` attaches the new host's. A call stack cannot be saved either: a host
  that runs blocking client calls in threads of their own takes checkpoints while none runs.
- A checkpoint holds marshalled engine code, so it is valid for the Python and the engine source
  it was taken with; `restore` refuses any other (`CheckpointError`).
"""
from __future__ import annotations

import contextlib
import hashlib
import importlib
import json
import os
import shutil
import sys
import zlib
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field, fields

from engine import events as ev
from engine import graph_pickle
from engine.broker.broker import HW_CHECKPOINT, LOG_START_CHECKPOINT, RECOVERY_CHECKPOINT
from engine.cluster import Cluster
from engine.storage import leader_epoch_cache
from engine.storage.log import SEGMENT_FILE

META_FILE = "checkpoint.json"
STATE_FILE = "engine.pickle"
DATA_DIR = "data"
FORMAT_VERSION = 2
# Files the engine only ever writes whole to a temp file and renames over (engine.storage.checkpoints).
RENAMED_FILES = frozenset({HW_CHECKPOINT, RECOVERY_CHECKPOINT, LOG_START_CHECKPOINT, leader_epoch_cache.FILE_NAME})


class CheckpointError(Exception):
    """A checkpoint cannot be taken now, or cannot be restored (here, or at all)."""


@dataclass(frozen=True)
class FileCounts:
    linked_files: int = 0
    linked_bytes: int = 0
    copied_files: int = 0
    copied_bytes: int = 0


@dataclass(frozen=True)
class Checkpoint:
    """A checkpoint on disk (`path`) and what it holds."""
    path: str
    step: int                 # scheduler steps run when it was taken
    time_ms: int              # the cluster's virtual time
    events: int               # events published so far (the next event's seq)
    data_dir: str             # the data dir it was taken from
    fingerprint: str
    modules: tuple[str, ...]  # engine modules loaded (imported again before a restore)
    state_bytes: int
    files: FileCounts
    layout: dict = field(default_factory=dict)   # relative path -> "link" | "copy" | "dir" | bytes (an active segment's prefix)

    @property
    def prefixes(self) -> dict[str, int]:
        """The active segment files and the bytes each held when the checkpoint was taken."""
        return {path: mode for path, mode in self.layout.items() if isinstance(mode, int) and not isinstance(mode, bool)}

    def stored(self, relative: str) -> str:
        """Where the checkpoint keeps the data dir's file `relative`."""
        return os.path.join(self.path, DATA_DIR, _flat(relative))

    @classmethod
    def open(cls, path: str) -> Checkpoint:
        """The checkpoint in directory `path` (taken by this process or an earlier one)."""
        try:
            with open(os.path.join(path, META_FILE), encoding="utf-8") as f:
                meta = json.load(f)
        except FileNotFoundError:
            raise CheckpointError(f"{path} holds no checkpoint") from None
        if meta.pop("version", None) != FORMAT_VERSION:
            raise CheckpointError(f"{path}: unknown checkpoint format")
        return cls(path=os.path.abspath(path), modules=tuple(meta.pop("modules")),
                   files=FileCounts(**meta.pop("files")), **meta)

    def delete(self) -> None:
        shutil.rmtree(self.path, ignore_errors=True)


# -- take -----------------------------------------------------------------------------------------
def take(cluster: Cluster, into_dir: str) -> Checkpoint:
    """Save `cluster`'s whole state into `into_dir` (created; must be new or empty).

    Call it between steps, from the thread that runs the engine. The cluster goes on unchanged.
    If it fails (CheckpointError, GraphPickleError), `into_dir` is removed again."""
    if cluster.scheduler.in_action:
        raise CheckpointError("a checkpoint is taken between scheduler actions, not inside one")
    into_dir = _fresh_dir(into_dir)
    with _removed_on_failure(into_dir):
        return _take(cluster, into_dir)


def _take(cluster: Cluster, into_dir: str) -> Checkpoint:
    sync_index_files(cluster)
    state = graph_pickle.dumps({"cluster": cluster}, cluster.data_dir)
    with open(os.path.join(into_dir, STATE_FILE), "wb") as f:
        f.write(zlib.compress(state, 1))   # level 1: a graph shrinks about 4×, in a few ms
    layout: dict[str, str | int] = {}
    counts = _save_files(cluster.data_dir, os.path.join(into_dir, DATA_DIR), layout)
    checkpoint = Checkpoint(path=into_dir, step=cluster.scheduler.steps, time_ms=cluster.now_ms,
                            events=cluster.bus.count, data_dir=cluster.data_dir, fingerprint=fingerprint(),
                            modules=_engine_modules(), state_bytes=len(state), files=counts, layout=layout)
    _write_meta(checkpoint)
    return checkpoint


def sync_index_files(cluster: Cluster) -> None:
    """Hand every buffered index entry to the OS, so that the files hold all the logs know."""
    for broker in cluster.brokers.values():
        for partition in broker.partitions.values():
            for segment in partition.log.segments:
                segment.sync_files()


def _write_meta(checkpoint: Checkpoint) -> None:
    # Field by field: dataclasses.asdict would deep-copy the layout (hundreds of entries) first.
    meta = {"version": FORMAT_VERSION, **{f.name: getattr(checkpoint, f.name) for f in fields(checkpoint)
                                         if f.name not in ("path", "files")}}
    meta["modules"] = list(checkpoint.modules)
    meta["files"] = asdict(checkpoint.files)
    with open(os.path.join(checkpoint.path, META_FILE), "w", encoding="utf-8") as f:
        f.write(json.dumps(meta))


def _engine_modules() -> tuple[str, ...]:
    """The engine modules loaded, in import order (a `__main__` is a program, not a library)."""
    return tuple(name for name, module in list(sys.modules.items())
                 if module is not None and (name == "engine" or name.startswith("engine."))
                 and not name.endswith("__main__"))


# -- restore --------------------------------------------------------------------------------------
def restore(checkpoint: Checkpoint | str, data_dir: str,
            on_event: Callable[[ev.Event], None] | None = None, *, exclusive: bool = False) -> Cluster:
    """A cluster that continues from `checkpoint`, on its own copy of the files in `data_dir`
    (created; must be new or empty; any path). `on_event` sees every event from now on, as
    `Cluster(on_event=)` would; no other hook is attached (a driver sets its own, such as the
    scheduler's `yield_step`). The checkpoint can be restored again, any number of times.
    If it fails, `data_dir` is removed again.

    With `exclusive` the caller promises that no other cluster runs on files this checkpoint
    shares (a lab host throws its cluster away before it restores): an active segment whose
    stored file still holds exactly the recorded length is then linked, not copied — the restored
    cluster appends to it, which no checkpoint minds (they keep their lengths). Most of a
    checkpoint's active files are like that (idle partitions), and creating files is what a
    restore spends its time on."""
    if not isinstance(checkpoint, Checkpoint):
        checkpoint = Checkpoint.open(checkpoint)
    if checkpoint.fingerprint != fingerprint():
        raise CheckpointError(f"{checkpoint.path} was taken with another Python or engine source")
    data_dir = _fresh_dir(data_dir)
    with _removed_on_failure(data_dir):
        cluster = _restore(checkpoint, data_dir, exclusive)
    if on_event is not None:
        cluster.subscribe(on_event)
    return cluster


def _restore(checkpoint: Checkpoint, data_dir: str, exclusive: bool = False) -> Cluster:
    for name in checkpoint.modules:
        importlib.import_module(name)  # every module the graph's functions and classes come from
    _restore_files(checkpoint, data_dir, exclusive)
    with open(os.path.join(checkpoint.path, STATE_FILE), "rb") as f:
        graph = graph_pickle.loads(zlib.decompress(f.read()), data_dir)
    if not isinstance(graph, dict) or not isinstance(graph.get("cluster"), Cluster):
        raise CheckpointError(f"{checkpoint.path} holds no cluster")
    return graph["cluster"]


# -- files ----------------------------------------------------------------------------------------
@contextlib.contextmanager
def _removed_on_failure(path: str) -> Iterator[None]:
    try:
        yield
    except BaseException:
        shutil.rmtree(path, ignore_errors=True)
        raise


def _fresh_dir(path: str) -> str:
    path = os.path.abspath(path)
    if os.path.exists(path) and (not os.path.isdir(path) or os.listdir(path)):
        raise CheckpointError(f"{path} must be a new or empty directory")
    os.makedirs(path, exist_ok=True)
    return path


def _save_files(data_dir: str, into: str, layout: dict[str, str | int]) -> FileCounts:
    """Keep the data dir's files in `into` (flat) and note in `layout` how each comes back."""
    tally = [0, 0, 0, 0]  # FileCounts' fields
    os.makedirs(into, exist_ok=True)
    _save_dir(data_dir, "", into, layout, tally)
    return FileCounts(*tally)


def _save_dir(folder: str, relative: str, into: str, layout: dict[str, str | int], tally: list[int]) -> None:
    with os.scandir(folder) as scan:
        entries = sorted(scan, key=lambda entry: entry.name)
    files = [e for e in entries if e.is_file(follow_symlinks=False)]
    sealed = sealed_segment_files([e.name for e in files])
    for entry in files:
        path_rel = relative + entry.name
        size = entry.stat(follow_symlinks=False).st_size
        active = SEGMENT_FILE.match(entry.name) is not None and entry.name not in sealed
        link = active or _linkable(entry.name, sealed)
        layout[path_rel] = size if active else "link" if link else "copy"
        _place(entry.path, os.path.join(into, _flat(path_rel)), size, link, tally)
    for entry in entries:
        if entry.is_dir(follow_symlinks=False):
            sub = relative + entry.name + os.sep
            layout[sub] = "dir"   # kept even when empty
            _save_dir(entry.path, sub, into, layout, tally)


def _restore_files(checkpoint: Checkpoint, data_dir: str, exclusive: bool = False) -> None:
    """The data dir as the checkpoint holds it: linked files linked again, active segments copied up
    to the length they had (their linked inode may have grown since), the rest copied."""
    tally = [0, 0, 0, 0]
    made: set[str] = set()
    for relative, mode in sorted(checkpoint.layout.items()):
        if mode == "dir":
            os.makedirs(os.path.join(data_dir, relative), exist_ok=True)
            continue
        target = os.path.join(data_dir, relative)
        folder = os.path.dirname(target)
        if folder not in made:
            os.makedirs(folder, exist_ok=True)
            made.add(folder)
        stored = checkpoint.stored(relative)
        if isinstance(mode, int) and exclusive and os.stat(stored).st_size == mode:
            _place(stored, target, mode, True, tally)   # nobody appended since: it is that prefix
        elif isinstance(mode, int):
            _copy_prefix(stored, target, mode, tally)
        else:
            _place(stored, target, os.stat(stored).st_size, mode == "link", tally)


def _flat(relative: str) -> str:
    """A relative path as one file name (reversible: "%" and the separator are escaped)."""
    return relative.replace("%", "%25").replace(os.sep, "%2F")


def _linkable(name: str, sealed: set[str]) -> bool:
    """Whether no cluster will ever change the file's bytes in place while it is shared:
    - a sealed segment's files: never appended to again; a truncation back into one, or a
      recovery, copies it first (engine.storage.cow);
    - the offset and leader-epoch checkpoint files: only ever replaced whole (written to a temp
      file, renamed over), which leaves every other link on the old bytes.
    (Active segments are linked too, with their length recorded: see the module docstring.)"""
    return name in sealed or name in RENAMED_FILES


def _copy_prefix(src: str, dst: str, size: int, tally: list[int]) -> None:
    """`dst`: a new file holding the first `size` bytes of `src`."""
    if size == 0:
        os.close(os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
        tally[2] += 1
        return
    with open(src, "rb") as source, open(dst, "xb") as target:
        remaining = size
        while remaining > 0:
            chunk = source.read(min(remaining, 1 << 20))
            if not chunk:
                raise CheckpointError(f"{src} holds fewer bytes than its checkpoint recorded ({size})")
            target.write(chunk)
            remaining -= len(chunk)
    tally[2] += 1
    tally[3] += size


def sealed_segment_files(names: list[str]) -> set[str]:
    """The segment files of a partition dir below its newest segment."""
    segments = [(match.group(1), match.group(2), name) for name in names if (match := SEGMENT_FILE.match(name))]
    logs = [base for base, suffix, _ in segments if suffix == "log"]
    if not logs:
        return set()
    newest = max(logs)  # zero-padded to 20 digits: text order is number order
    return {name for base, _, name in segments if base < newest}


def _place(src: str, dst: str, size: int, link: bool, tally: list[int]) -> None:
    if link:
        try:
            os.link(src, dst)
            tally[0] += 1
            tally[1] += size
            return
        except OSError:
            pass  # another file system, or no hard links there: a copy will do
    if size:
        shutil.copyfile(src, dst)
    else:
        os.close(os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))  # an empty file: no need to read it
    tally[2] += 1
    tally[3] += size


# -- fingerprint ----------------------------------------------------------------------------------
def fingerprint() -> str:
    """This Python and this engine's source (as on disk when this module was loaded): what the
    marshalled code in a checkpoint was compiled for."""
    return _FINGERPRINT


def _fingerprint() -> str:
    digest = hashlib.sha256(f"{sys.implementation.cache_tag} {sys.version}".encode())
    root = os.path.dirname(os.path.abspath(__file__))
    for folder, dirs, names in os.walk(root):
        dirs.sort()
        for name in sorted(n for n in names if n.endswith(".py")):
            path = os.path.join(folder, name)
            digest.update(os.path.relpath(path, root).encode() + b"\0")
            with open(path, "rb") as f:
                digest.update(f.read())
    return digest.hexdigest()[:32]


_FINGERPRINT = _fingerprint()
