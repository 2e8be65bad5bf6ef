// placed stage of matmul_12x8x20.mlir on v3_4 (matmul_v3.json), flow Cs
builtin.module {
  func.func @matmul(%A: memref<12x20xi32>, %B: memref<20x8xi32>, %C: memref<12x8xi32>) {
    %0 = arith.constant 0 : index
    %1 = memref.dim %A, %0 : memref<12x20xi32>
    %2 = arith.constant 1 : index
    %3 = memref.dim %B, %2 : memref<20x8xi32>
    %4 = arith.constant 1 : index
    %5 = memref.dim %A, %4 : memref<12x20xi32>
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
              %37 = memref.subview %A[%25, %27] [%33, %36] [1, 1] : memref<12x20xi32> to memref<?x?xi32, strided<[20, 1], offset: ?>>
              %38 = accel.send %37, %30 padded [4, 4] : memref<?x?xi32, strided<[20, 1], offset: ?>>
              %39 = arith.constant 4 : index
              %40 = arith.subi %5, %27 : index
              %41 = arith.minsi %39, %40 : index
              %42 = arith.constant 4 : index
              %43 = arith.subi %21, %26 : index
              %44 = arith.minsi %42, %43 : index
              %45 = memref.subview %B[%27, %26] [%41, %44] [1, 1] : memref<20x8xi32> to memref<?x?xi32, strided<[8, 1], offset: ?>>
              %46 = accel.send %45, %38 padded [4, 4] : memref<?x?xi32, strided<[8, 1], offset: ?>>
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
            %58 = memref.subview %C[%25, %26] [%54, %57] [1, 1] : memref<12x8xi32> to memref<?x?xi32, strided<[8, 1], offset: ?>>
            %59 = arith.constant 4 : index
            %60 = arith.constant 4 : index
            %61 = arith.muli %59, %60 : index
            %62 = arith.index_cast %61 : index to i32
            accel.start_recv %62
            accel.wait_recv
            %63 = arith.constant 0 : i32
            %64 = accel.recv %58, %63 "accumulate" padded [4, 4] : memref<?x?xi32, strided<[8, 1], offset: ?>>
          } {accel.loop = #accel.loop<tile "n">}
        } {accel.loop = #accel.loop<tile "m">}
      } {accel.loop = #accel.loop<cache "n">}
    } {accel.loop = #accel.loop<cache "m">}
    accel.free_dma
    func.return
  }
}
