// k0 -> s01 -> k1 -> s12 -> k2 -> s23 -> k3: small buffers; s01 and s23 never live together
%in = "olympus.channel"() <{paramType = "stream", depth = 16 : i64}> : () -> !olympus.channel<i32>
%s01 = "olympus.channel"() <{paramType = "small", depth = 4096 : i64}> : () -> !olympus.channel<i32>
%s12 = "olympus.channel"() <{paramType = "small", depth = 4096 : i64}> : () -> !olympus.channel<i32>
%s23 = "olympus.channel"() <{paramType = "small", depth = 4096 : i64}> : () -> !olympus.channel<i32>
"olympus.kernel"(%in, %s01) <{callee = "k0", latency = 10 : i64, ii = 10 : i64, ff = 1 : i64, lut = 1 : i64, bram = 0 : i64, uram = 0 : i64, dsp = 0 : i64, operandSegmentSizes = array<i32: 1, 1>}> : (!olympus.channel<i32>, !olympus.channel<i32>) -> ()
"olympus.kernel"(%s01, %s12) <{callee = "k1", latency = 10 : i64, ii = 10 : i64, ff = 1 : i64, lut = 1 : i64, bram = 0 : i64, uram = 0 : i64, dsp = 0 : i64, operandSegmentSizes = array<i32: 1, 1>}> : (!olympus.channel<i32>, !olympus.channel<i32>) -> ()
"olympus.kernel"(%s12, %s23) <{callee = "k2", latency = 10 : i64, ii = 10 : i64, ff = 1 : i64, lut = 1 : i64, bram = 0 : i64, uram = 0 : i64, dsp = 0 : i64, operandSegmentSizes = array<i32: 1, 1>}> : (!olympus.channel<i32>, !olympus.channel<i32>) -> ()
"olympus.kernel"(%s23) <{callee = "k3", latency = 10 : i64, ii = 10 : i64, ff = 1 : i64, lut = 1 : i64, bram = 0 : i64, uram = 0 : i64, dsp = 0 : i64, operandSegmentSizes = array<i32: 1, 0>}> : (!olympus.channel<i32>) -> ()
