// stage annotated: after convert-linalg-to-accel{accel-file="/work/main/loom/examples/accelerators/matmul_v3.json" accelerator="v3_16" flow="As"}
builtin.module {
  func.func @matmul(%0: memref<64x64xi32>, %1: memref<64x64xi32>, %2: memref<64x64xi32>) {
    linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%0, %1 : memref<64x64xi32>, memref<64x64xi32>) outs(%2 : memref<64x64xi32>) attrs =  {accel.accelerator = "v3_16", accel.flow = "As", accel.description = "/work/main/loom/examples/accelerators/matmul_v3.json", accel.dims = ["m", "n", "k"], accel.tile_sizes = array<i64: 16, 16, 16>, accel.cache_tiles = array<i64: 240, 0, 240>, accel.permutation = array<i64: 0, 2, 1>} {
    ^bb0(%3: i32, %4: i32, %5: i32):
      %6 = arith.muli %3, %4 : i32
      %7 = arith.addi %6, %5 : i32
      linalg.yield %7 : i32
    }
    func.return
  }
}
