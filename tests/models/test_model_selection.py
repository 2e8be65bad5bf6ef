"""Choosing and loading behaviour models: the description's "model" (every form, located errors), the
model= argument, the MODEL_KINDS registry, C models (compile errors, missing symbols, their errors)
and prebuilt shared objects, Python models' errors, and the kernel check before running."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest

from loom.accel import load_description
from loom.driver.compile import compile_driver
from loom.errors import LoomError
from loom.examples import ACCELERATORS_DIR
from loom.runtime import models
from loom.runtime.models import build_c_model, load_shared_model, model_for
from tests.models.kernels import ELEMENTWISE, MATMUL, MATMUL_TB, arrays, module

V3 = ACCELERATORS_DIR / "matmul_v3.json"
EW = ACCELERATORS_DIR / "elementwise.json"


def described(tmp_path, source=V3, index=0, **changes) -> str:
    desc = json.loads(source.read_text())
    desc["cpu"] = str(ACCELERATORS_DIR / desc["cpu"])
    entry = desc["accelerators"][index]
    for key, value in changes.items():
        if value is None:
            entry.pop(key, None)
        else:
            entry[key] = value
    desc["accelerators"] = [entry]
    path = tmp_path / "desc.json"
    path.write_text(json.dumps(desc))
    return str(path)


class Products:
    """Python model of the element-wise accelerator, counting its sends (state across runs)."""

    def __init__(self, accelerator=None):
        self.sends = 0

    def consume(self, words):
        self.sends += 1
        opcode, tile = int(words[0]), 64
        if opcode != 15:
            raise RuntimeError(f"opcode {opcode} is not implemented")
        a, b = words[1:1 + tile].view(np.int32), words[1 + tile:].view(np.int32)
        return a * b


def test_a_description_without_model_compiles_and_running_says_what_to_add(tmp_path):
    drv = compile_driver(module(MATMUL), described(tmp_path, model=None), "v3_4", "Cs")
    with pytest.raises(LoomError) as err:
        drv(*arrays([(4, 4), (4, 4), (4, 4)]))
    message = str(err.value)
    assert "no simulator model for accelerator v3_4" in message and err.value.where == "accelerators[0].model"
    for form in ('"generic"', '"builtin:NAME"', '{"python": "file.py:ClassName"}', '{"c": "file.c"}', "model="):
        assert form in message


def test_model_argument_class_and_instance(tmp_path):
    data = arrays([(5, 21)] * 3)
    expected = data[2] + data[0] * data[1]
    drv = compile_driver(module(ELEMENTWISE), EW, "ew_py", "One", model=Products)
    drv(*data)
    np.testing.assert_array_equal(data[2], expected)
    instance = Products()
    drv = compile_driver(module(ELEMENTWISE), EW, "ew_py", "One", model=instance)
    drv(*arrays([(5, 21)] * 3))
    drv(*arrays([(5, 21)] * 3))
    assert instance.sends == 2 * 2 * 2  # an instance keeps its state: 2 runs x (5/4 x 21/16) tiles


def test_a_python_model_error_names_accelerator_send_opcode_and_line():
    drv = compile_driver(module(ELEMENTWISE), EW, "ew_py", "Split", model=Products)
    with pytest.raises(LoomError) as err:
        drv(*arrays([(4, 16)] * 3))
    message = str(err.value)
    assert "ew_py: RuntimeError in the Python model Products at send #1, opcode sA (word 1)" in message
    assert "opcode 1 is not implemented" in message and "test_model_selection.py:" in message


def test_a_python_model_from_the_description_file(tmp_path):
    (tmp_path / "acc.py").write_text("import numpy as np\n\nclass Dup:\n    def __init__(self, acc):\n"
                                     "        self.n = acc.tiles['i'].size * acc.tiles['j'].size\n"
                                     "    def consume(self, words):\n        return words[1:1 + self.n] * 0 + 7\n")
    path = described(tmp_path, EW, 0, model={"python": "acc.py:Dup"})
    drv = compile_driver(module(ELEMENTWISE), path, "ew_py", "One")
    data = arrays([(4, 16)] * 3)
    before = data[2].copy()
    drv(*data)
    np.testing.assert_array_equal(data[2], before + 7)
    bad = described(tmp_path, EW, 0, model={"python": "acc.py:Missing"})
    with pytest.raises(LoomError, match="defines no class 'Missing' \\(classes: Dup\\)"):
        compile_driver(module(ELEMENTWISE), bad, "ew_py", "One")
    (tmp_path / "broken.py").write_text("def f(:\n")
    broken = described(tmp_path, EW, 0, model={"python": "broken.py:X"})
    with pytest.raises(LoomError, match="syntax error") as err:
        compile_driver(module(ELEMENTWISE), broken, "ew_py", "One")
    assert err.value.filename.endswith("broken.py") and err.value.line == 1


def test_a_wrong_output_length_is_a_runtime_error_not_a_crash():
    class Short:
        def consume(self, words):
            return np.zeros(3, np.int32)

    drv = compile_driver(module(ELEMENTWISE), EW, "ew_py", "One", model=Short)
    with pytest.raises(LoomError, match="receive of 64 words but the accelerator sends 3 words"):
        drv(*arrays([(4, 16)] * 3))


def test_values_of_the_other_family_than_the_data_type_are_refused_not_sent_as_bits():
    class FloatProducts:  # a float64 accumulator in a model of an i32 accelerator
        def consume(self, words):
            return np.zeros(64) + words[1:65].view(np.int32) * words[65:].view(np.int32)

    drv = compile_driver(module(ELEMENTWISE), EW, "ew_py", "One", model=FloatProducts)
    with pytest.raises(LoomError, match=r"consume returned float64 \(float\) values but the accelerator's data "
                                        r"type is i32"):
        drv(*arrays([(4, 16)] * 3))

    class WideProducts:  # int64 values are fine: wrapped to 32 bits
        def consume(self, words):
            return words[1:65].view(np.int32).astype(np.int64) * words[65:].view(np.int32)

    data = arrays([(4, 16)] * 3)
    expected = data[2] + data[0] * data[1]
    compile_driver(module(ELEMENTWISE), EW, "ew_py", "One", model=WideProducts)(*data)
    np.testing.assert_array_equal(data[2], expected)
    from loom.runtime.python_model import _as_words

    assert _as_words(np.array([1.5], np.float64), "f32").tolist() == [0x3FC00000]
    assert _as_words(np.array([7], np.uint32), "f32").tolist() == [7]  # raw words pass for any data type
    with pytest.raises(TypeError, match="int32 \\(integer\\) values but the accelerator's data type is f32"):
        _as_words(np.array([7], np.int32), "f32")


def test_a_kernel_that_disagrees_with_its_model_is_rejected_before_running(tmp_path):
    tb_kernel = {"name": "matmul", "indexing_maps": ["(m, n, k) -> (m, k)", "(m, n, k) -> (n, k)", "(m, n, k) -> (m, n)"],
                 "iterator_types": ["parallel", "parallel", "reduction"], "body": "mul-add"}
    path = described(tmp_path, kernel=tb_kernel, operands=None)
    with pytest.raises(LoomError) as err:
        compile_driver(module(MATMUL_TB), path, "v3_4", "Cs")
    assert err.value.where == "accelerators[0].model"
    assert "disagrees with its model builtin:matmul_v3" in err.value.message and "operand B is indexed [n, k]" in err.value.message
    tb = ACCELERATORS_DIR / "matmul_tb.json"

    class Matmul:
        kernel = "matmul"

        def consume(self, words):
            return None

    with pytest.raises(LoomError, match="disagrees with its model python:Matmul"):
        compile_driver(module(MATMUL_TB), tb, "mmtb_4", "Cs", model=Matmul)


@pytest.mark.parametrize("model, where, fragment", [
    (42, "model", "expected a model"),
    ("builtin", "model", "expected \"generic\", \"builtin:NAME\""),
    ({"python": "x.py"}, "model.python", "expected \"file.py:ClassName\""),
    ("python:x.py", "model", "expected \"python:file.py:ClassName\""),  # was an IndexError when compiling
    ("generic:x", "model", "expected \"generic\""),  # the argument was ignored
    ({"python": "a.py:A", "c": "a.c"}, "model", "found 2 keys"),
    ({"c": 3}, "model.c", "a file name"),
])
def test_bad_model_entries_are_located(tmp_path, model, where, fragment):
    with pytest.raises(LoomError) as err:
        load_description(described(tmp_path, model=model))
    assert err.value.where == f"accelerators[0].{where}" and fragment in err.value.message


@pytest.mark.parametrize("model, fragment", [
    ("builtin:matmul_v9", "unknown built-in model 'matmul_v9'"),
    ("builtin:matmul_v2", None),  # v3_4's tiles suit v2 too
    ("builtin:conv2d", "disagrees with its model builtin:conv2d"),
    ("verilog:top.sv", "unknown model kind 'verilog'"),
    ({"c": "missing.c"}, "the C model 'missing.c' does not exist"),
    ({"python": "missing.py:M"}, "does not exist"),
])
def test_unknown_models_fail_when_compiling(tmp_path, model, fragment):
    if fragment is None:
        compile_driver(module(MATMUL), described(tmp_path, model=model), "v3_4", "Cs", build=False)
        return
    with pytest.raises(LoomError) as err:
        compile_driver(module(MATMUL), described(tmp_path, model=model), "v3_4", "Cs")
    assert fragment in err.value.message and err.value.where == "accelerators[0].model"


def test_builtin_matmul_tiles_are_checked_before_running(tmp_path):
    path = described(tmp_path, tile_sizes={"m": 4, "n": 8, "k": 4}, buffers=None)
    with pytest.raises(LoomError, match="takes square fixed tiles of 4, 8 or 16; the accelerator's tile sizes are "
                                        "m=4, n=8, k=4") as err:
        compile_driver(module(MATMUL), path, "v3_4", "Cs", build=False)
    assert err.value.where == "accelerators[0].model"


def test_a_registered_kind_resolves_through_its_factory(tmp_path, monkeypatch):
    seen = []

    def factory(spec, acc, base_dir):
        seen.append((spec.argument, acc.name))
        return model_for(acc, Products)

    monkeypatch.setitem(models.MODEL_KINDS, "products", factory)
    path = described(tmp_path, EW, 0, model="products:anything")
    drv = compile_driver(module(ELEMENTWISE), path, "ew_py", "One")
    data = arrays([(4, 16)] * 3)
    expected = data[2] + data[0] * data[1]
    drv(*data)
    np.testing.assert_array_equal(data[2], expected)
    assert seen == [("anything", "ew_py")]


C_ERRORS = r'''
#include <stdio.h>
#include "loom_model.h"
static int state;
void *loom_model_create(const char *json, char *err, int len) { (void)json; (void)err; (void)len; return &state; }
int loom_model_consume(void *s, const uint32_t *w, int64_t n, char *err, int len) {
  (void)s; (void)n; snprintf(err, (size_t)len, "refusing word %u", w[0]); return 42; }
int64_t loom_model_pending(void *s) { (void)s; return 0; }
int loom_model_produce(void *s, uint32_t *d, int64_t n, char *e, int l) { (void)s; (void)d; (void)n; (void)e; (void)l; return 0; }
void loom_model_destroy(void *s) { (void)s; }
'''


@pytest.mark.sanitize
def test_c_models_errors_and_prebuilt_shared_objects(tmp_path):
    (tmp_path / "refuse.c").write_text(C_ERRORS)
    drv = compile_driver(module(ELEMENTWISE), described(tmp_path, EW, 1, model={"c": "refuse.c"}), "ew_c", "One")
    with pytest.raises(LoomError) as err:
        drv(*arrays([(4, 16)] * 3))
    assert "ew_c: refusing word 15 (send #1, first word 15) (runtime error code 10)" in str(err.value)

    (tmp_path / "broken.c").write_text("int loom_model_create( {")
    with pytest.raises(LoomError, match="C compilation failed"):
        compile_driver(module(ELEMENTWISE), described(tmp_path, EW, 1, model={"c": "broken.c"}), "ew_c", "One")
    (tmp_path / "partial.c").write_text('#include "loom_model.h"\nvoid *loom_model_create(const char *j, char *e, int l)'
                                        ' { (void)j; (void)e; (void)l; return 0; }\n')
    with pytest.raises(LoomError, match="does not export loom_model_consume"):
        compile_driver(module(ELEMENTWISE), described(tmp_path, EW, 1, model={"c": "partial.c"}), "ew_c", "One")

    # a prebuilt object (an RTL simulation would be one) with the same symbols
    so = build_c_model(ACCELERATORS_DIR / "models" / "elementwise.c")
    acc = load_description(EW).accelerator("ew_c")
    drv = compile_driver(module(ELEMENTWISE), EW, "ew_c", "One", model=load_shared_model(so, acc))
    data = arrays([(6, 17)] * 3)
    expected = data[2] + data[0] * data[1]
    drv(*data)
    np.testing.assert_array_equal(data[2], expected)


def test_model_entries_fuzzed_give_located_errors_only(tmp_path):
    """Seeded mutations of model entries and semantics: loading is a success or a LoomError with a path."""
    rng = random.Random(9)
    pieces = ["generic", "builtin:", "python", "c", ":", "load", "compute", "store", "clear", "0", "2", "9", ",",
              " ", "x.py:X", "sA", "\u00e9", "-1", "{", "\x00"]
    for _ in range(200):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 6)))
        model = rng.choice([text, {rng.choice(["python", "c", "generic", text or "k"]): text}, [text], None, 3.5])
        semantics = rng.choice([None, {"sA": text}, {text or "q": "load 0"}, text])
        changes = {"model": model}
        if semantics is not None:
            changes["opcode_semantics"] = semantics
        try:
            load_description(described(tmp_path, **changes))
        except LoomError as err:
            assert err.where and err.where.startswith("accelerators[0]"), (changes, err)


def test_cycles_a_model_reports_reach_the_run_stats():
    class Counting(Products):
        def __init__(self, accelerator=None):
            super().__init__()
            self.cycles = 0

        def consume(self, words):
            self.cycles += 10 * len(words)  # a cycle-accurate model would count its clock
            return super().consume(words)

    drv = compile_driver(module(ELEMENTWISE), EW, "ew_py", "One", model=Counting)
    assert drv(*arrays([(4, 32)] * 3)).model_cycles == 2 * 10 * 129
    assert compile_driver(module(ELEMENTWISE), EW, "ew_py", "One", model=Products)(
        *arrays([(4, 16)] * 3)).model_cycles is None


def test_a_python_model_that_is_not_idle_at_the_end_is_an_error():
    class HalfRead(Products):
        def idle(self):
            return "still waits for 3 words of B"

    drv = compile_driver(module(ELEMENTWISE), EW, "ew_py", "One", model=HalfRead)
    with pytest.raises(LoomError, match="ew_py: the Python model HalfRead: still waits for 3 words of B"):
        drv(*arrays([(4, 16)] * 3))


def test_a_model_that_cannot_be_created_and_an_incomplete_vtable_are_errors():
    class Broken:
        def __init__(self, accelerator):
            raise KeyError("no such register")

        def consume(self, words):
            return None

    drv = compile_driver(module(ELEMENTWISE), EW, "ew_py", "One", model=Broken)
    with pytest.raises(LoomError, match="ew_py: the accelerator model could not be created: KeyError while creating "
                                        "the Python model Broken: 'no such register'"):
        drv(*arrays([(4, 16)] * 3))

    import ctypes

    from loom.runtime import runtime_library
    from loom.runtime.models import ModelVTable
    lib = runtime_library()
    assert lib.loom_sim_use_model_vtable(ctypes.addressof(ModelVTable()), b"empty", b"{}") == 9
    assert "lacks one of create, consume" in lib.loom_dma_last_error().decode()
    lib.loom_dma_clear_error()
