// stage placed: after accel-place-flow,dce
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
    accel.init_dma %11, %12, %13, %14, %15
    scf.for %16 = %9 to %4 step %10 {
      %17 = arith.constant 240 : index
      scf.for %18 = %9 to %8 step %17 {
        %19 = arith.constant 240 : index
        %20 = arith.addi %16, %19 : index
        %21 = arith.minsi %20, %4 : index
        %22 = arith.constant 240 : index
        %23 = arith.addi %18, %22 : index
        %24 = arith.minsi %23, %8 : index
        %25 = arith.constant 16 : index
        %26 = arith.constant 16 : index
        %27 = arith.constant 16 : index
        scf.for %28 = %16 to %21 step %25 {
          scf.for %29 = %18 to %24 step %26 {
            %30 = arith.constant 0 : i32
            %31 = arith.constant 1 : i32
            %32 = accel.send_literal %31, %30
            %33 = arith.constant 16 : index
            %34 = arith.subi %21, %28 : index
            %35 = arith.minsi %33, %34 : index
            %36 = arith.constant 16 : index
            %37 = arith.subi %24, %29 : index
            %38 = arith.minsi %36, %37 : index
            %39 = memref.subview %0[%28, %29] [%35, %38] [1, 1] : memref<64x64xi32> to memref<?x?xi32, strided<[64, 1], offset: ?>>
            %40 = accel.send %39, %32 padded [16, 16] : memref<?x?xi32, strided<[64, 1], offset: ?>>
            %41 = accel.flush_send %40
            scf.for %42 = %9 to %6 step %27 {
              %43 = arith.constant 0 : i32
              %44 = arith.constant 14 : i32
              %45 = accel.send_literal %44, %43
              %46 = arith.constant 16 : index
              %47 = arith.subi %24, %29 : index
              %48 = arith.minsi %46, %47 : index
              %49 = arith.constant 16 : index
              %50 = arith.subi %6, %42 : index
              %51 = arith.minsi %49, %50 : index
              %52 = memref.subview %1[%29, %42] [%48, %51] [1, 1] : memref<64x64xi32> to memref<?x?xi32, strided<[64, 1], offset: ?>>
              %53 = accel.send %52, %45 padded [16, 16] : memref<?x?xi32, strided<[64, 1], offset: ?>>
              %54 = accel.flush_send %53
              %55 = arith.constant 16 : index
              %56 = arith.subi %21, %28 : index
              %57 = arith.minsi %55, %56 : index
              %58 = arith.constant 16 : index
              %59 = arith.subi %6, %42 : index
              %60 = arith.minsi %58, %59 : index
              %61 = memref.subview %2[%28, %42] [%57, %60] [1, 1] : memref<64x64xi32> to memref<?x?xi32, strided<[64, 1], offset: ?>>
              %62 = arith.constant 16 : index
              %63 = arith.constant 16 : index
              %64 = arith.muli %62, %63 : index
              %65 = arith.index_cast %64 : index to i32
              accel.start_recv %65
              accel.wait_recv
              %66 = arith.constant 0 : i32
              %67 = accel.recv %61, %66 "accumulate" padded [16, 16] : memref<?x?xi32, strided<[64, 1], offset: ?>>
            } {accel.loop = #accel.loop<tile "n">}
          } {accel.loop = #accel.loop<tile "k">}
        } {accel.loop = #accel.loop<tile "m">}
      } {accel.loop = #accel.loop<cache "k">}
    } {accel.loop = #accel.loop<cache "m">}
    accel.free_dma
    func.return
  }
}
