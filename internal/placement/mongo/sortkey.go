package mongo

import (
	"bytes"
	"encoding/binary"
	"slices"
)

// appendSortKey appends an encoding of key whose byte order is CompareKeys's order, for the
// kinds the designs' shard keys hold: MinKey, MaxKey, null, int, long, string, binData,
// objectId, bool and date. ok is false for any other value (a double or decimal, whose
// order against integers needs the numbers compared): then sort with CompareKeys.
// Sorting a few hundred thousand keys by these bytes, packed in one array, is several
// times faster than comparing Values scattered over the heap.
func appendSortKey(dst []byte, key []Value) ([]byte, bool) {
	for i := range key {
		v := &key[i]
		dst = append(dst, byte(v.Kind.canonical()+2)) // MinKey -1 .. MaxKey 127 in 1..129
		switch v.Kind {
		case KindMinKey, KindMaxKey, KindNull, KindUndefined:
		case KindInt32, KindInt64, KindDate, KindBool:
			dst = binary.BigEndian.AppendUint64(dst, uint64(v.I)^1<<63)
		case KindString:
			// Bytes with NUL escaped as 00 FF, ended by 00 00: a string sorts before its
			// extensions, as strings.Compare has it.
			for j := 0; j < len(v.S); j++ {
				if c := v.S[j]; c == 0 {
					dst = append(dst, 0, 0xff)
				} else {
					dst = append(dst, c)
				}
			}
			dst = append(dst, 0, 0)
		case KindObjectID:
			dst = append(dst, v.ID[:]...)
		case KindBinary:
			// Length, subtype, bytes: Compare's order.
			dst = binary.BigEndian.AppendUint32(dst, uint32(len(v.B)))
			dst = append(dst, v.Sub)
			dst = append(dst, v.B...)
		default:
			return dst, false
		}
	}
	return dst, true
}

// sortKeys sorts data by key (CompareKeys's order; equal keys in any order).
func sortKeys(data []SizedKey) {
	type ref struct {
		off, end int32
		i        int32
	}
	var arena []byte
	refs := make([]ref, len(data))
	for i := range data {
		off := len(arena)
		var ok bool
		if arena, ok = appendSortKey(arena, data[i].Key); !ok || len(arena) > 1<<31-1 {
			slices.SortFunc(data, func(a, b SizedKey) int { return CompareKeys(a.Key, b.Key) })
			return
		}
		refs[i] = ref{int32(off), int32(len(arena)), int32(i)}
	}
	slices.SortFunc(refs, func(a, b ref) int { return bytes.Compare(arena[a.off:a.end], arena[b.off:b.end]) })
	sorted := make([]SizedKey, len(data))
	for i, r := range refs {
		sorted[i] = data[r.i]
	}
	copy(data, sorted)
}
