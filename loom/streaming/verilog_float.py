"""IEEE 754 binary floating point as SystemVerilog functions, for the kernels of streaming designs.

``float_functions(fmt)`` writes one format's functions (prefix ``f32_``; written from the format's exponent and
fraction widths, tested for f32) into a module: add, sub, mul, div, sqrt, the comparisons, IEEE
maximum/minimum, floor/ceil/trunc/round-half-even, and conversions from and to integers. Each is correctly
rounded to nearest, ties to even, with subnormals (no flush to zero), as the host CPU computes them and as the
value simulator (numpy) does, so the RTL's pixels equal the CPU path's bit for bit.

Every rounding goes through one function, ``pack``: a sign, an exponent ``q`` and an unsigned significand
``sig`` standing for ``sig * 2**q``; it normalises, rounds once and encodes (overflow to infinity, underflow
to a subnormal or zero). Operations that cannot be exact in a bounded width (an addition of far-apart
operands, a division, a square root) hand ``pack`` a significand whose last bit is a sticky bit (set when
bits were dropped): with at least two bits below the rounding position, the exact result lies strictly
between two neighbours of the significand handed over, no rounding boundary between them, so both round alike.

NaNs follow x86 SSE: a NaN operand comes back quietened (the first one of two), an invalid operation (inf -
inf, 0 * inf, 0 / 0, sqrt of a negative) gives the default NaN (sign set, quiet bit only); maximum and minimum
return a NaN operand quietened (IEEE leaves which one open). A float to integer conversion truncates; NaN,
infinities and values outside 32 bits (64 for an i64 result) give the minimum integer, which narrower results
then wrap, as a C cast compiled for x86 (``cvttss2si``) does.

Written for Verilator and Yosys: Verilog-2001 functions (assignment to the function's name, no ``return``,
loops of constant bounds).
"""

from __future__ import annotations

from loom.core.numformats import FloatFormat

F32 = FloatFormat(8, 23)  # IEEE binary32, in loom's one description of float formats
FORMATS = {32: F32}  # the fabric computes values of at most 32 bits (``extract`` refuses wider ones)


def prefix(fmt: FloatFormat) -> str:
    """The functions' name prefix: ``f32_``'s ``f32``."""
    return f"f{fmt.width}"


def float_functions(fmt: FloatFormat) -> str:
    """The SystemVerilog functions of ``fmt`` (an IEEE format), to be placed inside a module."""
    p, W, E, M, B = prefix(fmt), fmt.width, fmt.exp_bits, fmt.man_bits, fmt.bias
    S = max(64, 2 * (M + 1) + 8)  # ``pack``'s significand: a product of two significands with room, a 64-bit int
    inf = f"{{{E}'h{(1 << E) - 1:x}, {M}'d0}}"
    dnan = f"{{1'b1, {E}'h{(1 << E) - 1:x}, 1'b1, {M - 1}'d0}}"
    quiet = f"{W}'h{1 << (M - 1):x}"
    root_shift = M + 6 + (M % 2)  # even: the significand shifted before its integer square root
    root_bits = (M + 2 + root_shift) // 2 + 2
    return f"""
  // ---- IEEE binary{W} ({E}-bit exponent, {M}-bit fraction): loom.streaming.verilog_float ----
  function automatic {p}_isnan(input [{W - 1}:0] a); {p}_isnan = (&a[{W - 2}:{M}]) && (|a[{M - 1}:0]); endfunction
  function automatic {p}_isinf(input [{W - 1}:0] a); {p}_isinf = (&a[{W - 2}:{M}]) && !(|a[{M - 1}:0]); endfunction
  function automatic {p}_iszero(input [{W - 1}:0] a); {p}_iszero = !(|a[{W - 2}:0]); endfunction
  // significand with its hidden bit, and the exponent of its last bit: a = sig * 2**q
  function automatic [{M}:0] {p}_sig(input [{W - 1}:0] a); {p}_sig = {{|a[{W - 2}:{M}], a[{M - 1}:0]}}; endfunction
  function automatic integer {p}_q(input [{W - 1}:0] a);
    integer e;
    begin
      e = a[{W - 2}:{M}];
      if (e == 0) e = 1;
      {p}_q = e - {B} - {M};
    end
  endfunction
  // position of the leading one of a nonzero value
  function automatic integer {p}_lead(input [{S - 1}:0] v);
    integer i;
    begin
      {p}_lead = 0;
      for (i = 0; i < {S}; i = i + 1) if (v[i]) {p}_lead = i;
    end
  endfunction
  // sig * 2**q rounded to nearest even and encoded with the sign
  function automatic [{W - 1}:0] {p}_pack(input sign, input integer q, input [{S - 1}:0] sig);
    integer lead, be, shift;
    reg [{S - 1}:0] kept;
    reg [{S + 1}:0] enc;
    reg rnd, stk;
    begin
      if (sig == 0) {p}_pack = {{sign, {W - 1}'d0}};
      else begin
        lead = {p}_lead(sig);
        be = q + lead + {B};
        shift = (be >= 1) ? lead - {M} : {1 - B - M} - q;
        if (shift <= 0) begin kept = sig << (-shift); rnd = 0; stk = 0; end
        else if (shift > {S}) begin kept = 0; rnd = 0; stk = |sig; end
        else begin
          kept = sig >> shift;
          rnd = sig[shift - 1];
          stk = |(sig & ({{{S}{{1'b1}}}} >> ({S + 1} - shift)));
        end
        if (rnd && (stk || kept[0])) kept = kept + 1;
        if (be >= 1) begin enc = be - 1; enc = (enc << {M}) + kept; end
        else enc = kept;
        if (enc >= ({{{S + 2 - E}'d0, {{{E}{{1'b1}}}}}} << {M})) {p}_pack = {{sign, {inf}}};
        else {p}_pack = {{sign, enc[{W - 2}:0]}};
      end
    end
  endfunction
  function automatic [{W - 1}:0] {p}_add(input [{W - 1}:0] a, input [{W - 1}:0] b);
    reg [{W - 1}:0] x, y;
    integer qx, d;
    reg [{M + 3}:0] ex, ey, sy;
    reg [{M + 4}:0] sum;
    begin
      if ({p}_isnan(a)) {p}_add = a | {quiet};
      else if ({p}_isnan(b)) {p}_add = b | {quiet};
      else if ({p}_isinf(a) && {p}_isinf(b) && a[{W - 1}] != b[{W - 1}]) {p}_add = {dnan};
      else if ({p}_isinf(a)) {p}_add = a;
      else if ({p}_isinf(b)) {p}_add = b;
      else begin
        if (a[{W - 2}:0] >= b[{W - 2}:0]) begin x = a; y = b; end else begin x = b; y = a; end
        qx = {p}_q(x);
        d = qx - {p}_q(y);
        ex = {{{p}_sig(x), 3'b000}};
        sy = {{{p}_sig(y), 3'b000}};
        // the smaller operand aligned, the bits shifted out kept as a sticky last bit
        if (d > {M + 4}) ey = {{{M + 3}'d0, |sy}};
        else begin
          ey = sy >> d;
          if (|(sy & ~({{{M + 4}{{1'b1}}}} << d))) ey[0] = 1'b1;
        end
        sum = (x[{W - 1}] == y[{W - 1}]) ? {{1'b0, ex}} + {{1'b0, ey}} : {{1'b0, ex}} - {{1'b0, ey}};
        if (sum == 0) {p}_add = {{x[{W - 1}] & y[{W - 1}], {W - 1}'d0}};
        else {p}_add = {p}_pack(x[{W - 1}], qx - 3, {S}'(sum));
      end
    end
  endfunction
  function automatic [{W - 1}:0] {p}_sub(input [{W - 1}:0] a, input [{W - 1}:0] b);
    {p}_sub = ({p}_isnan(a) || !{p}_isnan(b)) ? {p}_add(a, b ^ {{1'b1, {W - 1}'d0}}) : b | {quiet};
  endfunction
  function automatic [{W - 1}:0] {p}_mul(input [{W - 1}:0] a, input [{W - 1}:0] b);
    reg sign;
    reg [{2 * M + 1}:0] prod;
    begin
      sign = a[{W - 1}] ^ b[{W - 1}];
      if ({p}_isnan(a)) {p}_mul = a | {quiet};
      else if ({p}_isnan(b)) {p}_mul = b | {quiet};
      else if (({p}_isinf(a) && {p}_iszero(b)) || ({p}_iszero(a) && {p}_isinf(b))) {p}_mul = {dnan};
      else if ({p}_isinf(a) || {p}_isinf(b)) {p}_mul = {{sign, {inf}}};
      else begin
        prod = {p}_sig(a) * {p}_sig(b);
        {p}_mul = {p}_pack(sign, {p}_q(a) + {p}_q(b), {S}'(prod));
      end
    end
  endfunction
  function automatic [{W - 1}:0] {p}_div(input [{W - 1}:0] a, input [{W - 1}:0] b);
    reg sign;
    reg [{M}:0] na, nb;
    integer qa, qb, la, lb;
    reg [{2 * M + 4}:0] num, quo, rem;
    begin
      sign = a[{W - 1}] ^ b[{W - 1}];
      if ({p}_isnan(a)) {p}_div = a | {quiet};
      else if ({p}_isnan(b)) {p}_div = b | {quiet};
      else if (({p}_isinf(a) && {p}_isinf(b)) || ({p}_iszero(a) && {p}_iszero(b))) {p}_div = {dnan};
      else if ({p}_isinf(a) || {p}_iszero(b)) {p}_div = {{sign, {inf}}};
      else if ({p}_isinf(b) || {p}_iszero(a)) {p}_div = {{sign, {W - 1}'d0}};
      else begin  // both significands normalised to a leading one at bit {M}: the quotient has {M + 3}+ bits
        la = {p}_lead({S}'({p}_sig(a)));
        lb = {p}_lead({S}'({p}_sig(b)));
        na = {p}_sig(a) << ({M} - la);
        nb = {p}_sig(b) << ({M} - lb);
        qa = {p}_q(a) - ({M} - la);
        qb = {p}_q(b) - ({M} - lb);
        num = {{{M + 4}'d0, na}} << {M + 3};
        quo = num / nb;
        rem = num % nb;
        {p}_div = {p}_pack(sign, qa - qb - {M + 3} - 1, {S}'({{quo, |rem}}));
      end
    end
  endfunction
  function automatic [{W - 1}:0] {p}_sqrt(input [{W - 1}:0] a);
    reg [{M + 1}:0] n;
    reg [{2 * root_bits - 1}:0] wide;
    reg [{root_bits - 1}:0] r;
    reg [{root_bits + 1}:0] rem, trial;
    integer q, l, i;
    begin
      if ({p}_isnan(a)) {p}_sqrt = a | {quiet};
      else if ({p}_iszero(a)) {p}_sqrt = a;
      else if (a[{W - 1}]) {p}_sqrt = {dnan};
      else if ({p}_isinf(a)) {p}_sqrt = a;
      else begin  // an even exponent, then the integer square root of the widened significand
        l = {p}_lead({S}'({p}_sig(a)));
        n = {{1'b0, {p}_sig(a)}} << ({M} - l);
        q = {p}_q(a) - ({M} - l);
        if (q % 2 != 0) begin n = n << 1; q = q - 1; end
        wide = {2 * root_bits}'(n) << {root_shift};
        // restoring square root, two bits of the radicand a step: shifts and subtractions, no multiplier
        r = 0;
        rem = 0;
        for (i = {root_bits - 1}; i >= 0; i = i - 1) begin
          rem = {{rem[{root_bits - 1}:0], wide[2 * i +: 2]}};
          trial = {{r, 2'b01}};
          if (rem >= trial) begin rem = rem - trial; r = {{r[{root_bits - 2}:0], 1'b1}}; end
          else r = {{r[{root_bits - 2}:0], 1'b0}};
        end
        {p}_sqrt = {p}_pack(1'b0, (q - {root_shift}) / 2 - 1, {S}'({{r, |rem}}));
      end
    end
  endfunction
  // ordered comparisons (false on a NaN); -0 equals +0
  function automatic {p}_eq(input [{W - 1}:0] a, input [{W - 1}:0] b);
    {p}_eq = !{p}_isnan(a) && !{p}_isnan(b) && (a == b || ({p}_iszero(a) && {p}_iszero(b)));
  endfunction
  function automatic {p}_lt(input [{W - 1}:0] a, input [{W - 1}:0] b);
    {p}_lt = !{p}_isnan(a) && !{p}_isnan(b) && !({p}_iszero(a) && {p}_iszero(b))
             && ((a[{W - 1}] != b[{W - 1}]) ? a[{W - 1}]
                 : (a[{W - 1}] ? a[{W - 2}:0] > b[{W - 2}:0] : a[{W - 2}:0] < b[{W - 2}:0]));
  endfunction
  // arith.cmpf by predicate number (false, oeq, ogt, oge, olt, ole, one, ord, ueq, ugt, uge, ult, ule, une, uno, true)
  function automatic {p}_cmp(input [3:0] pred, input [{W - 1}:0] a, input [{W - 1}:0] b);
    reg uno, eq, lt, gt;
    begin
      uno = {p}_isnan(a) || {p}_isnan(b);
      eq = {p}_eq(a, b);
      lt = {p}_lt(a, b);
      gt = {p}_lt(b, a);
      case (pred)
        4'd0: {p}_cmp = 1'b0;
        4'd1: {p}_cmp = eq;
        4'd2: {p}_cmp = gt;
        4'd3: {p}_cmp = gt || eq;
        4'd4: {p}_cmp = lt;
        4'd5: {p}_cmp = lt || eq;
        4'd6: {p}_cmp = lt || gt;
        4'd7: {p}_cmp = !uno;
        4'd8: {p}_cmp = uno || eq;
        4'd9: {p}_cmp = uno || gt;
        4'd10: {p}_cmp = uno || gt || eq;
        4'd11: {p}_cmp = uno || lt;
        4'd12: {p}_cmp = uno || lt || eq;
        4'd13: {p}_cmp = !eq;
        4'd14: {p}_cmp = uno;
        default: {p}_cmp = 1'b1;
      endcase
    end
  endfunction
  // IEEE 754-2019 maximum / minimum: a NaN operand propagates, -0 < +0
  function automatic [{W - 1}:0] {p}_max(input [{W - 1}:0] a, input [{W - 1}:0] b);
    {p}_max = {p}_isnan(a) ? a | {quiet} : {p}_isnan(b) ? b | {quiet}
            : ({p}_lt(a, b) || ({p}_iszero(a) && {p}_iszero(b) && a[{W - 1}])) ? b : a;
  endfunction
  function automatic [{W - 1}:0] {p}_min(input [{W - 1}:0] a, input [{W - 1}:0] b);
    {p}_min = {p}_isnan(a) ? a | {quiet} : {p}_isnan(b) ? b | {quiet}
            : ({p}_lt(b, a) || ({p}_iszero(a) && {p}_iszero(b) && b[{W - 1}])) ? b : a;
  endfunction
  // rounding to an integral value: mode 0 floor, 1 ceil, 2 trunc, 3 nearest even
  function automatic [{W - 1}:0] {p}_integral(input [1:0] mode, input [{W - 1}:0] a);
    integer q;
    reg [{M}:0] s, whole, frac, half;
    reg up;
    begin
      q = {p}_q(a);
      if ({p}_isnan(a)) {p}_integral = a | {quiet};
      else if ({p}_isinf(a) || {p}_iszero(a) || q >= 0) {p}_integral = a;
      else begin
        s = {p}_sig(a);
        whole = (q < {-(M + 1)}) ? 0 : s >> (-q);
        frac = (q < {-(M + 1)}) ? s : s & ~({{{M + 1}{{1'b1}}}} << (-q));
        half = (q < {-(M + 1)}) ? 0 : {M + 1}'d1 << (-q - 1);
        case (mode)
          2'd0: up = a[{W - 1}] && frac != 0;
          2'd1: up = !a[{W - 1}] && frac != 0;
          2'd2: up = 1'b0;
          default: up = half != 0 && (frac > half || (frac == half && whole[0]));
        endcase
        {p}_integral = {p}_pack(a[{W - 1}], 0, {S}'(whole) + {S}'(up));
      end
    end
  endfunction
  // a signed (or unsigned) integer of up to 64 bits, sign- or zero-extended by the caller
  function automatic [{W - 1}:0] {p}_from_int(input is_signed, input [63:0] v);
    reg neg;
    reg [63:0] mag;
    begin
      neg = is_signed && v[63];
      mag = neg ? -v : v;
      {p}_from_int = {p}_pack(neg, 0, {S}'(mag));
    end
  endfunction
  // truncation towards zero to a 32-bit (wide = 0) or 64-bit (wide = 1) integer; out of range: the minimum
  function automatic [63:0] {p}_to_int(input wide, input [{W - 1}:0] a);
    integer q, top;
    reg [63:0] mag;
    begin
      q = {p}_q(a);
      top = wide ? 63 : 31;
      if ({p}_isnan(a) || {p}_isinf(a) || (!{p}_iszero(a) && q + {p}_lead({S}'({p}_sig(a))) >= top))
        {p}_to_int = wide ? {{1'b1, 63'd0}} : {{32'hffffffff, 1'b1, 31'd0}};
      else begin
        mag = (q >= 0) ? 64'({p}_sig(a)) << q : (q < {-(M + 1)}) ? 64'd0 : 64'({p}_sig(a)) >> (-q);
        {p}_to_int = a[{W - 1}] ? -mag : mag;
      end
    end
  endfunction
"""


__all__ = ["F32", "FORMATS", "float_functions", "prefix"]
