package mongo

import (
	"encoding/hex"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"
)

// ParseLiteral parses one shard-key value written as text into the BSON type bsonType
// ($jsonSchema's names: string, int, long, double, decimal, date, bool, objectId, binData
// — a UUID, subtype 4 — and null). It is what `shardbench key` uses to place a key a user
// types: the type decides the hashed value, since MongoDB hashes "42" and 42 differently.
func ParseLiteral(bsonType, text string) (Value, error) {
	s := strings.TrimSpace(text)
	if len(s) >= 2 && (s[0] == '"' && s[len(s)-1] == '"' || s[0] == '\'' && s[len(s)-1] == '\'') {
		s = s[1 : len(s)-1]
	}
	bad := func(err error) (Value, error) {
		return Value{}, fmt.Errorf("%q is not a valid %s: %v", text, bsonType, err)
	}
	switch bsonType {
	case "string":
		return String(s), nil
	case "int":
		v, err := strconv.ParseInt(s, 10, 32)
		if err != nil {
			return bad(err)
		}
		return Int32(int32(v)), nil
	case "long":
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return bad(err)
		}
		return Int64(v), nil
	case "double":
		v, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return bad(err)
		}
		return Double(v), nil
	case "decimal":
		r, ok := new(big.Rat).SetString(s)
		if !ok {
			return bad(fmt.Errorf("not a decimal number"))
		}
		scale := int32(0)
		if _, frac, found := strings.Cut(s, "."); found {
			scale = int32(len(frac))
		}
		u := new(big.Rat).Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil)))
		if !u.IsInt() || !u.Num().IsInt64() {
			return bad(fmt.Errorf("out of range"))
		}
		return Decimal(u.Num().Int64(), scale), nil
	case "bool":
		v, err := strconv.ParseBool(s)
		if err != nil {
			return bad(err)
		}
		return Bool(v), nil
	case "date":
		if ms, err := strconv.ParseInt(s, 10, 64); err == nil {
			return Date(ms), nil
		}
		for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999", time.DateOnly} {
			if t, err := time.Parse(layout, s); err == nil {
				return Date(t.UnixMilli()), nil
			}
		}
		return bad(fmt.Errorf("want RFC 3339 (2025-11-28T10:00:00Z), a date, or milliseconds since the epoch"))
	case "objectId":
		v, err := ParseObjectID(s)
		if err != nil {
			return bad(err)
		}
		return v, nil
	case "binData", "uuid":
		h := strings.ReplaceAll(s, "-", "")
		var u [16]byte
		if len(h) != 32 {
			return bad(fmt.Errorf("a UUID is 32 hex digits, got %d", len(h)))
		}
		if _, err := hex.Decode(u[:], []byte(h)); err != nil {
			return bad(err)
		}
		return UUID(&u), nil
	case "null":
		return Null(), nil
	}
	return Value{}, fmt.Errorf("BSON type %q cannot be parsed from text here (supported: string, int, long, double, decimal, bool, date, objectId, binData (UUID), null)", bsonType)
}
