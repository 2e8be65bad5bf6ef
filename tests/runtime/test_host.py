"""Python conveniences: model selection by name and runtime errors as LoomError."""

import pytest
from tests.runtime.runtime_helpers import Driver

from loom.errors import LoomError
from loom.runtime import raise_on_error, use_model


def test_use_model_by_name_and_error_as_loom_error(lib):
    use_model(lib, "matmul_v2", 4, "i32")
    lib.dma_init(0, 0, 0, 0, 0)
    Driver(lib).send_literal(9)
    with pytest.raises(LoomError, match=r"DMA runtime: matmul_v2_4: opcode 9 \(send #1, word 0\): unknown opcode"):
        raise_on_error(lib)
    raise_on_error(lib)  # cleared: nothing pending any more


@pytest.mark.parametrize("name,dtype,fragment", [("v7", "i32", "unknown accelerator model 'v7'"),
                                                 ("v3", "i8", "unknown data type 'i8'"),
                                                 ("v3", "f32", "size 12")])
def test_use_model_rejects_bad_choices(lib, name, dtype, fragment):
    with pytest.raises(LoomError, match=fragment):
        use_model(lib, name, 12 if dtype == "f32" else 4, dtype)
