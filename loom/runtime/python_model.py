"""Accelerator models written in Python, run by the C simulator through ctypes callbacks.

A model is a class::

    class MyAccelerator:
        kernel = "matmul"            # optional: the kernel it computes (named, or a signature dict);
                                     # a description whose maps differ is rejected before running
        def __init__(self, accelerator):   # loom.accel AcceleratorDescription (or no argument)
            ...
        def consume(self, words):    # one DMA send: a numpy uint32 array (a copy, free to keep)
            return out_words         # words the accelerator produces (None / empty: none yet):
                                     # values of its data type (integers for i32, floats for f32,
                                     # sent as 32-bit words) or raw uint32 words
        macs = 0                     # optional: multiply-accumulates so far (timing model)
        def idle(self):              # optional: None, or why an instruction is still half-read
            ...

A class gets a fresh instance at every ``dma_init``; an instance passed to
``compile_driver(model=...)`` is reused (its state carries over between runs). Produced words
queue up in order and feed the following receives. An exception in the model reaches the host
as a LoomError naming the accelerator, the send number, the opcode and the model's file:line.
"""

from __future__ import annotations

import ctypes
import inspect
import traceback
from functools import lru_cache
from typing import Any

import numpy as np

from loom.accel.description import AcceleratorDescription, parse_kernel
from loom.accel.kernels import KernelSpec, named_kernel
from loom.accel.opcodes import SendLiteral
from loom.errors import LoomError
from loom.runtime.models import (
    CONSUME, COUNTER, CREATE, DESTROY, IDLE, PENDING, PRODUCE, ModelVTable, RuntimeModel, check_kernel, model_config)

LOOM_ERR_MODEL = 10
LOOM_ERR_TRANSFER_LENGTH = 2


def _write_error(err: int, size: int, message: str) -> None:
    data = message.replace("\n", " ").encode(errors="replace")[: max(size - 1, 0)]
    ctypes.memmove(err, data + b"\0", len(data) + 1)


@lru_cache(maxsize=256)
def _words(n: int) -> type:
    """The ctypes array type of n words (cached: viewing C memory is then one cheap call)."""
    return ctypes.c_uint32 * n


def _as_words(out: Any, data_type: str) -> np.ndarray:
    """The model's output as uint32 words (float32 by bits, integers wrapped to 32 bits). Values of
    the other family than the accelerator's ``data_type`` are refused: their bits would reach the host
    as garbage (a float64 accumulator in an i32 model)."""
    a = np.ascontiguousarray(out)
    if a.dtype == np.uint32:
        return a.reshape(-1)
    if a.dtype.kind in "fiub" and (a.dtype.kind == "f") != data_type.startswith("f"):
        family = "float" if a.dtype.kind == "f" else "integer"
        raise TypeError(f"consume returned {a.dtype} ({family}) values but the accelerator's data type is "
                        f"{data_type}; return {data_type} values, or raw uint32 words")
    if a.dtype.kind == "f":
        return a.astype(np.float32, copy=False).reshape(-1).view(np.uint32)
    if a.dtype.kind in "iub" and a.dtype.itemsize == 4:
        return a.reshape(-1).view(np.uint32)
    if a.dtype.kind in "iub":
        return a.astype(np.int64).reshape(-1).astype(np.uint32)
    raise TypeError(f"consume returned {a.dtype} values; expected integers or float32")


class _Instance:
    """One created accelerator: the user's object and its queued output."""

    __slots__ = ("obj", "queue", "pending", "sends")

    def __init__(self, obj: Any):
        self.obj = obj
        self.queue: list[np.ndarray] = []
        self.pending = 0
        self.sends = 0


class _Bridge:
    """The callbacks of one Python model (kept alive by the RuntimeModel)."""

    def __init__(self, model: Any, acc: AcceleratorDescription):
        self.model = model
        self.acc = acc
        self.instances: dict[int, _Instance] = {}
        self.next_handle = 1
        self.opcodes = _opcode_names(acc)
        cls = model if isinstance(model, type) else type(model)
        self.label = f"{cls.__name__}"
        try:
            self.file = inspect.getsourcefile(cls)
        except TypeError:  # a class without a source file (built in, made with type())
            self.file = None
        self.vtable = ModelVTable(CREATE(self.create), CONSUME(self.consume), PENDING(self.pending),
                                  PRODUCE(self.produce), DESTROY(self.destroy),
                                  COUNTER(self.macs), COUNTER(self.cycles), IDLE(self.idle))

    def _where(self, error: BaseException) -> str:
        frames = traceback.extract_tb(error.__traceback__)
        if self.file:
            mine = [f for f in frames if f.filename == self.file]
            if mine:
                return f" ({mine[-1].filename}:{mine[-1].lineno})"
        return ""

    def create(self, config: bytes, err: int, size: int) -> int:
        try:
            if isinstance(self.model, type):
                takes_arg = len(inspect.signature(self.model).parameters) >= 1
                obj = self.model(self.acc) if takes_arg else self.model()
            else:
                obj = self.model
        except Exception as error:  # noqa: BLE001 - user code
            _write_error(err, size, f"{type(error).__name__} while creating the Python model {self.label}: "
                                    f"{error}{self._where(error)}")
            return 0
        handle = self.next_handle
        self.next_handle += 1
        self.instances[handle] = _Instance(obj)
        return handle

    def consume(self, handle: int, words: int, n: int, err: int, size: int) -> int:
        inst = self.instances[handle]
        inst.sends += 1
        data = np.frombuffer(_words(n).from_address(words), dtype=np.uint32).copy()
        try:
            out = inst.obj.consume(data)
            if out is not None:
                out = _as_words(out, self.acc.data_type)
                if out.size:
                    inst.queue.append(out)
                    inst.pending += out.size
        except Exception as error:  # noqa: BLE001 - user code
            first = int(data[0]) if n else 0
            opcode = self.opcodes.get(first)
            what = f"opcode {opcode} (word {first})" if opcode else f"first word {first}"
            _write_error(err, size, f"{type(error).__name__} in the Python model {self.label} at send #{inst.sends}, "
                                    f"{what}: {error}{self._where(error)}")
            return LOOM_ERR_MODEL
        return 0

    def pending(self, handle: int) -> int:
        return self.instances[handle].pending

    def produce(self, handle: int, dst: int, n: int, err: int, size: int) -> int:
        inst = self.instances[handle]
        words = inst.queue[0] if len(inst.queue) == 1 else np.concatenate(inst.queue)
        np.frombuffer(_words(n).from_address(dst), dtype=np.uint32)[:] = words[:n]
        rest = words[n:]
        inst.queue = [rest] if rest.size else []
        inst.pending = int(rest.size)
        return 0

    def destroy(self, handle: int) -> None:
        self.instances.pop(handle, None)

    def macs(self, handle: int) -> int:
        try:
            return int(getattr(self.instances[handle].obj, "macs", 0))
        except Exception:  # noqa: BLE001 - a counter that cannot be read reports nothing
            return 0

    def cycles(self, handle: int) -> int:
        try:
            return int(getattr(self.instances[handle].obj, "cycles", -1))
        except Exception:  # noqa: BLE001
            return -1

    def idle(self, handle: int, err: int, size: int) -> int:
        obj = self.instances[handle].obj
        if not hasattr(obj, "idle"):
            return 0
        try:
            why = obj.idle()
        except Exception as error:  # noqa: BLE001 - user code
            why = f"{type(error).__name__} in idle(): {error}{self._where(error)}"
        if why:
            _write_error(err, size, f"the Python model {self.label}: {why}")
            return LOOM_ERR_TRANSFER_LENGTH
        return 0


def _opcode_names(acc: AcceleratorDescription) -> dict[int, str]:
    """First literal word -> opcode id(s), to name the opcode of a failing send."""
    names: dict[int, list[str]] = {}
    for entry in acc.opcode_map.entries:
        if entry.actions and isinstance(entry.actions[0], SendLiteral):
            names.setdefault(entry.actions[0].value & 0xFFFFFFFF, []).append(entry.id)  # send_literal(-1) is 0xFFFFFFFF
    return {word: "/".join(ids) for word, ids in names.items()}


def declared_kernel(model: Any, acc: AcceleratorDescription) -> KernelSpec | None:
    """The kernel a Python model declares (``kernel = "matmul"`` or a signature dict), if any."""
    declared = getattr(model, "kernel", None)
    if declared is None:
        return None
    if isinstance(declared, str):
        try:
            return named_kernel(declared)[0]
        except KeyError:
            raise LoomError(f"the Python model {getattr(model, '__name__', type(model).__name__)} declares "
                            f"kernel {declared!r}, not a known named kernel", where=acc.path("model"),
                            filename=acc.filename) from None
    if isinstance(declared, dict):
        return parse_kernel(declared, "kernel", f"the kernel of the Python model {getattr(model, '__name__', model)}")
    raise LoomError(f"a Python model's 'kernel' attribute must be a kernel name or a signature dict, found "
                    f"{type(declared).__name__}", where=acc.path("model"), filename=acc.filename)


def python_model(model: Any, acc: AcceleratorDescription, *, model_text: str | None = None) -> RuntimeModel:
    """A Python model class (or instance) as a RuntimeModel of ``acc``; its declared kernel is checked."""
    if not hasattr(model, "consume"):
        raise LoomError(f"a Python model needs a consume(words) method; {model!r} has none",
                        where=acc.path("model"), filename=acc.filename)
    label = model.__name__ if isinstance(model, type) else type(model).__name__
    kernel = declared_kernel(model, acc)
    if kernel is not None:
        check_kernel(acc, kernel, f"python:{label}", acc.model if acc.model else None)
    bridge = _Bridge(model, acc)
    return RuntimeModel(acc.name, bridge.vtable, model_config(acc, model_text or f"python:{label}"), keep=bridge,
                        kernel=kernel)
