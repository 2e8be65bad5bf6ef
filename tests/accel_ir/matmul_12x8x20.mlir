// C[12x8] += A[12x20] . B[20x8]: partial tiles for every accelerator tile size > 4
builtin.module {
  func.func @matmul(%A: memref<12x20xi32>, %B: memref<20x8xi32>, %C: memref<12x8xi32>) {
    linalg.matmul ins(%A, %B : memref<12x20xi32>, memref<20x8xi32>) outs(%C : memref<12x8xi32>)
    func.return
  }
}
