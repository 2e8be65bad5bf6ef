// stage runtime: after convert-accel-to-runtime,dce
builtin.module {
  func.func @matmul(%0: memref<64x64xi32>, %1: memref<64x64xi32>, %2: memref<64x64xi32>) {
    %3 = arith.constant 0 : index
    %4 = memref.dim %0, %3 : memref<64x64xi32>
    %5 = arith.constant 1 : index
    %6 = memref.dim %1, %5 : memref<64x64xi32>
    %7 = arith.constant 1 : index
    %8 = memref.dim %0, %7 : memref<64x64xi32>
    %9 = arith.constant 0 : index
    %10 = arith.constant 240 : index
    %11 = arith.constant 1077936128 : i32
    %12 = arith.constant 369098752 : i32
    %13 = arith.constant 262144 : i32
    %14 = arith.constant 373293056 : i32
    %15 = arith.constant 262144 : i32
    %16 = arith.constant 4 : i32
    %17 = arith.extui %11 : i32 to i64
    %18 = arith.extui %12 : i32 to i64
    %19 = arith.divui %13, %16 : i32
    %20 = arith.extui %19 : i32 to i64
    %21 = arith.extui %14 : i32 to i64
    %22 = arith.divui %15, %16 : i32
    %23 = arith.extui %22 : i32 to i64
    %24 = func.call @dma_init(%17, %18, %20, %21, %23) : (i64, i64, i64, i64, i64) -> i32
    scf.for %25 = %9 to %4 step %10 {
      %26 = arith.constant 240 : index
      scf.for %27 = %9 to %8 step %26 {
        %28 = arith.constant 240 : index
        %29 = arith.addi %25, %28 : index
        %30 = arith.minsi %29, %4 : index
        %31 = arith.constant 240 : index
        %32 = arith.addi %27, %31 : index
        %33 = arith.minsi %32, %8 : index
        %34 = arith.constant 16 : index
        %35 = arith.constant 16 : index
        %36 = arith.constant 16 : index
        scf.for %37 = %25 to %30 step %34 {
          scf.for %38 = %27 to %33 step %35 {
            %39 = arith.constant 0 : i32
            %40 = arith.constant 1 : i32
            %41 = func.call @write_literal(%40, %39) : (i32, i32) -> i32
            %42 = arith.constant 16 : index
            %43 = arith.subi %30, %37 : index
            %44 = arith.minsi %42, %43 : index
            %45 = arith.constant 16 : index
            %46 = arith.subi %33, %38 : index
            %47 = arith.minsi %45, %46 : index
            %48 = memref.subview %0[%37, %38] [%44, %47] [1, 1] : memref<64x64xi32> to memref<?x?xi32, strided<[64, 1], offset: ?>>
            %49 = "memref.cast"(%48) : (memref<?x?xi32, strided<[64, 1], offset: ?>>) -> memref<*xi32>
            %50 = arith.constant 16 : i64
            %51 = arith.constant 16 : i64
            %52 = arith.constant -1 : i64
            %53 = arith.constant -1 : i64
            %54 = func.call @copy_to_inbuffer_padded_i32(%49, %41, %50, %51, %52, %53) : (memref<*xi32>, i32, i64, i64, i64, i64) -> i32
            %55 = arith.constant 0 : i32
            %56 = func.call @dma_start_send(%54, %55) : (i32, i32) -> i32
            %57 = func.call @dma_wait_send() : () -> i32
            scf.for %58 = %9 to %6 step %36 {
              %59 = arith.constant 0 : i32
              %60 = arith.constant 14 : i32
              %61 = func.call @write_literal(%60, %59) : (i32, i32) -> i32
              %62 = arith.constant 16 : index
              %63 = arith.subi %33, %38 : index
              %64 = arith.minsi %62, %63 : index
              %65 = arith.constant 16 : index
              %66 = arith.subi %6, %58 : index
              %67 = arith.minsi %65, %66 : index
              %68 = memref.subview %1[%38, %58] [%64, %67] [1, 1] : memref<64x64xi32> to memref<?x?xi32, strided<[64, 1], offset: ?>>
              %69 = "memref.cast"(%68) : (memref<?x?xi32, strided<[64, 1], offset: ?>>) -> memref<*xi32>
              %70 = arith.constant 16 : i64
              %71 = arith.constant 16 : i64
              %72 = arith.constant -1 : i64
              %73 = arith.constant -1 : i64
              %74 = func.call @copy_to_inbuffer_padded_i32(%69, %61, %70, %71, %72, %73) : (memref<*xi32>, i32, i64, i64, i64, i64) -> i32
              %75 = arith.constant 0 : i32
              %76 = func.call @dma_start_send(%74, %75) : (i32, i32) -> i32
              %77 = func.call @dma_wait_send() : () -> i32
              %78 = arith.constant 16 : index
              %79 = arith.subi %30, %37 : index
              %80 = arith.minsi %78, %79 : index
              %81 = arith.constant 16 : index
              %82 = arith.subi %6, %58 : index
              %83 = arith.minsi %81, %82 : index
              %84 = memref.subview %2[%37, %58] [%80, %83] [1, 1] : memref<64x64xi32> to memref<?x?xi32, strided<[64, 1], offset: ?>>
              %85 = arith.constant 16 : index
              %86 = arith.constant 16 : index
              %87 = arith.muli %85, %86 : index
              %88 = arith.index_cast %87 : index to i32
              %89 = arith.constant 0 : i32
              %90 = func.call @dma_start_recv(%88, %89) : (i32, i32) -> i32
              %91 = func.call @dma_wait_recv() : () -> i32
              %92 = arith.constant 0 : i32
              %93 = "memref.cast"(%84) : (memref<?x?xi32, strided<[64, 1], offset: ?>>) -> memref<*xi32>
              %94 = arith.constant 16 : i64
              %95 = arith.constant 16 : i64
              %96 = arith.constant -1 : i64
              %97 = arith.constant -1 : i64
              %98 = func.call @copy_from_outbuffer_padded_acc_i32(%93, %92, %94, %95, %96, %97) : (memref<*xi32>, i32, i64, i64, i64, i64) -> i32
            }
          }
        }
      }
    }
    %99 = func.call @dma_free() : () -> i32
    func.return
  }
  func.func private @dma_init(i64, i64, i64, i64, i64) -> i32
  func.func private @write_literal(i32, i32) -> i32
  func.func private @copy_to_inbuffer_padded_i32(memref<*xi32>, i32, i64, i64, i64, i64) -> i32
  func.func private @dma_start_send(i32, i32) -> i32
  func.func private @dma_wait_send() -> i32
  func.func private @dma_start_recv(i32, i32) -> i32
  func.func private @dma_wait_recv() -> i32
  func.func private @copy_from_outbuffer_padded_acc_i32(memref<*xi32>, i32, i64, i64, i64, i64) -> i32
  func.func private @dma_free() -> i32
}
