builtin.module {
  func.func @g(%0: memref<4xindex>, %1: memref<6x?xf64>, %2: memref<4xf64>, %n: index) {
    %3 = arith.constant 4 : index
    "esn.let"(%3, %n, %2) <{kind = "+", operandSegmentSizes = array<i32: 2, 1>}> ({
    ^bb0(%5: index):
      %6 = esn.reduction 0 : i64
      %7 = esn.subscript %0[%5] : memref<4xindex> -> index
      %8 = arith.constant 1 : index
      %9 = arith.addi %7, %8 : index
      %10 = esn.subscript %1[%9, %6] : memref<6x?xf64> -> f64
      esn.yield %10 : f64
    }, {
    ^bb0(%14: f64, %15: f64):
      %16 = arith.addf %14, %15 : f64
      esn.yield %16 : f64
    }) : (index, index, memref<4xf64>) -> ()
    func.return
  }
}
