// O[1x3x5x5] += conv(I[1x2x7x7], W[3x2x3x3]) (conv accelerator), then C[12x8] += A[12x20] . B[20x8] (matmul accelerator)
builtin.module {
  func.func @conv_then_matmul(%I: memref<1x2x7x7xi32>, %W: memref<3x2x3x3xi32>, %O: memref<1x3x5x5xi32>, %A: memref<12x20xi32>, %B: memref<20x8xi32>, %C: memref<12x8xi32>) {
    linalg.conv_2d_nchw_fchw {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>} ins(%I, %W : memref<1x2x7x7xi32>, memref<3x2x3x3xi32>) outs(%O : memref<1x3x5x5xi32>)
    linalg.matmul ins(%A, %B : memref<12x20xi32>, memref<20x8xi32>) outs(%C : memref<12x8xi32>)
    func.return
  }
}
