"""Philox4x32-10 in NumPy (written from Salmon et al., "Parallel random numbers: as easy as 1,
2, 3", SC 2011), the reference for the masks of tinynet's GPU dropout (kernels/dropout.cu) and of
the fused attention kernels' dropout (kernels/attention.cu), both drawn from kernels/philox.cuh."""
import numpy

M0, M1, W0, W1 = 0xD2511F53, 0xCD9E8D57, 0x9E3779B9, 0xBB67AE85
MASK32 = numpy.uint64(0xFFFFFFFF)


def philox4x32_10(c, k0, k1):
    """Philox4x32-10 of counter words ``c`` (4 uint64 arrays holding 32-bit values) under key
    (k0, k1): the 4 output words."""
    c = [w.astype(numpy.uint64) for w in c]
    for _ in range(10):
        p0, p1 = numpy.uint64(M0) * c[0], numpy.uint64(M1) * c[2]
        c = [(p1 >> numpy.uint64(32)) ^ c[1] ^ numpy.uint64(k0), p1 & MASK32,
             (p0 >> numpy.uint64(32)) ^ c[3] ^ numpy.uint64(k1), p0 & MASK32]
        k0, k1 = (k0 + W0) & 0xFFFFFFFF, (k1 + W1) & 0xFFFFFFFF
    return c
