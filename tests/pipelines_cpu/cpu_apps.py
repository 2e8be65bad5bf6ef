"""The example pipelines, their numpy references and random inputs, for the CPU-path tests."""

import zlib

import numpy as np

from tests.frontends.pipeline.pipeline_apps import example, references  # noqa: F401

APPS = ["pointwise", "gaussian", "cascade", "harris", "unsharp", "camera_pipeline", "conv_layer", "gemm"]


def output_size(name, size):
    return tuple(example(name).output_shape(size))


def random_inputs(name, mod, size, salt=""):
    return mod.make_inputs(size, np.random.default_rng(zlib.crc32(f"{name}{size}{salt}".encode())))


def numpy_reference(name, mod, inputs, size):
    w, h = size
    if name == "gemm":
        return references.gemm(inputs["A"], inputs["B"])
    if name == "conv_layer":
        return references.conv_layer(inputs["input"], w, h, mod.weights())
    if name == "mobilenet_separable":
        return references.mobilenet_separable(inputs["input"], w, h, mod.weights())
    return getattr(references, name)(inputs["input"], w, h)
