// convert-accel-to-runtime's output, by hand: an 8x8 A sent as 4x4 tiles (opcode 1 + tile, one
// send each), a 4x4 C tile received and accumulated. The second A tile has a dynamic row count
// (an edge tile in general); the tile of B is sent before dma_init (left alone).
module {
  func.func @drive(%A: memref<8x8xi32>, %B: memref<8x8xi32>, %C: memref<8x8xi32>, %rows: index) {
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    %zero = arith.constant 0 : i32
    %op = arith.constant 1 : i32
    %p4 = arith.constant 4 : i64
    %none = arith.constant -1 : i64
    %addr = arith.constant 0 : i64
    %words = arith.constant 1024 : i64
    %tb = memref.subview %B[0, 0] [4, 4] [1, 1] : memref<8x8xi32> to memref<4x4xi32, strided<[8, 1]>>
    %ub = "memref.cast"(%tb) : (memref<4x4xi32, strided<[8, 1]>>) -> memref<*xi32>
    %early = func.call @copy_to_inbuffer_padded_i32(%ub, %zero, %p4, %p4, %none, %none) : (memref<*xi32>, i32, i64, i64, i64, i64) -> i32
    %init = func.call @dma_init(%addr, %addr, %words, %addr, %words) : (i64, i64, i64, i64, i64) -> i32
    scf.for %i = %c0 to %c8 step %c4 {
      %o1 = func.call @write_literal(%op, %zero) : (i32, i32) -> i32
      %t = memref.subview %A[%i, 0] [4, 4] [1, 1] : memref<8x8xi32> to memref<4x4xi32, strided<[8, 1], offset: ?>>
      %u = "memref.cast"(%t) : (memref<4x4xi32, strided<[8, 1], offset: ?>>) -> memref<*xi32>
      %o2 = func.call @copy_to_inbuffer_padded_i32(%u, %o1, %p4, %p4, %none, %none) : (memref<*xi32>, i32, i64, i64, i64, i64) -> i32
      %s = func.call @dma_start_send(%o2, %zero) : (i32, i32) -> i32
      %w = func.call @dma_wait_send() : () -> i32
      scf.yield
    }
    %te = memref.subview %A[4, 4] [%rows, 4] [1, 1] : memref<8x8xi32> to memref<?x4xi32, strided<[8, 1], offset: 36>>
    %ue = "memref.cast"(%te) : (memref<?x4xi32, strided<[8, 1], offset: 36>>) -> memref<*xi32>
    %o3 = func.call @copy_to_inbuffer_padded_i32(%ue, %zero, %p4, %p4, %none, %none) : (memref<*xi32>, i32, i64, i64, i64, i64) -> i32
    %r = func.call @dma_start_recv(%o3, %zero) : (i32, i32) -> i32
    %rw = func.call @dma_wait_recv() : () -> i32
    %tc = memref.subview %C[4, 0] [4, 4] [1, 1] : memref<8x8xi32> to memref<4x4xi32, strided<[8, 1], offset: 32>>
    %uc = "memref.cast"(%tc) : (memref<4x4xi32, strided<[8, 1], offset: 32>>) -> memref<*xi32>
    %o4 = func.call @copy_from_outbuffer_padded_acc_i32(%uc, %zero, %p4, %p4, %none, %none) : (memref<*xi32>, i32, i64, i64, i64, i64) -> i32
    %f = func.call @dma_free() : () -> i32
    func.return
  }
  func.func private @dma_init(i64, i64, i64, i64, i64) -> i32
  func.func private @write_literal(i32, i32) -> i32
  func.func private @copy_to_inbuffer_padded_i32(memref<*xi32>, i32, i64, i64, i64, i64) -> i32
  func.func private @copy_from_outbuffer_padded_acc_i32(memref<*xi32>, i32, i64, i64, i64, i64) -> i32
  func.func private @dma_start_send(i32, i32) -> i32
  func.func private @dma_wait_send() -> i32
  func.func private @dma_start_recv(i32, i32) -> i32
  func.func private @dma_wait_recv() -> i32
  func.func private @dma_free() -> i32
}
