// T += A . B; U = T + bias (no accelerator adds: the host); F += U . E (U: a buffer of the function, not an argument)
builtin.module {
  func.func @chain(%A: memref<12x20xi32>, %B: memref<20x8xi32>, %T: memref<12x8xi32>, %bias: memref<12x8xi32>, %E: memref<8x16xi32>, %F: memref<12x16xi32>) {
    linalg.matmul ins(%A, %B : memref<12x20xi32>, memref<20x8xi32>) outs(%T : memref<12x8xi32>)
    %U = memref.alloc() : memref<12x8xi32>
    linalg.add ins(%T, %bias : memref<12x8xi32>, memref<12x8xi32>) outs(%U : memref<12x8xi32>)
    linalg.matmul ins(%U, %E : memref<12x8xi32>, memref<8x16xi32>) outs(%F : memref<12x16xi32>)
    memref.dealloc %U : memref<12x8xi32>
    func.return
  }
}
