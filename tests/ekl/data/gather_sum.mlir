builtin.module {
  func.func @g(%0: memref<4xindex>, %1: memref<6x3xf64>, %2: memref<3xf64>, %3: memref<4xf64>) {
    %4 = arith.constant 4 : index
    %5 = arith.constant 3 : index
    "esn.let"(%4, %5, %3) <{kind = "+", operandSegmentSizes = array<i32: 2, 1>}> ({
    ^bb0(%6: index):
      %7 = esn.reduction 0 : i64
      %8 = esn.subscript %0[%6] : memref<4xindex> -> index
      %9 = arith.constant 1 : index
      %10 = arith.addi %8, %9 : index
      %11 = esn.subscript %1[%10, %7] : memref<6x3xf64> -> f64
      %12 = esn.subscript %2[%7] : memref<3xf64> -> f64
      %13 = arith.mulf %11, %12 : f64
      esn.yield %13 : f64
    }, {
    ^bb0(%14: f64, %15: f64):
      %16 = arith.addf %14, %15 : f64
      esn.yield %16 : f64
    }) : (index, index, memref<4xf64>) -> ()
    func.return
  }
}
