// stage input
builtin.module {
  func.func @matmul(%0: memref<64x64xi32>, %1: memref<64x64xi32>, %2: memref<64x64xi32>) {
    linalg.matmul ins(%0, %1 : memref<64x64xi32>, memref<64x64xi32>) outs(%2 : memref<64x64xi32>)
    func.return
  }
}
