// O[1x3x5x5] += conv(I[1x2x7x7], W[3x2x3x3]), stride 1
builtin.module {
  func.func @conv(%I: memref<1x2x7x7xi32>, %W: memref<3x2x3x3xi32>, %O: memref<1x3x5x5xi32>) {
    linalg.conv_2d_nchw_fchw {strides = dense<1> : tensor<2xi64>, dilations = dense<1> : tensor<2xi64>} ins(%I, %W : memref<1x2x7x7xi32>, memref<3x2x3x3xi32>) outs(%O : memref<1x3x5x5xi32>)
    func.return
  }
}
