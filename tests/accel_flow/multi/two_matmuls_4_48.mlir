// C[4x4] += A[4x4] . B[4x4] and F[48x48] += D[48x48] . E[48x48]: one small, one large problem
builtin.module {
  func.func @two_matmuls(%A: memref<4x4xi32>, %B: memref<4x4xi32>, %C: memref<4x4xi32>, %D: memref<48x48xi32>, %E: memref<48x48xi32>, %F: memref<48x48xi32>) {
    linalg.matmul ins(%A, %B : memref<4x4xi32>, memref<4x4xi32>) outs(%C : memref<4x4xi32>)
    linalg.matmul ins(%D, %E : memref<48x48xi32>, memref<48x48xi32>) outs(%F : memref<48x48xi32>)
    func.return
  }
}
