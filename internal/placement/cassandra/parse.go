package cassandra

import (
	"encoding/hex"
	"fmt"
	"math/big"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// AppendLiteral appends one partition-key value written as text (the way it would appear
// in cqlsh, quotes optional) serialised as the CQL type typ, as the server does before
// hashing. It is what `shardbench key` uses to place a key a user types. Supported:
// uuid, timeuuid, text, varchar, ascii, int, bigint, counter, smallint, tinyint, varint,
// boolean, double, float, date (YYYY-MM-DD or a day number), timestamp (RFC 3339, a
// date, or milliseconds since the epoch), time (HH:MM:SS[.fffffffff] or nanoseconds),
// inet and blob (0x…).
func AppendLiteral(dst []byte, typ, text string) ([]byte, error) {
	typ = strings.ToLower(strings.TrimSpace(typ))
	s := unquote(strings.TrimSpace(text))
	bad := func(err error) ([]byte, error) {
		return dst, fmt.Errorf("%q is not a valid %s: %v", text, typ, err)
	}
	switch typ {
	case "uuid", "timeuuid":
		u, err := ParseUUID(s)
		if err != nil {
			return bad(err)
		}
		if typ == "timeuuid" && u[6]>>4 != 1 {
			return bad(fmt.Errorf("version %d, a timeuuid is version 1", u[6]>>4))
		}
		return AppendUUID(dst, u), nil
	case "text", "varchar", "ascii":
		if typ == "ascii" {
			for i := 0; i < len(s); i++ {
				if s[i] > 127 {
					return bad(fmt.Errorf("byte %d is not ASCII", i))
				}
			}
		}
		return AppendText(dst, s), nil
	case "int":
		v, err := strconv.ParseInt(s, 10, 32)
		if err != nil {
			return bad(err)
		}
		return AppendInt(dst, int32(v)), nil
	case "bigint", "counter":
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return bad(err)
		}
		return AppendBigInt(dst, v), nil
	case "smallint":
		v, err := strconv.ParseInt(s, 10, 16)
		if err != nil {
			return bad(err)
		}
		return AppendSmallInt(dst, int16(v)), nil
	case "tinyint":
		v, err := strconv.ParseInt(s, 10, 8)
		if err != nil {
			return bad(err)
		}
		return AppendTinyInt(dst, int8(v)), nil
	case "varint":
		v, ok := new(big.Int).SetString(s, 10)
		if !ok {
			return bad(fmt.Errorf("not an integer"))
		}
		return AppendVarintBig(dst, v), nil
	case "boolean":
		v, err := strconv.ParseBool(s)
		if err != nil {
			return bad(err)
		}
		return AppendBoolean(dst, v), nil
	case "double":
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return bad(err)
		}
		return AppendDouble(dst, v), nil
	case "float":
		v, err := strconv.ParseFloat(s, 32)
		if err != nil {
			return bad(err)
		}
		return AppendFloat(dst, float32(v)), nil
	case "date":
		if d, err := strconv.ParseInt(s, 10, 32); err == nil {
			return AppendDate(dst, int32(d)), nil
		}
		t, err := time.Parse(time.DateOnly, s)
		if err != nil {
			return bad(fmt.Errorf("want YYYY-MM-DD or a day number since 1970-01-01"))
		}
		return AppendDate(dst, DaysSinceEpoch(t)), nil
	case "timestamp":
		if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
			return AppendTimestamp(dst, ms), nil
		}
		for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05.999999999Z07:00", "2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05.999999999", time.DateOnly} {
			if t, err := time.Parse(layout, s); err == nil {
				return AppendTimestamp(dst, t.UnixMilli()), nil
			}
		}
		return bad(fmt.Errorf("want RFC 3339 (2025-11-28T10:00:00Z), a date, or milliseconds since the epoch"))
	case "time":
		if ns, err := strconv.ParseInt(s, 10, 64); err == nil {
			return AppendTime(dst, ns), nil
		}
		t, err := time.Parse("15:04:05.999999999", s)
		if err != nil {
			return bad(fmt.Errorf("want HH:MM:SS[.fffffffff] or nanoseconds since midnight"))
		}
		return AppendTime(dst, int64(t.Hour())*int64(time.Hour)+int64(t.Minute())*int64(time.Minute)+int64(t.Second())*int64(time.Second)+int64(t.Nanosecond())), nil
	case "inet":
		a, err := netip.ParseAddr(s)
		if err != nil {
			return bad(err)
		}
		return AppendInet(dst, a), nil
	case "blob":
		h, ok := strings.CutPrefix(strings.ToLower(s), "0x")
		if !ok {
			return bad(fmt.Errorf("a blob is written 0x followed by hex digits"))
		}
		b, err := hex.DecodeString(h)
		if err != nil {
			return bad(err)
		}
		return AppendBlob(dst, b), nil
	}
	return dst, fmt.Errorf("CQL type %q cannot be parsed from text here (supported: uuid, "+
		"timeuuid, text, varchar, ascii, int, bigint, counter, smallint, tinyint, varint, "+
		"boolean, double, float, date, timestamp, time, inet, blob)",
		typ)
}

// ParseUUID parses the canonical 8-4-4-4-12 hex form (dashes optional).
func ParseUUID(s string) ([16]byte, error) {
	var u [16]byte
	h := strings.ReplaceAll(s, "-", "")
	if len(h) != 32 {
		return u, fmt.Errorf("want 32 hex digits, got %d", len(h))
	}
	if _, err := hex.Decode(u[:], []byte(h)); err != nil {
		return u, err
	}
	return u, nil
}

func unquote(s string) string {
	if len(s) >= 2 && s[0] == '\'' && s[len(s)-1] == '\'' {
		return strings.ReplaceAll(s[1:len(s)-1], "''", "'")
	}
	return s
}
