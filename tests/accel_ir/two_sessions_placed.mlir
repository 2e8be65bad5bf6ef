// placed stage of two matmuls in one function on two engines (v3_4: C[4x4] += A.B, v3_16: F[48x48] += D.E):
// two DMA sessions, init_dma .. free_dma each, one after the other
builtin.module {
  func.func @two_matmuls(%A: memref<4x4xi32>, %B: memref<4x4xi32>, %C: memref<4x4xi32>, %D: memref<48x48xi32>, %E: memref<48x48xi32>, %F: memref<48x48xi32>) {
    %0 = arith.constant 0 : index
    %1 = memref.dim %A, %0 : memref<4x4xi32>
    %2 = arith.constant 1 : index
    %3 = memref.dim %B, %2 : memref<4x4xi32>
    %4 = arith.constant 1 : index
    %5 = memref.dim %A, %4 : memref<4x4xi32>
    %6 = arith.constant 0 : index
    %7 = arith.constant 252 : index
    %8 = arith.constant 1077936128 : i32
    %9 = arith.constant 369098752 : i32
    %10 = arith.constant 262144 : i32
    %11 = arith.constant 373293056 : i32
    %12 = arith.constant 262144 : i32
    accel.init_dma %8, %9, %10, %11, %12
    scf.for %13 = %6 to %1 step %7 {
      %14 = arith.constant 252 : index
      scf.for %15 = %6 to %3 step %14 {
        %16 = arith.constant 252 : index
        %17 = arith.addi %13, %16 : index
        %18 = arith.minsi %17, %1 : index
        %19 = arith.constant 252 : index
        %20 = arith.addi %15, %19 : index
        %21 = arith.minsi %20, %3 : index
        %22 = arith.constant 4 : index
        %23 = arith.constant 4 : index
        %24 = arith.constant 4 : index
        scf.for %25 = %13 to %18 step %22 {
          scf.for %26 = %15 to %21 step %23 {
            scf.for %27 = %6 to %5 step %24 {
              %28 = arith.constant 0 : i32
              %29 = arith.constant 7 : i32
              %30 = accel.send_literal %29, %28
              %31 = arith.constant 4 : index
              %32 = arith.subi %18, %25 : index
              %33 = arith.minsi %31, %32 : index
              %34 = arith.constant 4 : index
              %35 = arith.subi %5, %27 : index
              %36 = arith.minsi %34, %35 : index
              %37 = memref.subview %A[%25, %27] [%33, %36] [1, 1] : memref<4x4xi32> to memref<?x?xi32, strided<[4, 1], offset: ?>>
              %38 = accel.send %37, %30 padded [4, 4] : memref<?x?xi32, strided<[4, 1], offset: ?>>
              %39 = arith.constant 4 : index
              %40 = arith.subi %5, %27 : index
              %41 = arith.minsi %39, %40 : index
              %42 = arith.constant 4 : index
              %43 = arith.subi %21, %26 : index
              %44 = arith.minsi %42, %43 : index
              %45 = memref.subview %B[%27, %26] [%41, %44] [1, 1] : memref<4x4xi32> to memref<?x?xi32, strided<[4, 1], offset: ?>>
              %46 = accel.send %45, %38 padded [4, 4] : memref<?x?xi32, strided<[4, 1], offset: ?>>
              %47 = accel.flush_send %46
            } {accel.loop = #accel.loop<tile "k">}
            %48 = arith.constant 0 : i32
            %49 = arith.constant 8 : i32
            %50 = accel.send_literal %49, %48
            %51 = accel.flush_send %50
            %52 = arith.constant 4 : index
            %53 = arith.subi %18, %25 : index
            %54 = arith.minsi %52, %53 : index
            %55 = arith.constant 4 : index
            %56 = arith.subi %21, %26 : index
            %57 = arith.minsi %55, %56 : index
            %58 = memref.subview %C[%25, %26] [%54, %57] [1, 1] : memref<4x4xi32> to memref<?x?xi32, strided<[4, 1], offset: ?>>
            %59 = arith.constant 4 : index
            %60 = arith.constant 4 : index
            %61 = arith.muli %59, %60 : index
            %62 = arith.index_cast %61 : index to i32
            accel.start_recv %62
            accel.wait_recv
            %63 = arith.constant 0 : i32
            %64 = accel.recv %58, %63 "accumulate" padded [4, 4] : memref<?x?xi32, strided<[4, 1], offset: ?>>
          } {accel.loop = #accel.loop<tile "n">}
        } {accel.loop = #accel.loop<tile "m">}
      } {accel.loop = #accel.loop<cache "n">}
    } {accel.loop = #accel.loop<cache "m">}
    accel.free_dma
    %65 = arith.constant 0 : index
    %66 = memref.dim %D, %65 : memref<48x48xi32>
    %67 = arith.constant 1 : index
    %68 = memref.dim %E, %67 : memref<48x48xi32>
    %69 = arith.constant 1 : index
    %70 = memref.dim %D, %69 : memref<48x48xi32>
    %71 = arith.constant 0 : index
    %72 = arith.constant 240 : index
    %73 = arith.constant 1078001664 : i32
    %74 = arith.constant 377487360 : i32
    %75 = arith.constant 262144 : i32
    %76 = arith.constant 381681664 : i32
    %77 = arith.constant 262144 : i32
    accel.init_dma %73, %74, %75, %76, %77
    scf.for %78 = %71 to %66 step %72 {
      %79 = arith.constant 240 : index
      scf.for %80 = %71 to %68 step %79 {
        %81 = arith.constant 240 : index
        %82 = arith.addi %78, %81 : index
        %83 = arith.minsi %82, %66 : index
        %84 = arith.constant 240 : index
        %85 = arith.addi %80, %84 : index
        %86 = arith.minsi %85, %68 : index
        %87 = arith.constant 16 : index
        %88 = arith.constant 16 : index
        %89 = arith.constant 16 : index
        scf.for %90 = %78 to %83 step %87 {
          scf.for %91 = %80 to %86 step %88 {
            scf.for %92 = %71 to %70 step %89 {
              %93 = arith.constant 0 : i32
              %94 = arith.constant 7 : i32
              %95 = accel.send_literal %94, %93
              %96 = arith.constant 16 : index
              %97 = arith.subi %83, %90 : index
              %98 = arith.minsi %96, %97 : index
              %99 = arith.constant 16 : index
              %100 = arith.subi %70, %92 : index
              %101 = arith.minsi %99, %100 : index
              %102 = memref.subview %D[%90, %92] [%98, %101] [1, 1] : memref<48x48xi32> to memref<?x?xi32, strided<[48, 1], offset: ?>>
              %103 = accel.send %102, %95 padded [16, 16] : memref<?x?xi32, strided<[48, 1], offset: ?>>
              %104 = arith.constant 16 : index
              %105 = arith.subi %70, %92 : index
              %106 = arith.minsi %104, %105 : index
              %107 = arith.constant 16 : index
              %108 = arith.subi %86, %91 : index
              %109 = arith.minsi %107, %108 : index
              %110 = memref.subview %E[%92, %91] [%106, %109] [1, 1] : memref<48x48xi32> to memref<?x?xi32, strided<[48, 1], offset: ?>>
              %111 = accel.send %110, %103 padded [16, 16] : memref<?x?xi32, strided<[48, 1], offset: ?>>
              %112 = accel.flush_send %111
            } {accel.loop = #accel.loop<tile "k">}
            %113 = arith.constant 0 : i32
            %114 = arith.constant 8 : i32
            %115 = accel.send_literal %114, %113
            %116 = accel.flush_send %115
            %117 = arith.constant 16 : index
            %118 = arith.subi %83, %90 : index
            %119 = arith.minsi %117, %118 : index
            %120 = arith.constant 16 : index
            %121 = arith.subi %86, %91 : index
            %122 = arith.minsi %120, %121 : index
            %123 = memref.subview %F[%90, %91] [%119, %122] [1, 1] : memref<48x48xi32> to memref<?x?xi32, strided<[48, 1], offset: ?>>
            %124 = arith.constant 16 : index
            %125 = arith.constant 16 : index
            %126 = arith.muli %124, %125 : index
            %127 = arith.index_cast %126 : index to i32
            accel.start_recv %127
            accel.wait_recv
            %128 = arith.constant 0 : i32
            %129 = accel.recv %123, %128 "accumulate" padded [16, 16] : memref<?x?xi32, strided<[48, 1], offset: ?>>
          } {accel.loop = #accel.loop<tile "n">}
        } {accel.loop = #accel.loop<tile "m">}
      } {accel.loop = #accel.loop<cache "n">}
    } {accel.loop = #accel.loop<cache "m">}
    accel.free_dma
    func.return
  }
}