"""`loom accel run --flow all`: every (accelerator, flow) pair of a description file, each checked."""

from pathlib import Path

from loom.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "loom" / "examples" / "accelerators"


def test_flow_all_without_name_covers_every_accelerator(capsys):
    code = main(["accel", "run", "matmul", "--accel", str(EXAMPLES / "matmul_v2.json"), "--flow", "all",
                 "--dims", "M=40,N=24,K=20"])
    out = capsys.readouterr().out
    assert code == 0
    rows = [line.split() for line in out.splitlines() if line.startswith("v2_")]
    assert sorted((r[0], r[1]) for r in rows) == sorted(
        (f"v2_{s}", f) for s in (4, 8, 16) for f in ("Ns", "As", "Bs"))
    assert all(r[-1] == "ok" for r in rows)


def test_flow_all_with_name_covers_its_flows(capsys):
    code = main(["accel", "run", "matmul", "--accel", str(EXAMPLES / "matmul_v3.json"), "--name", "v3_8",
                 "--flow", "all", "--dims", "M=24,N=16,K=40"])
    out = capsys.readouterr().out
    assert code == 0
    assert sorted(line.split()[1] for line in out.splitlines() if line.startswith("v3_8")) == ["As", "Bs", "Cs", "Ns"]


def _os_accelerator(name: str, data_type: str, input_size: int) -> dict:
    return {"name": name, "kernel": "matmul", "data_type": data_type, "model": "generic",
            "dma": {"dma_address": "0x40400000", "input_address": "0x16000000", "input_size": input_size,
                    "output_address": "0x16400000", "output_size": 1024},
            "dims": ["m", "n", "k"], "tile_sizes": {"m": 8, "n": 4, "k": 16},
            "opcode_map": "opcode_map<rst=[send_literal(160)], macc=[send_literal(161), send(0), send(1)], "
                          "drain=[send_literal(162), recv(2)]>",
            "opcode_semantics": {"rst": "clear 2", "macc": "load 0, load 1, compute", "drain": "store 2, clear 2"},
            "opcode_flows": {"Cs": "((macc) drain)"}, "init_opcodes": "(rst)"}


def test_flow_all_runs_each_accelerator_in_its_own_data_type(tmp_path, capsys):
    import json

    path = tmp_path / "mixed.json"
    path.write_text(json.dumps({"accelerators": [_os_accelerator("os_i32", "i32", 1024),
                                                 _os_accelerator("os_f32", "f32", 1024)]}))
    code = main(["accel", "run", "matmul", "--accel", str(path), "--flow", "all", "--dims", "M=9,N=5,K=17"])
    out = capsys.readouterr()
    assert code == 0, out.out + out.err
    rows = {line.split()[0]: line.split()[-1] for line in out.out.splitlines() if line.startswith("os_")}
    assert rows == {"os_i32": "ok", "os_f32": "ok"}


def test_coalesce_with_double_buffer_counts_sends_into_half_buffers(tmp_path, capsys):
    """macc is 193 words: 5 fit the 1024-word buffer, 2 one 512-word half (the transactions differ)."""
    import json

    from loom.accel import load_description
    from loom.driver.compile import compile_driver
    from loom.passes.accel_coalesce import expected_coalesced_sends
    from tests.accel_flow.accel_flow_helpers import matmul_module

    path = tmp_path / "os.json"
    path.write_text(json.dumps({"accelerators": [_os_accelerator("os", "i32", 4096)]}))
    summary = compile_driver(matmul_module(), str(path), build=False).summary
    problem = {"m": 9, "n": 5, "k": 80}
    assert expected_coalesced_sends(summary, problem, 512) != expected_coalesced_sends(summary, problem, 1024)
    assert load_description(str(path)).accelerators[0].dma.input_words == 1024
    code = main(["accel", "run", "matmul", "--accel", str(path), "--coalesce", "--double-buffer",
                 "--dims", "M=9,N=5,K=80"])
    out = capsys.readouterr()
    assert code == 0, out.out + out.err
    assert out.out.rstrip().endswith("ok")
