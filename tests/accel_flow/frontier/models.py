"""Behaviour models of the frontier accelerators, each written from its engine's own protocol
(the words it decodes, the buffers it keeps), not from loom's generic model."""

from __future__ import annotations

import numpy as np

DT = {"i32": np.int32, "f32": np.float32}


class OS8:
    """Output-stationary 8x8x8 f32 MatMul. 0xFFFFFFFF: zero the accumulator; 0xC0DE + A(8x8) + B(8x8):
    acc += A.B; 0xD5: send the accumulator and zero it."""

    kernel = "matmul"

    def __init__(self, acc):
        self.t = acc.tiles["m"].size
        self.C = np.zeros((self.t, self.t), np.float32)
        self.macs = 0

    def consume(self, w):
        v, t, out, i = w.view(np.float32), self.t, [], 0
        while i < len(w):
            op = int(w[i]); i += 1
            if op == 0xFFFFFFFF:
                self.C[:] = 0
            elif op == 0xC0DE:
                A = v[i:i + t * t].reshape(t, t); B = v[i + t * t:i + 2 * t * t].reshape(t, t); i += 2 * t * t
                self.C += A @ B; self.macs += t ** 3
            elif op == 0xD5:
                out.append(self.C.reshape(-1).copy()); self.C[:] = 0
            else:
                raise ValueError(f"unknown opcode {op:#x}")
        return np.concatenate(out) if out else None


class WeightStationaryBias:
    """Weight-stationary 4x4x4 i32 MatMul with no partial-sum storage between instructions:
    0x31 + W(4x4) loads the weight tile; 0x32 + C(4x4) preloads the accumulator; 0x33 + A(4x4):
    acc += A.W; 0x34: send the accumulator."""

    kernel = "matmul"

    def __init__(self, acc):
        self.t = acc.tiles["m"].size
        self.W = self.acc = None
        self.macs = 0

    def consume(self, w):
        """Instructions are parsed by their opcode's length (a coalesced transaction holds several)."""
        v, t, n, out, i = w.view(np.int32), self.t, self.t * self.t, [], 0
        while i < len(w):
            op = int(w[i]); i += 1
            if op in (0x31, 0x32, 0x33) and i + n > len(w):
                raise ValueError(f"opcode {op:#x} needs {n} words, the transaction has {len(w) - i} left")
            if op == 0x31:
                self.W = v[i:i + n].reshape(t, t).copy(); i += n
            elif op == 0x32:
                self.acc = v[i:i + n].reshape(t, t).copy(); i += n
            elif op == 0x33:
                if self.W is None or self.acc is None:
                    raise ValueError("MAC before the weights and the preload")
                self.acc += v[i:i + n].reshape(t, t) @ self.W; self.macs += t ** 3; i += n
            elif op == 0x34:
                out.append(self.acc.reshape(-1)); self.acc = None
            else:
                raise ValueError(f"unknown opcode {op:#x}")
        return np.concatenate(out) if out else None


class ConvStride2Dilation2:
    """NCHW conv, stride 2, dilation 2, output stationary. 0x40, FH, FW: filter size. 0x41 + I window
    (1, tic, 2*toh + 2*FH - 3, 2*tow + 2*FW - 3) + W (toc, tic, FH, FW): acc += conv. 0x42: send acc
    (1, toc, toh, tow) and zero it."""

    kernel = None  # a signature: declared by the description

    def __init__(self, acc):
        self.t = {d: acc.tiles[d].size for d in ("b", "oc", "oh", "ow", "ic")}
        self.fh = None
        self.acc = np.zeros((self.t["b"], self.t["oc"], self.t["oh"], self.t["ow"]), np.int32)
        self.macs = 0

    def consume(self, w):
        v, t, out, i = w.view(np.int32), self.t, [], 0
        while i < len(w):
            op = int(w[i]); i += 1
            if op == 0x40:
                self.fh, self.fw = int(w[i]), int(w[i + 1]); i += 2
            elif op == 0x41:
                if self.fh is None:
                    raise ValueError("filter size not set")
                ih, iw = 2 * t["oh"] + 2 * self.fh - 3, 2 * t["ow"] + 2 * self.fw - 3
                ni, nw = t["b"] * t["ic"] * ih * iw, t["oc"] * t["ic"] * self.fh * self.fw
                if i + ni + nw > len(w):
                    raise ValueError(f"0x41 needs {ni + nw} words, the transaction has {len(w) - i} left")
                I = v[i:i + ni].reshape(t["b"], t["ic"], ih, iw); i += ni  # noqa: E741
                W = v[i:i + nw].reshape(t["oc"], t["ic"], self.fh, self.fw); i += nw
                for y in range(self.fh):
                    for x in range(self.fw):
                        win = I[:, :, 2 * y:2 * y + 2 * t["oh"] - 1:2, 2 * x:2 * x + 2 * t["ow"] - 1:2]
                        self.acc += np.einsum("bchw,fc->bfhw", win, W[:, :, y, x])
                self.macs += self.acc.size * t["ic"] * self.fh * self.fw
            elif op == 0x42:
                out.append(self.acc.reshape(-1).copy()); self.acc[:] = 0
            else:
                raise ValueError(f"unknown opcode {op:#x}")
        return np.concatenate(out) if out else None


class DepthwiseWS:
    """Depthwise NHWC conv, f32, weight stationary. 0x50, FH, FW: filter size. 0x51 + W (FH, FW, tc):
    load the filters of a channel block. 0x52 + I window (tb, toh + FH - 1, tow + FW - 1, tc): return
    the (tb, toh, tow, tc) output tile."""

    kernel = "depthwise_conv_2d_nhwc_hwc"

    def __init__(self, acc):
        self.t = {d: acc.tiles[d].size for d in ("b", "oh", "ow", "c")}
        self.fh = self.W = None
        self.macs = 0

    def consume(self, w):
        v, t, out, i = w.view(np.float32), self.t, [], 0
        while i < len(w):
            op = int(w[i]); i += 1
            if op == 0x50:
                self.fh, self.fw = int(w[i]), int(w[i + 1]); i += 2
                continue
            if self.fh is None:
                raise ValueError("filter size not set")
            if op == 0x51:
                n = self.fh * self.fw * t["c"]
                self.W = v[i:i + n].reshape(self.fh, self.fw, t["c"]).copy(); i += n
            elif op == 0x52:
                ih, iw = t["oh"] + self.fh - 1, t["ow"] + self.fw - 1
                n = t["b"] * ih * iw * t["c"]
                if self.W is None or i + n > len(w):
                    raise ValueError(f"0x52 needs the filters and {n} words ({len(w) - i} left)")
                I = v[i:i + n].reshape(t["b"], ih, iw, t["c"]); i += n  # noqa: E741
                O = np.zeros((t["b"], t["oh"], t["ow"], t["c"]), np.float32)  # noqa: E741
                for y in range(self.fh):
                    for x in range(self.fw):
                        O += I[:, y:y + t["oh"], x:x + t["ow"], :] * self.W[y, x]
                self.macs += O.size * self.fh * self.fw
                out.append(O.reshape(-1))
            else:
                raise ValueError(f"unknown opcode {op:#x}")
        return np.concatenate(out) if out else None


class Relu:
    """Activation engine: 0x7E + X tile -> max(X, 0), one tile back per instruction."""

    kernel = {"indexing_maps": ["(i, j) -> (i, j)"] * 2, "iterator_types": ["parallel", "parallel"], "body": "relu"}

    def __init__(self, acc):
        self.n = acc.tiles["i"].size * acc.tiles["j"].size

    def consume(self, w):
        if int(w[0]) != 0x7E or len(w) % (1 + self.n):
            raise ValueError(f"bad instruction {int(w[0]):#x} of {len(w)} words")
        x = w.reshape(-1, 1 + self.n)[:, 1:].view(np.float32)
        return np.maximum(x, np.float32(0)).reshape(-1)


class Whole:
    """A MatMul engine that takes whole matrices: 0xE1, M, N, K, then A (M x K) and B (K x N); returns
    A.B (M x N), which the host adds to C."""

    kernel = "matmul"

    def __init__(self, acc):
        self.macs = 0

    def consume(self, w):
        if int(w[0]) != 0xE1:
            raise ValueError(f"unknown opcode {int(w[0]):#x}")
        M, N, K = (int(x) for x in w[1:4])
        v = w.view(np.int32)
        if len(w) != 4 + M * K + K * N:
            raise ValueError(f"0xE1 for {M}x{N}x{K} needs {4 + M * K + K * N} words, got {len(w)}")
        A = v[4:4 + M * K].reshape(M, K)
        B = v[4 + M * K:].reshape(K, N)
        self.macs += M * N * K
        return (A.astype(np.int64) @ B).astype(np.int32).reshape(-1)
