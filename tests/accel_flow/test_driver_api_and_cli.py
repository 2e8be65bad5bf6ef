"""The driver API (stages, summary, errors), the ``loom accel`` commands and the demo."""

import numpy as np
import pytest
from tests.accel_flow.accel_flow_helpers import desc, matmul_arrays, matmul_module, matmul_reference
from xdsl.dialects.builtin import f32

from loom.driver.compile import compile_driver
from loom.cli import main
from loom.errors import LoomError
from loom.oracle import mlir


def test_stages_summary_and_c_source():
    drv = compile_driver(matmul_module(), desc("matmul_v3.json"), "v3_8", "Bs")
    assert [s[0] for s in drv.stages] == ["input", "generalized", "annotated", "tiled", "placed", "runtime"]
    assert "= accel.send %" in drv.stage("placed") and "accel.send" not in drv.stage("runtime")
    assert "accel." not in drv.stage("runtime")  # the hand-off attributes are gone too
    assert "func.call @copy_to_inbuffer_padded_i32" in drv.stage("runtime")
    assert "dma_start_send(" in drv.c_source and "extern int32_t dma_init(" in drv.c_source
    s = drv.summary
    assert (s.accelerator, s.flow, s.loop_order) == ("v3_8", "Bs", ("n", "k", "m"))
    assert s.tile_sizes == {"m": 8, "n": 8, "k": 8}
    assert set(s.cache_tiles) <= {"n", "k"}  # Bs places sB inside (n, k): m is never cache-tiled
    placed = {p.id: (p.level, p.position) for p in s.placement.opcodes}
    assert placed == {"sB": (2, "before"), "sAcCrC": (3, "body")}
    text = str(s)
    assert "v3_8" in text and "sB" in text and "permutation" in text
    # analytic transfers for 24 x 16 x 40 with 8-tiles: grid 3 x 2 x 5
    t = s.expected_transfers({"m": 24, "n": 16, "k": 40})
    assert (t.sends, t.recvs) == (2 * 5 + 3 * 2 * 5, 3 * 2 * 5)
    assert t.operand_words_sent == {"B": 2 * 5 * 64, "A": 30 * 64}


def test_every_stage_verifies_in_upstream_mlir():
    """Stages print in loom's custom syntax; parsed back and printed generic, upstream accepts them
    (accel ops and #accel attributes as unregistered-dialect ones)."""
    from xdsl.parser import Parser

    from loom.dialects import context

    drv = compile_driver(matmul_module(), desc("matmul_v2.json"), "v2_16", "As")
    for name, _, text in drv.stages:
        module = Parser(context(), text).parse_module()
        mlir.verify(module, allow_unregistered=name in ("annotated", "tiled", "placed"))


def test_static_shapes_and_loom_kernel_like_objects():
    class KernelLike:
        name = "matmul"
        module = matmul_module(shape=(20, 12, 36))

    drv = compile_driver(KernelLike(), desc("matmul_v3.json"), "v3_4", "Cs")
    A, B, C = matmul_arrays(20, 12, 36)
    expected = matmul_reference(A, B, C)
    drv(A, B, C)
    assert np.array_equal(C, expected.astype(np.int32))
    with pytest.raises(LoomError, match="dim 0 mismatch"):
        drv(*matmul_arrays(21, 12, 36))


def test_errors_name_accelerator_flow_and_op():
    with pytest.raises(LoomError, match="data type mismatch.*v3_16.*Cs"):
        compile_driver(matmul_module(elem=f32), desc("matmul_v3.json"), "v3_16", "Cs")
    with pytest.raises(LoomError, match="no opcode flow named 'Qs'"):
        compile_driver(matmul_module(), desc("matmul_v3.json"), "v3_16", "Qs")
    with pytest.raises(LoomError, match="no operation matches accelerator conv_os"):
        compile_driver(matmul_module(), desc("conv2d.json"))
    with pytest.raises(LoomError, match="must be a multiple of 16"):
        compile_driver(matmul_module(), desc("matmul_v4.json"), "v4_16", "Cs", tile_sizes={"m": 40})
    with pytest.raises(LoomError, match="expected a ModuleOp"):
        compile_driver(42, desc("matmul_v3.json"))


def test_cli_compile_writes_stages_driver_and_summary(tmp_path, capsys):
    out = tmp_path / "out"
    rc = main(["accel", "compile", "matmul", "--accel", desc("matmul_v3.json"), "--name", "v3_16",
               "--flow", "As", "--dims", "M=256,N=256,K=256", "-o", str(out)])
    assert rc == 0
    files = sorted(p.name for p in out.iterdir())
    assert files == ["00-input.mlir", "01-generalized.mlir", "02-annotated.mlir", "03-tiled.mlir",
                     "04-placed.mlir", "05-runtime.mlir", "driver.c", "summary.txt"]
    assert "memref<256x256xi32>" in (out / "00-input.mlir").read_text()
    summary = (out / "summary.txt").read_text()
    assert "sA" in summary
    # v3 As, 256^3, tile 16: A once per (m, k) = 256 tiles; B and C once per (m, k, n) = 4096
    assert "A=262144 B=4194304 C=4194304" in summary  # bytes: 256*256*4, 4096*256*4 twice


def test_cli_run_prints_a_checked_table(capsys):
    rc = main(["accel", "run", "matmul", "--accel", desc("matmul_v3.json"), "--name", "v3_8", "--flow", "all",
               "--dims", "M=40,N=24,K=16"])
    out = capsys.readouterr().out
    assert rc == 0
    lines = [l for l in out.splitlines() if l.startswith("v3_8")]
    assert [l.split()[1] for l in lines] == ["Ns", "As", "Bs", "Cs"] and all(l.endswith("ok") for l in lines)
    rc = main(["accel", "run", "conv2d", "--accel", desc("conv2d.json"), "--dims", "C=4,F=3,H=9,W=9,R=3,S=2"])
    assert rc == 0 and "conv_os" in capsys.readouterr().out


def test_cli_errors_are_messages(capsys):
    assert main(["accel", "run", "matmul", "--accel", desc("matmul_v3.json"), "--dims", "M=x"]) == 1
    assert "bad --dims entry" in capsys.readouterr().err
    assert main(["accel", "run", "matmul", "--accel", "nope.json"]) == 1
    assert "no such accelerator description" in capsys.readouterr().err
    assert main(["accel", "compile", "matmul", "--accel", desc("matmul_v3.json"), "--flow", "Zs", "--name", "v3_4",
                 "-o", "/tmp/unused_loom_accel"]) == 1
    assert "no opcode flow named 'Zs'" in capsys.readouterr().err


def test_accel_demo(capsys):
    from loom.cli.accel_commands import DEMO_CASES, accel_demo

    assert accel_demo() == 0
    out = capsys.readouterr().out
    assert f"{len(DEMO_CASES)}/{len(DEMO_CASES)} ok" in out


USER_KERNEL = '''
from loom import I32, MemRef, kernel, Dim
from loom.frontends.kernel import linalg as L
M, N, K = Dim("M"), Dim("N"), Dim("K")

@kernel
def mm(A: MemRef[(M, K), I32], B: MemRef[(K, N), I32], C: MemRef[(M, N), I32]):
    L.matmul(A, B, C)
'''


def test_cli_runs_a_user_kernel_against_its_cpu_build(tmp_path, capsys):
    pytest.importorskip("loom.frontends.kernel")
    path = tmp_path / "userk.py"
    path.write_text(USER_KERNEL)
    rc = main(["accel", "run", f"{path}:mm", "--accel", desc("matmul_v3.json"), "--name", "v3_8", "--flow", "As",
               "--dims", "m=40,n=24,k=16"])
    out = capsys.readouterr()
    assert rc == 0, out.err
    assert out.out.splitlines()[-1].split()[:2] == ["v3_8", "As"] and out.out.rstrip().endswith("ok")
