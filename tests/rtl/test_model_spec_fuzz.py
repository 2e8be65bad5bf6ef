"""Fuzz of the description's "model" key and of the Verilator model spec (hypothesis, bounded):
every JSON value either loads, or is a LoomError with a JSON path; a loaded spec either builds or
is a LoomError with a JSON path (no source exists in the empty folder, so nothing is built)."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from loom.accel import load_description
from loom.errors import LoomError
from loom.runtime.models import MODEL_KINDS
from tests.rtl.rtl_helpers import DESCRIPTION

ENTRY = json.loads(DESCRIPTION.read_text())["accelerators"][0]
KEYS = st.sampled_from(["verilator", "sources", "top", "parameters", "T", "verilog", "", "x"])
JSON = st.recursive(st.none() | st.booleans() | st.integers(-2**40, 2**40) | st.floats(allow_nan=False)
                    | st.text(max_size=12) | st.sampled_from(["rtl/matmul_os.sv", "matmul_os", "../x.sv"]),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(KEYS | st.text(max_size=5), inner,
                                                                               max_size=3),
                    max_leaves=8)
MODELS = (JSON | st.dictionaries(st.just("verilator"), JSON, min_size=1)
          | st.sampled_from(["verilator:rtl/matmul_os.sv", "verilator:x.sv", "verilator:"]))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(model=MODELS)
def test_any_model_value_is_loaded_or_a_located_error(model, tmp_path_factory):
    empty = tmp_path_factory.mktemp("empty")
    try:
        acc = load_description({"accelerators": [{**ENTRY, "model": model}]}).accelerators[0]
    except LoomError as err:
        assert err.where and err.where.startswith("accelerators[0].model"), err
        return
    if acc.model.kind != "verilator":
        return  # other kinds: tests/models; an unknown kind: tests/rtl/test_rtl_drivers.py
    try:
        MODEL_KINDS["verilator"](acc.model, acc, str(empty))
    except LoomError as err:
        assert err.where and err.where.startswith(acc.model.argument_where), err
        assert err.where.startswith("accelerators[0].model"), err
    else:
        raise AssertionError(f"built a model from {model!r} in an empty folder")


def test_a_description_with_an_object_model_is_hashable_by_content():
    first, second = (load_description(DESCRIPTION).accelerator("rtl_4") for _ in range(2))
    assert first == second and hash(first) == hash(second)
    assert hash(first.model) != hash(load_description(DESCRIPTION).accelerator("rtl_8").model)
