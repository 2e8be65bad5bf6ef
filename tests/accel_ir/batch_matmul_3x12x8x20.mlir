// C[b] += A[b] . B[b] for 3 problems of 12x8x20: a linalg.matmul on one problem's views inside a
// batch loop (#accel.loop<batch "b">), as loom.models.offload.batch_matmul_module builds it
builtin.module {
  func.func @bmm(%A: memref<3x12x20xi32>, %B: memref<3x20x8xi32>, %C: memref<3x12x8xi32>) {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c3 = arith.constant 3 : index
    scf.for %b = %c0 to %c3 step %c1 {
      %a = memref.subview %A[%b, 0, 0] [1, 12, 20] [1, 1, 1] : memref<3x12x20xi32> to memref<12x20xi32, strided<[20, 1], offset: ?>>
      %bb = memref.subview %B[%b, 0, 0] [1, 20, 8] [1, 1, 1] : memref<3x20x8xi32> to memref<20x8xi32, strided<[8, 1], offset: ?>>
      %cc = memref.subview %C[%b, 0, 0] [1, 12, 8] [1, 1, 1] : memref<3x12x8xi32> to memref<12x8xi32, strided<[8, 1], offset: ?>>
      linalg.matmul ins(%a, %bb : memref<12x20xi32, strided<[20, 1], offset: ?>>, memref<20x8xi32, strided<[8, 1], offset: ?>>) outs(%cc : memref<12x8xi32, strided<[8, 1], offset: ?>>)
    } {accel.loop = #accel.loop<batch "b">}
    func.return
  }
}
