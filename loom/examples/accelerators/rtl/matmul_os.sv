// Output-stationary MatMul accelerator speaking the v3 opcode protocol of
// loom/examples/accelerators/matmul_v3.json over AXI-Stream (tile T x T x T, i32).
//
// Input stream (s_axis): an opcode word, then the operand blocks it asks for.
//   bit0 read A (T*T words, row-major A[m][k]), bit1 read B (T*T words, B[k][n]),
//   bit2 compute C += A.B, bit3 send C (T*T words, row-major) then clear C.
//   Actions run in bit order; 1=sA 2=sB 4=compute 8=send C, 7, 13, 14, 15 ...
// Output stream (m_axis): C, tlast on its last word.
// The T x T processing elements each keep one C element (output stationary);
// a compute streams k = 0..T-1 through them, T*T MACs per cycle, T cycles.
//
// Status for the host-side harness (a real design would map them to AXI-Lite):
//   status_error: 0 ok, 1 unknown opcode, 2 tlast inside an operand block (short
//   transfer), 3 compute before both A and B were loaded. Sticky until reset;
//   status_word holds the offending word. status_busy: an instruction has
//   started and not finished (its opcode is in status_opcode). mac_count counts
//   multiply-accumulates.
module matmul_os #(
    parameter int T = 4
) (
    input  logic        clk,
    input  logic        rst,
    input  logic [31:0] s_axis_tdata,
    input  logic        s_axis_tvalid,
    output logic        s_axis_tready,
    input  logic        s_axis_tlast,
    output logic [31:0] m_axis_tdata,
    output logic        m_axis_tvalid,
    input  logic        m_axis_tready,
    output logic        m_axis_tlast,
    output logic [7:0]  status_error,
    output logic [31:0] status_word,
    output logic        status_busy,
    output logic [3:0]  status_opcode,
    output logic [63:0] mac_count
);
  localparam int WORDS = T * T;
  localparam int IW = $clog2(WORDS);  // T >= 2
  localparam int KW = $clog2(T);

  localparam logic [3:0] READ_A = 4'b0001, READ_B = 4'b0010, COMPUTE = 4'b0100, SEND = 4'b1000;
  typedef enum logic [2:0] {S_OPCODE, S_LOAD_A, S_LOAD_B, S_COMPUTE, S_SEND, S_ERROR} state_t;

  state_t state;
  logic [3:0] todo;  // actions of the current opcode not finished yet (the current one included)
  logic [IW-1:0] idx;  // word index within the block being read or sent
  logic [KW-1:0] kk;  // reduction step of the compute
  logic a_loaded, b_loaded;
  logic [31:0] a[WORDS];
  logic [31:0] b[WORDS];
  logic [31:0] c[WORDS];

  // The state that runs the first action left in `actions` (bit order).
  function automatic state_t first_action(input logic [3:0] actions);
    if (actions[0]) return S_LOAD_A;
    if (actions[1]) return S_LOAD_B;
    if (actions[2]) return S_COMPUTE;
    if (actions[3]) return S_SEND;
    return S_OPCODE;
  endfunction

  wire in_fire = s_axis_tvalid && s_axis_tready;
  wire out_fire = m_axis_tvalid && m_axis_tready;
  wire last_word = idx == IW'(WORDS - 1);
  wire [3:0] done = state == S_LOAD_A ? READ_A : READ_B;  // the load that completes

  assign s_axis_tready = state == S_OPCODE || state == S_LOAD_A || state == S_LOAD_B || state == S_ERROR;
  assign m_axis_tvalid = state == S_SEND;
  assign m_axis_tdata = c[idx];
  assign m_axis_tlast = state == S_SEND && last_word;
  assign status_busy = state != S_OPCODE && state != S_ERROR;

  always_ff @(posedge clk) begin
    if (rst) begin
      state <= S_OPCODE;
      todo <= 4'b0;
      status_opcode <= 4'b0;
      idx <= '0;
      kk <= '0;
      a_loaded <= 1'b0;
      b_loaded <= 1'b0;
      status_error <= 8'd0;
      status_word <= 32'd0;
      mac_count <= 64'd0;
      for (int i = 0; i < WORDS; i++) c[i] <= 32'd0;
    end else begin
      unique case (state)
        S_OPCODE:
        if (in_fire) begin
          if (s_axis_tdata == 32'd0 || s_axis_tdata[31:4] != 28'd0) begin
            state <= S_ERROR;
            status_error <= 8'd1;
            status_word <= s_axis_tdata;
          end else begin
            todo <= s_axis_tdata[3:0];
            status_opcode <= s_axis_tdata[3:0];
            state <= first_action(s_axis_tdata[3:0]);
            idx <= '0;
            kk <= '0;
            if (s_axis_tdata[0]) a_loaded <= 1'b0;  // valid again once the block is complete
          end
        end
        S_LOAD_A, S_LOAD_B:
        if (in_fire) begin
          if (state == S_LOAD_A) a[idx] <= s_axis_tdata;
          else b[idx] <= s_axis_tdata;
          if (s_axis_tlast && !last_word) begin
            state <= S_ERROR;
            status_error <= 8'd2;
            status_word <= 32'(idx) + 32'd1;  // words of the block received
          end else if (last_word) begin
            if (state == S_LOAD_A) a_loaded <= 1'b1;
            else b_loaded <= 1'b1;
            idx <= '0;
            todo <= todo & ~done;
            state <= first_action(todo & ~done);
          end else begin
            idx <= idx + 1'b1;
          end
        end
        S_COMPUTE:
        if (!(a_loaded && b_loaded)) begin
          state <= S_ERROR;
          status_error <= 8'd3;
          status_word <= {30'd0, b_loaded, a_loaded};
        end else begin
          for (int i = 0; i < T; i++)
            for (int j = 0; j < T; j++)
              c[i*T+j] <= c[i*T+j] + a[i*T+int'(kk)] * b[int'(kk)*T+j];
          mac_count <= mac_count + 64'(WORDS);
          if (kk == KW'(T - 1)) begin
            kk <= '0;
            todo <= todo & ~COMPUTE;
            state <= first_action(todo & ~COMPUTE);
          end else begin
            kk <= kk + 1'b1;
          end
        end
        S_SEND:
        if (out_fire) begin
          if (last_word) begin
            for (int i = 0; i < WORDS; i++) c[i] <= 32'd0;  // v3: C is cleared once sent
            idx <= '0;
            todo <= todo & ~SEND;
            state <= first_action(todo & ~SEND);  // the last action: back to S_OPCODE
          end else begin
            idx <= idx + 1'b1;
          end
        end
        default: ;  // S_ERROR: swallow input until reset
      endcase
    end
  end
endmodule
