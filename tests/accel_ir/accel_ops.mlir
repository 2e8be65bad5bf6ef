// every accel op in loom's custom syntax (IR in / IR out: parses and prints back exactly)
builtin.module {
  func.func @drive(%0: memref<4x4xi32>, %1: memref<?x3xf32>, %2: index) {
    %3 = arith.constant 0 : i32
    %4 = arith.constant 65536 : i32
    %5 = arith.constant 34 : i32
    accel.init_dma %3, %3, %4, %3, %4
    %6 = accel.send_literal %5, %3
    %7 = accel.send %0, %6 : memref<4x4xi32>
    %8 = accel.send %1, %7 padded [8, -1] : memref<?x3xf32>
    %9 = accel.send_dim %1[0], %8 : memref<?x3xf32>
    %10 = accel.send_idx %2, %9
    %11 = accel.flush_send %10
    accel.start_send %10
    accel.wait_send
    %12 = arith.constant 16 : i32
    accel.start_recv %12
    accel.wait_recv
    %13 = accel.recv %0, %3 "accumulate" padded [4, 4] : memref<4x4xi32>
    %14 = accel.recv %1, %13 "replace" : memref<?x3xf32>
    accel.free_dma
    func.return
  }
}
