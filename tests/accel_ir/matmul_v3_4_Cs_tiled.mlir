// tiled stage of matmul_12x8x20.mlir on v3_4 (matmul_v3.json), flow Cs
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
    scf.for %8 = %6 to %1 step %7 {
      %9 = arith.constant 252 : index
      scf.for %10 = %6 to %3 step %9 {
        %11 = arith.constant 252 : index
        %12 = arith.addi %8, %11 : index
        %13 = arith.minsi %12, %1 : index
        %14 = arith.constant 252 : index
        %15 = arith.addi %10, %14 : index
        %16 = arith.minsi %15, %3 : index
        %17 = arith.constant 4 : index
        %18 = arith.constant 4 : index
        %19 = arith.constant 4 : index
        scf.for %20 = %8 to %13 step %17 {
          scf.for %21 = %10 to %16 step %18 {
            scf.for %22 = %6 to %5 step %19 {
              %23 = arith.subi %13, %20 : index
              %24 = arith.minsi %17, %23 : index
              %25 = arith.subi %16, %21 : index
              %26 = arith.minsi %18, %25 : index
              %27 = arith.subi %5, %22 : index
              %28 = arith.minsi %19, %27 : index
              %29 = memref.subview %A[%20, %22] [%24, %28] [1, 1] : memref<12x20xi32> to memref<?x?xi32, strided<[20, 1], offset: ?>>
              %30 = memref.subview %B[%22, %21] [%28, %26] [1, 1] : memref<20x8xi32> to memref<?x?xi32, strided<[8, 1], offset: ?>>
              %31 = memref.subview %C[%20, %21] [%24, %26] [1, 1] : memref<12x8xi32> to memref<?x?xi32, strided<[8, 1], offset: ?>>
              linalg.generic {indexing_maps = [affine_map<(d0, d1, d2) -> (d0, d2)>, affine_map<(d0, d1, d2) -> (d2, d1)>, affine_map<(d0, d1, d2) -> (d0, d1)>], iterator_types = ["parallel", "parallel", "reduction"]} ins(%29, %30 : memref<?x?xi32, strided<[20, 1], offset: ?>>, memref<?x?xi32, strided<[8, 1], offset: ?>>) outs(%31 : memref<?x?xi32, strided<[8, 1], offset: ?>>) attrs =  {accel.accelerator = #accel.accelerator<"v3_4", "{\"accelerators\":[{\"buffers\":{\"A\":16,\"B\":16,\"C\":16},\"data_type\":\"i32\",\"description\":\"MatMul 4x4x4, input and output reuse\",\"dims\":[\"m\",\"n\",\"k\"],\"dma\":{\"dma_address\":\"0x40400000\",\"input_address\":\"0x16000000\",\"input_size\":262144,\"output_address\":\"0x16400000\",\"output_size\":262144},\"kernel\":\"matmul\",\"name\":\"v3_4\",\"notes\":[\"Opcode word bits: bit0 read A, bit1 read B, bit2 compute (C += A.B inside the accelerator),\",\"bit3 send C then clear it. 1=sA, 2=sB, 3=sAB, 4=compute, 7=sAB+compute, 8=send C,\",\"13=sA+compute+send C, 14=sB+compute+send C, 15=sAB+compute+send C.\"],\"opcode_flows\":{\"As\":{\"accumulate_on_cpu\":true,\"flow\":\"(sA (sBcCrC))\",\"permutation\":\"(m, n, k) -> (m, k, n)\"},\"Bs\":{\"accumulate_on_cpu\":true,\"flow\":\"(sB (sAcCrC))\",\"permutation\":\"(m, n, k) -> (n, k, m)\"},\"Cs\":{\"description\":\"C stationary: the accelerator accumulates over k, C is sent once per (m, n)\",\"flow\":\"((sABcC) sendC)\",\"permutation\":\"(m, n, k) -> (m, n, k)\"},\"Ns\":{\"accumulate_on_cpu\":true,\"flow\":\"(sABcCrC rC)\",\"permutation\":\"(m, n, k) -> (m, n, k)\"}},\"opcode_map\":\"opcode_map<sABcCrC=[send_literal(15), send(0), send(1)], rC=[recv(2)], sA=[send_literal(1), send(0)], sBcCrC=[send_literal(14), send(1), recv(2)], sB=[send_literal(2), send(1)], sAcCrC=[send_literal(13), send(0), recv(2)], sABcC=[send_literal(7), send(0), send(1)], sendC=[send_literal(8), recv(2)]>\",\"operands\":[{\"dims\":[\"m\",\"k\"],\"name\":\"A\"},{\"dims\":[\"k\",\"n\"],\"name\":\"B\"},{\"dims\":[\"m\",\"n\"],\"name\":\"C\"}],\"selected_flow\":\"Cs\",\"tile_sizes\":{\"k\":4,\"m\":4,\"n\":4},\"version\":\"3.0\"}],\"cpu\":{\"caches\":[{\"associativity\":4,\"kind\":\"data\",\"line_size\":32,\"name\":\"L1\",\"size\":\"32KiB\"},{\"associativity\":8,\"kind\":\"shared\",\"line_size\":32,\"name\":\"L2\",\"size\":\"512KiB\"}],\"core\":\"ARM Cortex-A9 (Zynq-7000, 650 MHz)\",\"name\":\"pynq-z2\"}}">, accel.plan = #accel.plan<flow "Cs", dims [m, n, k], tiles [4, 4, 4], cache [252, 252, 0], permutation [0, 1, 2]>, accel.tiled} {
              ^bb0(%32: i32, %33: i32, %34: i32):
                %35 = arith.muli %32, %33 : i32
                %36 = arith.addi %35, %34 : i32
                linalg.yield %36 : i32
              }
            } {accel.loop = #accel.loop<tile "k">}
          } {accel.loop = #accel.loop<tile "n">}
        } {accel.loop = #accel.loop<tile "m">}
      } {accel.loop = #accel.loop<cache "n">}
    } {accel.loop = #accel.loop<cache "m">}
    func.return
  }
}
