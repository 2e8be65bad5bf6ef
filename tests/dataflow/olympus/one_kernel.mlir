// D4.5 Figure 18a: one kernel, two input channels and one output channel in global memory (64-bit data)
%a = "olympus.channel"() <{paramType = "complex", depth = 8000 : i64}> : () -> !olympus.channel<i64>
%b = "olympus.channel"() <{paramType = "complex", depth = 8000 : i64}> : () -> !olympus.channel<i64>
%c = "olympus.channel"() <{paramType = "complex", depth = 8000 : i64}> : () -> !olympus.channel<i64>
"olympus.kernel"(%a, %b, %c) <{callee = "vadd", latency = 1010 : i64, ii = 1000 : i64, ff = 20000 : i64, lut = 15000 : i64, bram = 4 : i64, uram = 0 : i64, dsp = 12 : i64, operandSegmentSizes = array<i32: 2, 1>}> : (!olympus.channel<i64>, !olympus.channel<i64>, !olympus.channel<i64>) -> ()
