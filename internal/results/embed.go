package results

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"encoding/binary"
	"sync"

	hdr "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/shardbench/shardbench/internal/metrics"
)

// encodeHistogram is h.Encode(hdr.V2CompressedEncodingCookieBase), the histogram a
// summary embeds, byte for byte, with a reused compressor. The library makes a new
// best-compression zlib writer for every histogram, and allocating and clearing its
// tables (about a megabyte) cost far more than compressing a histogram's few hundred
// bytes: a summary embeds three histograms per variant and operation, about a second of
// CPU at the end of a Black Friday run. A reset writer writes what a new one writes.
//
// A histogram of another geometry or conversion ratio is left to the library, as one
// whose max were not in its last bucket with a count would be (the library encodes up to
// the max's bucket; recording and merging keep the two together).
func encodeHistogram(h *hdr.Histogram) ([]byte, error) {
	snap := h.Export()
	last, ok := harnessLayout(h, snap)
	if !ok {
		return h.Encode(hdr.V2CompressedEncodingCookieBase)
	}
	e := summaryEncoders.Get().(*summaryEncoder)
	defer summaryEncoders.Put(e)

	e.inner = append(e.inner[:0], make([]byte, v2HeaderSize)...)
	if h.TotalCount() == 0 {
		e.inner = appendZigZag(e.inner, 0) // the one bucket up to the max, index 0
	} else {
		var next int32
		for idx, c := range snap.Counts[:last+1] {
			if c != 0 {
				e.inner = appendBucket(e.inner, &next, int32(idx), c)
			}
		}
	}
	putV2Header(e.inner)

	e.zbuf.Reset()
	e.zw.Reset(&e.zbuf)
	if _, err := e.zw.Write(e.inner); err != nil {
		return nil, err
	}
	if err := e.zw.Close(); err != nil {
		return nil, err
	}
	raw := binary.BigEndian.AppendUint32(e.outer[:0], v2CompressedEncodingCookie)
	raw = binary.BigEndian.AppendUint32(raw, uint32(e.zbuf.Len()))
	e.outer = append(raw, e.zbuf.Bytes()...)
	out := make([]byte, base64.StdEncoding.EncodedLen(len(e.outer)))
	base64.StdEncoding.Encode(out, e.outer)
	return out, nil
}

// harnessLayout reports whether h (whose snapshot is snap) has the harness's geometry
// and conversion ratio (the header putV2Header writes) and its max in its last bucket
// with a count (0 if none), and that bucket's index.
func harnessLayout(h *hdr.Histogram, snap *hdr.Snapshot) (last int, ok bool) {
	last = len(snap.Counts) - 1
	for last > 0 && snap.Counts[last] == 0 {
		last--
	}
	ratio := snap.IntegerToDoubleConversionRatio
	if ratio == 0 {
		ratio = 1 // what the library writes for a histogram without one
	}
	return last, snap.LowestTrackableValue == metrics.Lowest && snap.HighestTrackableValue == metrics.Highest &&
		snap.SignificantFigures == metrics.SigFigs && ratio == 1 &&
		int(harnessGeometry.CountsIndex(h.Max())) == last
}

// harnessGeometry is the bucket layout of the histograms the harness records.
var harnessGeometry = metrics.NewGeometry(metrics.Lowest, metrics.SigFigs)

// summaryEncoder is one reusable compressor and its buffers; variants finish, and
// summarise their histograms, concurrently.
type summaryEncoder struct {
	zw           *zlib.Writer
	zbuf         bytes.Buffer
	inner, outer []byte
}

var summaryEncoders = sync.Pool{New: func() any {
	e := &summaryEncoder{}
	e.zw, _ = zlib.NewWriterLevel(&e.zbuf, zlib.BestCompression) // a valid level: no error
	return e
}}
