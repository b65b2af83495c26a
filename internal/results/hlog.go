package results

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"hash/adler32"
	"io"
	"math"
	"strconv"

	hdr "github.com/HdrHistogram/hdrhistogram-go"
	"github.com/klauspost/compress/zlib"

	"github.com/shardbench/shardbench/internal/metrics"
)

// intervalEncoder writes interval histograms as HdrHistogram log lines in the format
// hdr.HistogramLogWriter writes (the V2 compressed encoding: zlib, base64), with three
// differences that only change the compressed bytes, not what any reader decodes:
//   - one zlib writer is reused: the library makes a new one per histogram, whose
//     allocation and clearing cost more than the encoding itself when a run writes three
//     histograms per operation type per second;
//   - Huffman-only compression instead of best compression. An interval histogram's
//     counts are a few hundred bytes of LEB128 with little repetition: on Black Friday's
//     interval histograms best compression saved 3% of the size (139 against 143 bytes)
//     for 3 times the time (20.5 against 7.2 µs), and resetting its match tables was a
//     third of a long simulated run's CPU. A histogram too small to compress is stored
//     directly (storedBelow), as the writer stores it, without building a code table.
//     Readers inflate any zlib stream;
//   - klauspost/compress's zlib instead of the standard library's: on the 42,034
//     histograms a 60 s Black Friday run encodes, its Huffman-only writer took 4.0 against
//     5.5 µs per histogram for 1.6% more bytes (116.1 against 114.3); Go's and Java's
//     HdrHistogram read its lines.
type intervalEncoder struct {
	zw    *zlib.Writer
	zbuf  bytes.Buffer
	inner []byte
	outer []byte
	b64   []byte
	line  []byte
}

func newIntervalEncoder() *intervalEncoder {
	e := &intervalEncoder{}
	e.zw, _ = zlib.NewWriterLevel(&e.zbuf, zlib.HuffmanOnly) // a valid level: no error
	return e
}

// Cookies and sizes of the V2 encoding (HdrHistogram's Java and Go implementations): the
// cookie bases with the word-size nibble 0x10 that both write.
const (
	v2EncodingCookie           = uint32(hdr.V2EncodingCookieBase | 0x10)
	v2CompressedEncodingCookie = uint32(hdr.V2CompressedEncodingCookieBase | 0x10)
	v2HeaderSize               = hdr.ENCODING_HEADER_SIZE
)

// writeLine writes one log line: "[Tag=T,]start,length,max,histogram". Times are
// seconds relative to the log's base time (0 here, as the writer's default), the max in
// milliseconds.
func (e *intervalEncoder) writeLine(w io.Writer, tag string, startMs, endMs int64, h *metrics.PagedHistogram) error {
	if _, err := e.encode(h); err != nil {
		return err
	}
	return e.writeEncoded(w, tag, startMs, endMs, h.Max())
}

// writeEncoded writes a line for the histogram writeLine encoded last (whose largest value
// is maxNs): another tag for a histogram with the same counts.
func (e *intervalEncoder) writeEncoded(w io.Writer, tag string, startMs, endMs, maxNs int64) error {
	e.line = e.line[:0]
	if tag != "" {
		e.line = append(append(append(e.line, "Tag="...), tag...), ',')
	}
	e.line = appendMicros(e.line, startMs*1000)
	e.line = append(e.line, ',')
	e.line = appendMicros(e.line, (endMs-startMs)*1000)
	e.line = append(e.line, ',')
	e.line = appendMicros(e.line, maxNs) // milliseconds to 6 places: nanoseconds
	e.line = append(e.line, ',')
	e.line = append(e.line, e.b64...)
	e.line = append(e.line, '\n')
	_, err := w.Write(e.line)
	return err
}

// appendMicros appends v millionths with six decimal places: what the library's writer
// prints as strconv.AppendFloat(float64(v)/1e6, 'f', 6, 64) for a start or length in
// seconds (v in microseconds, from whole milliseconds) or a max in milliseconds (v in
// nanoseconds), without the float formatting, which was a third of a line's cost. The
// digits are the same: a float within a rounding error of a number with six decimals
// prints as that number (the library's length, end − start, is a difference of two such
// floats, off by far less than half a millionth at any run's length).
func appendMicros(b []byte, v int64) []byte {
	if v < 0 {
		return strconv.AppendFloat(b, float64(v)/1e6, 'f', 6, 64)
	}
	b = strconv.AppendInt(b, v/1_000_000, 10)
	frac := v % 1_000_000
	return append(b, '.',
		byte('0'+frac/100_000), byte('0'+frac/10_000%10), byte('0'+frac/1_000%10),
		byte('0'+frac/100%10), byte('0'+frac/10%10), byte('0'+frac%10))
}

// encode is what hdrhistogram-go's Encode writes for the same counts (the harness's
// geometry, whose header fields are constants), with reused buffers and zlib writer
// (Huffman only).
func (e *intervalEncoder) encode(h *metrics.PagedHistogram) ([]byte, error) {
	e.inner = append(e.inner[:0], make([]byte, v2HeaderSize)...)
	var next int32
	for idx, count := range h.Buckets() {
		e.inner = appendBucket(e.inner, &next, idx, count)
	}
	if h.TotalCount() == 0 {
		// An empty histogram encodes its one bucket below the max (index 0) as 0.
		e.inner = appendZigZag(e.inner, 0)
	}
	putV2Header(e.inner)

	e.outer = append(e.outer[:0], make([]byte, 8)...)
	binary.BigEndian.PutUint32(e.outer[0:], v2CompressedEncodingCookie)
	if len(e.inner) < storedBelow {
		e.outer = appendStoredZlib(e.outer, e.inner)
	} else {
		e.zbuf.Reset()
		e.zw.Reset(&e.zbuf)
		if _, err := e.zw.Write(e.inner); err != nil {
			return nil, err
		}
		if err := e.zw.Close(); err != nil {
			return nil, err
		}
		e.outer = append(e.outer, e.zbuf.Bytes()...)
	}
	binary.BigEndian.PutUint32(e.outer[4:], uint32(len(e.outer)-8))
	n := base64.StdEncoding.EncodedLen(len(e.outer))
	if cap(e.b64) < n {
		e.b64 = make([]byte, n)
	}
	e.b64 = e.b64[:n]
	base64.StdEncoding.Encode(e.b64, e.outer)
	return e.b64, nil
}

// appendBucket appends the counts of the buckets from *next to idx, the bucket with
// count, as the V2 encoding writes counts in index order from index 0: a run of zeros as
// its negated length (a single zero as 0), each count as itself, ZigZag LEB128 (9-byte
// variant), up to the last populated bucket.
func appendBucket(b []byte, next *int32, idx int32, count int64) []byte {
	if gap := int64(idx - *next); gap > 1 {
		b = appendZigZag(b, -gap)
	} else if gap == 1 {
		b = appendZigZag(b, 0)
	}
	*next = idx + 1
	return appendZigZag(b, count)
}

// putV2Header fills the header at the start of an uncompressed V2 encoding of the
// harness's geometry (whose fields are constants) with the counts after it.
func putV2Header(inner []byte) {
	binary.BigEndian.PutUint32(inner[0:], v2EncodingCookie)
	binary.BigEndian.PutUint32(inner[4:], uint32(len(inner)-v2HeaderSize))
	binary.BigEndian.PutUint32(inner[8:], 0) // normalizing index offset
	binary.BigEndian.PutUint32(inner[12:], uint32(metrics.SigFigs))
	binary.BigEndian.PutUint64(inner[16:], uint64(metrics.Lowest))
	binary.BigEndian.PutUint64(inner[24:], uint64(metrics.Highest))
	binary.BigEndian.PutUint64(inner[32:], math.Float64bits(1.0)) // integer to double conversion ratio
}

// storedBelow is the encoded size under which a histogram is stored, not compressed:
// Huffman coding does not pay for its code table on so few bytes, and the zlib writer
// stores them too, but only after building the table, which took most of the encoding
// time. Three quarters of Black Friday's interval histograms are this small (an on-time
// interval's lag histogram, a rare operation's few buckets). The writer stored every one
// of Black Friday's histograms of 64–95 bytes, and compresses the first of a test's
// latency-like ones at 120–127 bytes; under 96, the bytes written are the writer's.
const storedBelow = 96

// appendStoredZlib appends the zlib stream klauspost/compress's Huffman-only writer
// makes of a small input it does not compress, byte for byte: the header (deflate, 32
// KiB window, no dictionary, fastest), one stored block, an empty final block with the
// fixed code, and the Adler-32 of the input.
func appendStoredZlib(b, data []byte) []byte {
	n := uint16(len(data))
	b = append(b, 0x78, 0x01, 0x00, byte(n), byte(n>>8), byte(^n), byte(^n>>8))
	b = append(b, data...)
	b = append(b, 0x03, 0x00)
	return binary.BigEndian.AppendUint32(b, adler32.Checksum(data))
}

// appendZigZag is HdrHistogram's ZigZag LEB128-64b9B: LEB128 for up to eight bytes of
// seven bits, the ninth byte carrying the last eight.
func appendZigZag(b []byte, v int64) []byte {
	u := uint64((v << 1) ^ (v >> 63))
	for i := 0; i < 8; i++ {
		if u>>7 == 0 {
			return append(b, byte(u))
		}
		b = append(b, byte(u&0x7f|0x80))
		u >>= 7
	}
	return append(b, byte(u))
}
