"""Behaviour models of accelerators loom never shipped, written from their own protocols (not
loom's generic model): each decodes its opcode words itself and computes with numpy."""

from __future__ import annotations

import numpy as np

DT = {"i32": np.int32, "f32": np.float32}


class Tiled357:
    """Output-stationary MatMul on 3x5x7 tiles (m, n, k). Opcodes: 0xA0 reset C; 0xA1 + A(3x7) load A;
    0xA2 + B(7x5) load B and C += A.B; 0xA3 send C then clear it; 0xA4 + A + B: load both, C += A.B."""

    kernel = "matmul"

    def __init__(self, acc):
        self.tm, self.tn, self.tk = (acc.tiles[d].size for d in ("m", "n", "k"))
        self.dt = DT[acc.data_type]
        self.C = np.zeros((self.tm, self.tn), self.dt)
        self.A = None
        self.macs = 0

    def consume(self, w):
        v = w.view(self.dt)
        out = []
        i = 0
        na, nb = self.tm * self.tk, self.tk * self.tn
        while i < len(w):
            op = int(w[i]); i += 1
            if op == 0xA0:
                self.C[:] = 0
            elif op == 0xA1:
                self.A = v[i:i + na].reshape(self.tm, self.tk).copy(); i += na
            elif op == 0xA2:
                if self.A is None:
                    raise ValueError("B before A")
                B = v[i:i + nb].reshape(self.tk, self.tn); i += nb
                self.C += self.A @ B; self.macs += na * self.tn
            elif op == 0xA3:
                out.append(self.C.reshape(-1).copy()); self.C[:] = 0
            elif op == 0xA4:
                self.A = v[i:i + na].reshape(self.tm, self.tk).copy(); i += na
                B = v[i:i + nb].reshape(self.tk, self.tn); i += nb
                self.C += self.A @ B; self.macs += na * self.tn
            else:
                raise ValueError(f"unknown opcode {op:#x}")
        return np.concatenate(out) if out else None


class BthenA:
    """MatMul engine whose single opcode 0x51 carries B's tile first, then A's, computes C = A.B (no
    accumulation inside) and returns the tile at once; the host accumulates over k."""

    kernel = "matmul"

    def __init__(self, acc):
        self.tm, self.tn, self.tk = (acc.tiles[d].size for d in ("m", "n", "k"))
        self.dt = DT[acc.data_type]
        self.macs = 0

    def consume(self, w):
        if int(w[0]) != 0x51:
            raise ValueError(f"unknown opcode {int(w[0]):#x}")
        v = w.view(self.dt)
        nb = self.tk * self.tn
        B = v[1:1 + nb].reshape(self.tk, self.tn)
        A = v[1 + nb:1 + nb + self.tm * self.tk].reshape(self.tm, self.tk)
        if 1 + nb + A.size != len(w):
            raise ValueError(f"expected {1 + nb + A.size} words, got {len(w)}")
        self.macs += A.size * self.tn
        return (A @ B).reshape(-1)


class ConvNHWC:
    """Weight-stationary conv_2d_nhwc_hwcf engine. Init: 0x10, fh, fw (filter size). 0x11 + W tile
    (fh, fw, tic, toc) loads filters; 0x12 + I window (1, toh+fh-1, tow+fw-1, tic): computes the
    (1, toh, tow, toc) partial output and sends it back (the host adds partials over ic)."""

    kernel = "conv_2d_nhwc_hwcf"

    def __init__(self, acc):
        self.t = {d: acc.tiles[d].size for d in ("b", "oh", "ow", "oc", "ic")}
        self.dt = DT[acc.data_type]
        self.fh = self.fw = None
        self.W = None
        self.macs = 0

    def consume(self, w):
        """One transaction may hold several instructions (coalesced sends): each is parsed by its
        opcode's length, not by the end of the transaction."""
        v = w.view(self.dt)
        t = self.t
        out = []
        i = 0
        while i < len(w):
            op = int(w[i])
            i += 1
            if op == 0x10:
                self.fh, self.fw = int(w[i]), int(w[i + 1])
                i += 2
                continue
            if self.fh is None:
                raise ValueError("filter size not set")
            if op == 0x11:
                n = self.fh * self.fw * t["ic"] * t["oc"]
                self.W = v[i:i + n].reshape(self.fh, self.fw, t["ic"], t["oc"]).copy()
                i += n
                continue
            if op != 0x12:
                raise ValueError(f"unknown opcode {op:#x}")
            if self.W is None:
                raise ValueError("no filters")
            ih, iw = t["oh"] + self.fh - 1, t["ow"] + self.fw - 1
            n = t["b"] * ih * iw * t["ic"]
            if i + n > len(w):
                raise ValueError(f"an input window needs {n} words, the transaction has {len(w) - i} left")
            I = v[i:i + n].reshape(t["b"], ih, iw, t["ic"])  # noqa: E741
            i += n
            O = np.zeros((t["b"], t["oh"], t["ow"], t["oc"]), self.dt)  # noqa: E741
            for y in range(self.fh):
                for x in range(self.fw):
                    O += np.einsum("bhwc,cf->bhwf", I[:, y:y + t["oh"], x:x + t["ow"], :], self.W[y, x])
            self.macs += O.size * self.fh * self.fw * t["ic"]
            out.append(O.reshape(-1))
        return np.concatenate(out) if out else None


class EwAdd:
    """Element-wise add on 8x3 tiles: 0x61 + A + B -> A + B (one tile back per opcode)."""

    kernel = {"indexing_maps": ["(i, j) -> (i, j)"] * 3, "iterator_types": ["parallel", "parallel"], "body": "add"}

    def __init__(self, acc):
        self.n = acc.tiles["i"].size * acc.tiles["j"].size
        self.dt = DT[acc.data_type]

    def consume(self, w):
        if int(w[0]) != 0x61 or len(w) != 1 + 2 * self.n:
            raise ValueError(f"bad instruction {int(w[0]):#x} of {len(w)} words")
        v = w.view(self.dt)
        return v[1:1 + self.n] + v[1 + self.n:]


class BatchFullK:
    """batch_matmul on (1, 4, 6, K) tiles with K the whole reduction: 0x71, K, then A (4xK), B (Kx6):
    returns C tile = A.B (the host adds it to C)."""

    kernel = "batch_matmul"

    def __init__(self, acc):
        self.tm, self.tn = acc.tiles["m"].size, acc.tiles["n"].size
        self.dt = DT[acc.data_type]
        self.macs = 0

    def consume(self, w):
        if int(w[0]) != 0x71:
            raise ValueError(f"unknown opcode {int(w[0]):#x}")
        K = int(w[1])
        v = w.view(self.dt)
        A = v[2:2 + self.tm * K].reshape(self.tm, K)
        B = v[2 + self.tm * K:].reshape(K, self.tn)
        self.macs += A.size * self.tn
        return (A @ B).reshape(-1)


class IdxCheck:
    """Output-stationary MatMul on 4x4x4 tiles that also receives the tile indices (m, n of C) with each
    drain and returns them in front of the tile, so the host can check... no: the model checks that
    the indices count up in the row-major tile order it expects and raises otherwise."""

    kernel = "matmul"

    def __init__(self, acc):
        self.t = acc.tiles["m"].size
        self.dt = DT[acc.data_type]
        self.C = np.zeros((self.t, self.t), self.dt)
        self.seen = []
        self.macs = 0

    def consume(self, w):
        v = w.view(self.dt)
        op = int(w[0]); t = self.t
        if op == 0x81:
            A = v[1:1 + t * t].reshape(t, t); B = v[1 + t * t:].reshape(t, t)
            self.C += A @ B; self.macs += t ** 3
            return None
        if op == 0x82:
            self.seen.append((int(w[1]), int(w[2])))
            out = self.C.reshape(-1).copy(); self.C[:] = 0
            return out
        raise ValueError(f"unknown opcode {op:#x}")


class Flex3:
    """MatMul with flexible tiles (multiples of 3 up to 12): 0x91, tm, tn, tk configures; 0x92 + A + B
    accumulates C += A.B; 0x93 sends C and clears it."""

    kernel = "matmul"

    def __init__(self, acc):
        self.dt = DT[acc.data_type]
        self.C = None
        self.macs = 0

    def consume(self, w):
        v = w.view(self.dt)
        op = int(w[0])
        if op == 0x91:
            self.tm, self.tn, self.tk = (int(x) for x in w[1:4])
            if any(t % 3 or not 3 <= t <= 12 for t in (self.tm, self.tn, self.tk)):
                raise ValueError(f"tile {self.tm}x{self.tn}x{self.tk} is not a multiple of 3 in 3..12")
            if self.C is None or self.C.shape != (self.tm, self.tn):
                self.C = np.zeros((self.tm, self.tn), self.dt)
            return None
        if op == 0x92:
            na = self.tm * self.tk
            if len(w) != 1 + na + self.tk * self.tn:
                raise ValueError(f"0x92 of {len(w)} words for a {self.tm}x{self.tn}x{self.tk} tile")
            self.C += v[1:1 + na].reshape(self.tm, self.tk) @ v[1 + na:].reshape(self.tk, self.tn)
            self.macs += na * self.tn
            return None
        if op == 0x93:
            out = self.C.reshape(-1).copy(); self.C[:] = 0
            return out
        raise ValueError(f"unknown opcode {op:#x}")
