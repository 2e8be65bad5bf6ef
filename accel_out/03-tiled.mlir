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
              linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%32, %33 : memref<?x?xi32, strided<[64, 1], offset: ?>>, memref<?x?xi32, strided<[64, 1], offset: ?>>) outs(%34 : memref<?x?xi32, strided<[64, 1], offset: ?>>) attrs =  {accel.accelerator = #accel.accelerator<"v3_16", "{\"accelerators\":[{\"buffers\":{\"A\":256,\"B\":256,\"C\":256},\"data_type\":\"i32\",\"description\":\"MatMul 16x16x16, input and output reuse\",\"dims\":[\"m\",\"n\",\"k\"],\"dma\":{\"dma_address\":\"0x40400000\",\"input_address\":\"0x16000000\",\"input_size\":262144,\"output_address\":\"0x16400000\",\"output_size\":262144},\"kernel\":\"matmul\",\"name\":\"v3_16\",\"notes\":[\"Opcode word bits: bit0 read A, bit1 read B, bit2 compute (C += A.B inside the accelerator),\",\"bit3 send C then clear it. 1=sA, 2=sB, 3=sAB, 4=compute, 7=sAB+compute, 8=send C,\",\"13=sA+compute+send C, 14=sB+compute+send C, 15=sAB+compute+send C.\"],\"opcode_flows\":{\"As\":{\"accumulate_on_cpu\":true,\"flow\":\"(sA (sBcCrC))\",\"permutation\":\"(m, n, k) -> (m, k, n)\"},\"Bs\":{\"accumulate_on_cpu\":true,\"flow\":\"(sB (sAcCrC))\",\"permutation\":\"(m, n, k) -> (n, k, m)\"},\"Cs\":{\"description\":\"C stationary: the accelerator accumulates over k, C is sent once per (m, n)\",\"flow\":\"((sABcC) sendC)\",\"permutation\":\"(m, n, k) -> (m, n, k)\"},\"Ns\":{\"accumulate_on_cpu\":true,\"flow\":\"(sABcCrC rC)\",\"permutation\":\"(m, n, k) -> (m, n, k)\"}},\"opcode_map\":\"opcode_map<sABcCrC=[send_literal(15), send(0), send(1)], rC=[recv(2)], sA=[send_literal(1), send(0)], sBcCrC=[send_literal(14), send(1), recv(2)], sB=[send_literal(2), send(1)], sAcCrC=[send_literal(13), send(0), recv(2)], sABcC=[send_literal(7), send(0), send(1)], sendC=[send_literal(8), recv(2)]>\",\"operands\":[{\"dims\":[\"m\",\"k\"],\"name\":\"A\"},{\"dims\":[\"k\",\"n\"],\"name\":\"B\"},{\"dims\":[\"m\",\"n\"],\"name\":\"C\"}],\"selected_flow\":\"Cs\",\"tile_sizes\":{\"k\":16,\"m\":16,\"n\":16},\"version\":\"3.0\"}],\"cpu\":{\"caches\":[{\"associativity\":4,\"kind\":\"data\",\"line_size\":32,\"name\":\"L1\",\"size\":\"32KiB\"},{\"associativity\":8,\"kind\":\"shared\",\"line_size\":32,\"name\":\"L2\",\"size\":\"512KiB\"}],\"core\":\"ARM Cortex-A9 (Zynq-7000, 650 MHz)\",\"name\":\"pynq-z2\"}}">, accel.plan = #accel.plan<flow "As", dims [m, n, k], tiles [16, 16, 16], cache [240, 0, 240], permutation [0, 2, 1]>, accel.tiled} {
              ^bb0(%35: i32, %36: i32, %37: i32):
                %38 = arith.muli %35, %36 : i32
                %39 = arith.addi %38, %37 : i32
                linalg.yield %39 : i32
              }
            } {accel.loop = #accel.loop<tile "n">}
          } {accel.loop = #accel.loop<tile "k">}
        } {accel.loop = #accel.loop<tile "m">}
      } {accel.loop = #accel.loop<cache "k">}
    } {accel.loop = #accel.loop<cache "m">}
    func.return
  }
}
