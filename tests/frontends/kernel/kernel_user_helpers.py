"""Plain Python helpers (no decorator) that user kernels call; inlined at each call. Their own module globals
(SCALE) resolve here, not in the calling kernel's module."""

from loom.frontends.kernel import F32

SCALE = 3


def clamp(x, lo, hi):
    return min(max(x, lo), hi)


def sq(x):
    return x * x


def scaled(x, k=SCALE):
    return x * k


def sign_and_abs(x):
    # two float literals merged by an if take F64 (as kernel variables do): F32 keeps the caller's type
    if x < 0.0:
        return F32(-1.0), -x
    else:
        return F32(1.0), x


def store_twice(Y, i, v):
    Y[i] = v
    Y[i + 1] = v


def cube_bad(x):
    return x * x * undefined_in_helper  # U:helperbad  # noqa: F821


def forever(x):
    return forever(x)  # U:helperrec
