// stage tiled: after accel-tile
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
    scf.for %11 = %9 to %4 step %10 {
      %12 = arith.constant 240 : index
      scf.for %13 = %9 to %8 step %12 {
        %14 = arith.constant 240 : index
        %15 = arith.addi %11, %14 : index
        %16 = arith.minsi %15, %4 : index
        %17 = arith.constant 240 : index
        %18 = arith.addi %13, %17 : index
        %19 = arith.minsi %18, %8 : index
        %20 = arith.constant 16 : index
        %21 = arith.constant 16 : index
        %22 = arith.constant 16 : index
        scf.for %23 = %11 to %16 step %20 {
          scf.for %24 = %13 to %19 step %21 {
            scf.for %25 = %9 to %6 step %22 {
              %26 = arith.subi %16, %23 : index
              %27 = arith.minsi %20, %26 : index
              %28 = arith.subi %19, %24 : index
              %29 = arith.minsi %21, %28 : index
              %30 = arith.subi %6, %25 : index
              %31 = arith.minsi %22, %30 : index
              %32 = memref.subview %0[%23, %24] [%27, %29] [1, 1] : memref<64x64xi32> to memref<?x?xi32, strided<[64, 1], offset: ?>>
              %33 = memref.subview %1[%24, %25] [%29, %31] [1, 1] : memref<64x64xi32> to memref<?x?xi32, strided<[64, 1], offset: ?>>
              %34 = memref.subview %2[%23, %25] [%27, %31] [1, 1] : memref<64x64xi32> to memref<?x?xi32, strided<[64, 1], offset: ?>>
              linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%32, %33 : memref<?x?xi32, strided<[64, 1], offset: ?>>, memref<?x?xi32, strided<[64, 1], offset: ?>>) outs(%34 : memref<?x?xi32, strided<[64, 1], offset: ?>>) attrs =  {accel.accelerator = "v3_16", accel.flow = "As", accel.description = "/work/main/loom/examples/accelerators/matmul_v3.json", accel.dims = ["m", "n", "k"], accel.tile_sizes = array<i64: 16, 16, 16>, accel.cache_tiles = array<i64: 240, 0, 240>, accel.permutation = array<i64: 0, 2, 1>, accel.tiled} {
              ^bb0(%35: i32, %36: i32, %37: i32):
                %38 = arith.muli %35, %36 : i32
                %39 = arith.addi %38, %37 : i32
                linalg.yield %39 : i32
              }
            } {accel.loop = "n"}
          } {accel.loop = "k"}
        } {accel.loop = "m"}
      } {accel.cache_loop = "k"}
    } {accel.cache_loop = "m"}
    func.return
  }
}
