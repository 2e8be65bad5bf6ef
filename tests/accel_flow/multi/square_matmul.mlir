// Y += X . X: one argument is both operands of the op
builtin.module {
  func.func @sq1(%X: memref<8x8xi32>, %Y: memref<8x8xi32>) {
    linalg.matmul ins(%X, %X : memref<8x8xi32>, memref<8x8xi32>) outs(%Y : memref<8x8xi32>)
    func.return
  }
}
