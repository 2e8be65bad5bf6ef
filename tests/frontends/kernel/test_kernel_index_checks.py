"""Indices that move with loops over dims and parameters in other forms than ``x[i + c]`` directly in the loop
body (under an ``if``, through a multiplication, over another array's dim) were not checked outside checked mode:
an out-of-range one wrote outside the array (a silent wrong answer, or a crash). Each is checked now, at the
loop's entry or at the access, and raises a LoomError at its line; in-range calls equal numpy. A scratch buffer
too large to allocate is a LoomError naming the kernel and the bytes (it was abort())."""

import numpy as np
import pytest

import tests.frontends.kernel.kernel_index_check_kernels as K
from loom.errors import LoomError
from tests.frontends.kernel.kernel_frontend_helpers import line_of

SRC = K.__file__
RNG = np.random.default_rng(7)


def _at(marker: str) -> str:
    return f"{SRC}:{line_of(SRC, marker)}:"


@pytest.mark.sanitize
def test_a_store_under_an_if_is_checked():
    x = RNG.standard_normal(8)
    y = np.zeros(8)
    K.copy_positive(x, y, 8)
    np.testing.assert_array_equal(y, np.where(x > 0, x, 0.0))
    x = np.ones(8)
    with pytest.raises(LoomError, match="index 5 out of range for dimension 0 of size 5") as e:
        K.copy_positive(x, np.zeros(5), 8)
    assert _at("the store under an if") in str(e.value)


@pytest.mark.sanitize
def test_an_index_through_a_multiplication_is_checked_at_the_loop_entry():
    x = RNG.standard_normal(6)
    y = np.zeros(12)
    K.every_other(x, y)
    np.testing.assert_array_equal(y[1::2], x)
    np.testing.assert_array_equal(y[0::2], 0.0)
    with pytest.raises(LoomError, match="index 11 out of range for dimension 0 of size 11") as e:
        K.every_other(x, np.zeros(11))
    assert _at("tag: strided store") in str(e.value)


@pytest.mark.sanitize
def test_an_index_over_another_arrays_dim_is_checked():
    x = RNG.standard_normal(7)
    y = np.zeros(7)
    K.copy_over_dim(x, y)
    np.testing.assert_array_equal(y, x)
    with pytest.raises(LoomError, match="index 6 out of range for dimension 0 of size 3") as e:
        K.copy_over_dim(x, np.zeros(3))
    assert _at("tag: dim copy") in str(e.value)


@pytest.mark.sanitize
def test_boundary_ifs_in_range_equal_numpy_and_a_short_output_is_refused():
    a = RNG.standard_normal((5, 9))
    out = np.zeros((5, 9))
    K.smooth_rows(a, out)
    padded = np.pad(a, ((0, 0), (1, 1)))
    counts = np.full(9, 3.0)
    counts[[0, -1]] = 2.0
    np.testing.assert_allclose(out, (padded[:, :-2] + padded[:, 1:-1] + padded[:, 2:]) / counts, rtol=1e-15)
    with pytest.raises(LoomError, match="index 8 out of range for dimension 1 of size 8") as e:
        K.smooth_rows(a, np.zeros((5, 8)))
    assert _at("out[i, j] = s / c") in str(e.value)


def test_a_guard_that_keeps_accesses_in_range_is_not_refused():
    """The loop runs past y but its if stops the stores there: the fast copy is not taken, the checked one is,
    and nothing fails (an entry check would refuse this correct kernel)."""
    x = RNG.standard_normal(10)
    y = np.zeros(4)
    K.clipped_copy(x, y, 10)
    np.testing.assert_array_equal(y, x[:4])
    with pytest.raises(LoomError, match="index 10 out of range for dimension 0 of size 10"):
        K.clipped_copy(x, np.zeros(20), 12)


@pytest.mark.sanitize
def test_a_buffer_too_large_to_allocate_is_a_located_error():
    x = np.arange(5.0)
    assert K.doubled_sum(x, 5) == 2 * x.sum()
    for n in (2**62, 2**61):  # 2**65 and 2**64 bytes: more than size_t holds
        with pytest.raises(LoomError, match=rf"cannot allocate {n * 8} bytes \({n} elements of 8 bytes\) for "
                                            r"memref.alloc in @doubled_sum") as e:
            K.doubled_sum(x, n)
        assert _at("buf = alloc((n,), F64)") in str(e.value)
    assert K.doubled_sum(x, 5) == 2 * x.sum()  # the module still works


def test_a_buffer_malloc_refuses_is_a_located_error():
    """2**62 bytes fit in size_t: malloc itself says no (not under ASan, whose malloc aborts on such sizes)."""
    x = np.arange(5.0)
    with pytest.raises(LoomError, match="cannot allocate 4611686018427387904 bytes .* in @doubled_sum"):
        K.doubled_sum(x, 2**59)
    assert K.doubled_sum(x, 5) == 2 * x.sum()


@pytest.mark.sanitize
def test_a_buffer_per_parallel_iteration_failing_is_reported_after_the_region():
    a = RNG.standard_normal((6, 4))
    out = np.zeros(6)
    K.row_sums_scratch(a, out, 4)
    np.testing.assert_allclose(out, a.sum(1), rtol=1e-15)
    with pytest.raises(LoomError, match=r"cannot allocate \d+ bytes .* in @row_sums_scratch") as e:
        K.row_sums_scratch(a, out, 2**62)  # 2**65 bytes: refused before malloc (ASan's would abort)
    assert _at("tmp = alloc((n,), F64)") in str(e.value)
    with pytest.raises(LoomError, match="index 3 out of range for dimension 0 of size 3"):
        K.row_sums_scratch(a, out, 3)  # the scratch row shorter than the rows


@pytest.mark.sanitize
def test_an_index_under_an_if_in_a_parallel_loop_is_checked_in_the_region():
    x = RNG.standard_normal(30)
    y = np.zeros(10)
    K.parallel_halo(x, y, 3)
    want = np.zeros(10)
    want[0::2] = x[0:30:6]
    np.testing.assert_array_equal(y, want)
    with pytest.raises(LoomError, match="index 32 out of range for dimension 0 of size 30") as e:
        K.parallel_halo(x, np.zeros(10), 4)  # i = 8: x[32], the earliest failing iteration
    assert _at("y[i] = x[i * k]") in str(e.value)


@pytest.mark.sanitize
def test_a_negative_or_overflowing_buffer_shape_is_refused_at_the_alloc():
    """(2**32, 2**32) wrapped to a 1-element buffer the loops then wrote 2**64 elements into; (-2, -3) made a
    6-element buffer of a negative shape. numpy refuses both (np.zeros)."""
    assert K.grid_total(3, 4) == np.ones((3, 4)).sum() and K.grid_total(3, 0) == 0.0
    with pytest.raises(LoomError, match="the number of elements of memref.alloc in @grid_total does not fit") as e:
        K.grid_total(2**32, 2**32)
    assert _at("g = alloc((n, m), F64)") in str(e.value)
    for shape in ((-2, -3), (0, -1)):
        with pytest.raises(ValueError):
            np.zeros(shape)
        with pytest.raises(LoomError, match=f"negative size {next(d for d in shape if d < 0)} for memref.alloc in @grid_total"):
            K.grid_total(*shape)


def test_native_mode_stays_on_for_a_checked_kernel_and_keeps_checks_out_of_simd_loops():
    """Native mode (restrict pointers, omp simd) was dropped for any kernel with a check; with every kernel checked
    now it stays on, and a loop holding a check at its access gets no simd pragma."""
    from loom.backends.c import compile_module
    from loom.passes.recipes import lower_to_c
    entry = compile_module(lower_to_c(K.copy_over_dim.module), native=True, check_gathers=True).c_source
    assert "restrict" in entry and "#pragma omp simd" in entry and "loomh_check_index" in entry
    module = compile_module(lower_to_c(K.gather_into.module), native=True, check_gathers=True)
    assert "restrict" in module.c_source and "#pragma omp simd" not in module.c_source
    x, idx = RNG.standard_normal(9), RNG.integers(0, 9, 40)
    y = np.zeros(40)
    module.function("gather_into")(x, idx, y)
    np.testing.assert_array_equal(y, x[idx])
    idx[17] = 9
    with pytest.raises(LoomError, match="index 9 out of range for dimension 0 of size 9"):
        module.function("gather_into")(x, idx, y)


@pytest.mark.sanitize
def test_a_python_remainder_by_the_dim_needs_no_check_and_by_another_value_is_checked():
    from loom.backends.c import emit_c
    from loom.passes.recipes import lower_to_c
    x = RNG.standard_normal(5)
    y = np.zeros(12)
    K.ring_next(x, y, 5)
    i = np.arange(12)
    np.testing.assert_array_equal(y, x[(i + 1) % 5] + x[(i + 2) % 5])
    with pytest.raises(LoomError, match="index 5 out of range for dimension 0 of size 5") as e:
        K.ring_next(x, y, 6)
    assert _at("tag: mod by n") in str(e.value)
    source = emit_c(lower_to_c(K.ring_next.module), check_gathers=True)
    assert source.count("loomh_check_index(loomh_ck,") == 1  # (i + 1) % n only
