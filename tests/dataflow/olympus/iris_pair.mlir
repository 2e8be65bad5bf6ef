// two input arrays of a kernel on a 64-bit bus: 32-bit a and 26-bit (custom precision) b
%a = "olympus.channel"() <{paramType = "complex", depth = 4000 : i64}> : () -> !olympus.channel<i32>
%b = "olympus.channel"() <{paramType = "complex", depth = 3250 : i64}> : () -> !olympus.channel<i26>
"olympus.kernel"(%a, %b) <{callee = "mix", latency = 10 : i64, ii = 1 : i64, ff = 100 : i64, lut = 100 : i64, bram = 0 : i64, uram = 0 : i64, dsp = 1 : i64, operandSegmentSizes = array<i32: 2, 0>}> : (!olympus.channel<i32>, !olympus.channel<i26>) -> ()
