package cassandra

import (
	"encoding/hex"
	"strings"
	"testing"
)

// Byte layouts from the native protocol spec (section 6): the server hashes these bytes.
// The same literals are checked against a live node's token() in
// internal/backend/cassandra (TestLiteralTokensMatchServer).
func TestAppendLiteralBytes(t *testing.T) {
	for _, c := range []struct{ typ, in, hex string }{
		{"int", "42", "0000002a"},
		{"int", "-1", "ffffffff"},
		{"bigint", "1", "0000000000000001"},
		{"smallint", "-2", "fffe"},
		{"tinyint", "127", "7f"},
		{"varint", "128", "0080"},
		{"varint", "-129", "ff7f"},
		{"boolean", "true", "01"},
		{"date", "1970-01-01", "80000000"},
		{"date", "1969-12-31", "7fffffff"},
		{"date", "2025-11-28", "80004fc4"},
		{"timestamp", "1970-01-01T00:00:01Z", "00000000000003e8"},
		{"time", "00:00:01", "000000003b9aca00"},
		{"text", "'it''s'", "69742773"},
		{"uuid", "9a7ee8daa274466dab99cc97ad5f3db5", "9a7ee8daa274466dab99cc97ad5f3db5"},
		{"inet", "10.0.0.1", "0a000001"},
		{"blob", "0xCAFE", "cafe"},
		{"double", "1", "3ff0000000000000"},
		{"float", "1", "3f800000"},
	} {
		b, err := AppendLiteral(nil, c.typ, c.in)
		if err != nil {
			t.Errorf("%s %q: %v", c.typ, c.in, err)
			continue
		}
		if got := hex.EncodeToString(b); got != c.hex {
			t.Errorf("%s %q: %s, want %s", c.typ, c.in, got, c.hex)
		}
	}
	for _, c := range [][3]string{
		{"int", "2147483648", "not a valid int"},
		{"timeuuid", "9a7ee8da-a274-466d-ab99-cc97ad5f3db5", "a timeuuid is version 1"},
		{"ascii", "Москва", "not ASCII"},
		{"date", "28.11.2025", "YYYY-MM-DD"},
		{"blob", "cafe", "0x"},
		{"list<int>", "[1]", "cannot be parsed"},
	} {
		if _, err := AppendLiteral(nil, c[0], c[1]); err == nil || !strings.Contains(err.Error(), c[2]) {
			t.Errorf("%s %q: err %v, want %q", c[0], c[1], err, c[2])
		}
	}
}
