"""The example pipelines, their numpy references and random inputs, for the CPU-path tests."""

import pathlib
import sys
import zlib

_PIPELINE_TESTS = pathlib.Path(__file__).resolve().parents[1] / "frontends" / "pipeline"
if str(_PIPELINE_TESTS) not in sys.path:
    sys.path.insert(0, str(_PIPELINE_TESTS))

from pipeline_apps import example, references  # noqa: E402,F401

from loom.cli.pipeline_commands import app_inputs  # noqa: E402

APPS = ["pointwise", "gaussian", "cascade", "harris", "unsharp", "camera_pipeline", "conv_layer", "gemm"]
CHANNELS = {"unsharp": 3, "camera_pipeline": 3, "conv_layer": 4}


def output_size(name, size):
    return tuple(size) + ((CHANNELS[name],) if name in CHANNELS else ())


def random_inputs(name, mod, size, salt=""):
    return app_inputs(name, mod, size, zlib.crc32(f"{name}{size}{salt}".encode()))


def numpy_reference(name, mod, inputs, size):
    w, h = size
    if name == "gemm":
        return references.gemm(inputs["A"], inputs["B"])
    if name == "conv_layer":
        return references.conv_layer(inputs["input"], w, h, mod.weights())
    return getattr(references, name)(inputs["input"], w, h)
