// stage generalized: after linalg-generalize-named-ops
builtin.module {
  func.func @matmul(%0: memref<64x64xi32>, %1: memref<64x64xi32>, %2: memref<64x64xi32>) {
    linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%0, %1 : memref<64x64xi32>, memref<64x64xi32>) outs(%2 : memref<64x64xi32>) {
    ^bb0(%3: i32, %4: i32, %5: i32):
      %6 = arith.muli %3, %4 : i32
      %7 = arith.addi %6, %5 : i32
      linalg.yield %7 : i32
    }
    func.return
  }
}
