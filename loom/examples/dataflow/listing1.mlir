// EVEREST D4.5 Listing 1 (seed L432-464; truncated lines reconstructed as in docs): three nodes,
// @sum loops, @get_op injects an environment value, @pow2 is offloaded (body-less: bound at run time).
// The seed's environment function shares the name @get_op with its operator; it is @read_op here
// (one symbol table cannot hold both), and calls carry MLIR's full `() -> ui32` type.
func.func private @read_op() -> ui32

dfg.operator @sum inputs(%op_a: ui32, %op_b: ui32) outputs(%a: ui32) {
  dfg.loop inputs(%op_a: ui32, %op_b: ui32) outputs(%a: ui32) {
    %inp1 = dfg.pull %op_a : ui32
    %inp2 = dfg.pull %op_b : ui32
    %result = arith.addi %inp1, %inp2 : ui32
    dfg.push(%result) %a : ui32
  }
}
dfg.operator @get_op outputs(%op_b: ui32) {
  %b = func.call @read_op() : () -> ui32
  dfg.push(%b) %op_b : ui32
}
dfg.operator @pow2 inputs(%op_c_in: ui32) outputs(%op_d_out: ui32) attributes {evp.path = "src.cpp"}

// algorithm entry point
func.func @run_dfg(%op_a: ui32) -> ui32 {
  %op_a_in, %op_a_out = dfg.channel() : ui32
  %op_b_in, %op_b_out = dfg.channel() : ui32
  %op_c_in, %op_c_out = dfg.channel() : ui32
  %res_in, %res_out = dfg.channel() : ui32
  // inputs
  dfg.push(%op_a) %op_a_out
  dfg.instantiate @get_op outputs(%op_b_out)
  dfg.instantiate @sum inputs(%op_a_in, %op_b_in) outputs(%op_c_out)
  // kernels seamlessly integrate
  dfg.instantiate offloaded @pow2 inputs(%op_c_in) outputs(%res_out)
  %res = dfg.pull %res_in
  return %res : ui32
}
