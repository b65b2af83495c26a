"""Count the values of an HdrHistogram above a bound.

    python3 testenv/hdr_over.py BASE64 BOUND

BASE64 is a histogram in HdrHistogram's compressed V2 encoding ("HISTFAAA...", as
summary.json embeds each latency histogram, values in nanoseconds); BOUND is in the same
unit. Prints how many recorded values have a lowest equivalent value above BOUND: the
bench-client script's count of shardbench responses slower than the bare loops' stall
bound, counted the way the bare loops count theirs.
"""
import base64
import math
import struct
import sys
import zlib

COMPRESSED_V2 = 0x1C849304
ENCODING_V2 = 0x1C849303


def buckets(b64):
    """(lowest equivalent value, count) of every non-empty bucket."""
    raw = base64.b64decode(b64)
    cookie, n = struct.unpack(">ii", raw[:8])
    if cookie & ~0xF0 != COMPRESSED_V2 & ~0xF0:
        raise ValueError("not a compressed V2 HdrHistogram (cookie %#x)" % cookie)
    data = zlib.decompress(raw[8 : 8 + n])
    cookie, plen, _norm, digits, lowest, _highest, _ratio = struct.unpack(">iiiiqqd", data[:40])
    if cookie & ~0xF0 != ENCODING_V2 & ~0xF0:
        raise ValueError("not a V2 HdrHistogram payload (cookie %#x)" % cookie)
    payload = data[40 : 40 + plen]
    half = (1 << math.ceil(math.log2(2 * 10**digits))) // 2
    half_mag = half.bit_length() - 1
    unit_mag = lowest.bit_length() - 1
    i = idx = 0
    while i < len(payload):
        # ZigZag LEB128, at most 9 bytes (the 9th carries 8 bits).
        v = shift = 0
        for k in range(9):
            b = payload[i]
            i += 1
            v |= (b if k == 8 else b & 0x7F) << shift
            shift += 7
            if k == 8 or not b & 0x80:
                break
        v = (v >> 1) ^ -(v & 1)
        if v < 0:  # a run of -v empty buckets
            idx += -v
            continue
        if v:
            bucket = (idx >> half_mag) - 1
            sub = (idx & (half - 1)) + half
            if bucket < 0:
                sub -= half
                bucket = 0
            yield sub << (bucket + unit_mag), v
        idx += 1


if __name__ == "__main__":
    bound = float(sys.argv[2])
    print(sum(n for value, n in buckets(sys.argv[1]) if value > bound))
