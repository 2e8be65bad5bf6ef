builtin.module {
  func.func @k(%0: memref<5xindex>, %1: memref<4x5xf64>, %2: memref<5xf64>) {
    %3 = arith.constant 5 : index
    "esn.let"(%3, %2) <{kind = "", operandSegmentSizes = array<i32: 1, 1>}> ({
    ^bb0(%4: index):
      %5 = esn.subscript %0[%4] : memref<5xindex> -> index
      %6 = arith.constant 0 : index
      %7 = arith.cmpi sgt, %5, %6 : index
      %8 = scf.if %7 -> (f64) {
        %9 = esn.subscript %0[%4] : memref<5xindex> -> index
        %10 = arith.constant 1 : index
        %11 = arith.subi %9, %10 : index
        %12 = esn.subscript %1[%11, %4] : memref<4x5xf64> -> f64
        scf.yield %12 : f64
      } else {
        %13 = arith.constant 1.000000e+00 : f64
        scf.yield %13 : f64
      }
      esn.yield %8 : f64
    }, {
    }) : (index, memref<5xf64>) -> ()
    func.return
  }
}
