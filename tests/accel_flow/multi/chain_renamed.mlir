// Y += X . Wt (v3_4), then Z += Y . P (v3_16): the accelerators call every operand A, B, C
builtin.module {
  func.func @chain_renamed(%X: memref<12x20xi32>, %Wt: memref<20x8xi32>, %Y: memref<12x8xi32>, %P: memref<8x16xi32>, %Z: memref<12x16xi32>) {
    linalg.matmul ins(%X, %Wt : memref<12x20xi32>, memref<20x8xi32>) outs(%Y : memref<12x8xi32>)
    linalg.matmul ins(%Y, %P : memref<12x8xi32>, memref<8x16xi32>) outs(%Z : memref<12x16xi32>)
    func.return
  }
}
