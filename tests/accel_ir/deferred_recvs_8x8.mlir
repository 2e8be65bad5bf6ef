// convert-accel-to-runtime{double-buffer=true}'s output, by hand: per 4-row band of an 8x8 C, the
// previous receive is waited for and drained, the next started and its copy (a 4x4 tile of C,
// accumulated) deferred; after the loop the last one is drained before dma_free. The tile's row
// count is dynamic (%rows: an edge tile in general).
module {
  func.func @drive(%A: memref<8x8xi32>, %C: memref<8x8xi32>, %rows: index) {
    %c0 = arith.constant 0 : index
    %c4 = arith.constant 4 : index
    %c8 = arith.constant 8 : index
    %zero = arith.constant 0 : i32
    %on = arith.constant 1 : i32
    %n16 = arith.constant 16 : i32
    %p4 = arith.constant 4 : i64
    %none = arith.constant -1 : i64
    %addr = arith.constant 0 : i64
    %words = arith.constant 1024 : i64
    %init = func.call @dma_init(%addr, %addr, %words, %addr, %words) : (i64, i64, i64, i64, i64) -> i32
    %dbr = func.call @loom_dma_set_double_buffering(%on) : (i32) -> i32
    scf.for %i = %c0 to %c8 step %c4 {
      %w = func.call @dma_wait_recv() : () -> i32
      %d = func.call @loom_dma_drain_recvs() : () -> i32
      %r = func.call @dma_start_recv(%n16, %zero) : (i32, i32) -> i32
      %t = memref.subview %C[%i, 0] [%rows, 4] [1, 1] : memref<8x8xi32> to memref<?x4xi32, strided<[8, 1], offset: ?>>
      %u = "memref.cast"(%t) : (memref<?x4xi32, strided<[8, 1], offset: ?>>) -> memref<*xi32>
      %o = func.call @copy_from_outbuffer_deferred_acc_i32(%u, %zero, %p4, %p4, %none, %none) : (memref<*xi32>, i32, i64, i64, i64, i64) -> i32
      scf.yield
    }
    %w2 = func.call @dma_wait_recv() : () -> i32
    %d2 = func.call @loom_dma_drain_recvs() : () -> i32
    %f = func.call @dma_free() : () -> i32
    func.return
  }
  func.func private @dma_init(i64, i64, i64, i64, i64) -> i32
  func.func private @loom_dma_set_double_buffering(i32) -> i32
  func.func private @copy_to_inbuffer_padded_i32(memref<*xi32>, i32, i64, i64, i64, i64) -> i32
  func.func private @copy_from_outbuffer_deferred_acc_i32(memref<*xi32>, i32, i64, i64, i64, i64) -> i32
  func.func private @dma_start_recv(i32, i32) -> i32
  func.func private @dma_wait_recv() -> i32
  func.func private @loom_dma_drain_recvs() -> i32
  func.func private @dma_free() -> i32
}
