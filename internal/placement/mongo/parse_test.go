package mongo

import (
	"strings"
	"testing"
)

func TestParseLiteral(t *testing.T) {
	must := func(typ, s string) Value {
		t.Helper()
		v, err := ParseLiteral(typ, s)
		if err != nil {
			t.Fatalf("%s %q: %v", typ, s, err)
		}
		return v
	}
	// All numeric types hash alike in MongoDB; a string of digits does not.
	i, l, d, dec := must("int", "42"), must("long", "42"), must("double", "42"), must("decimal", "42.0")
	if Hash(&i) != Hash(&l) || Hash(&l) != Hash(&d) || Hash(&d) != Hash(&dec) {
		t.Errorf("42 as int/long/double/decimal hash differently: %d %d %d %d", Hash(&i), Hash(&l), Hash(&d), Hash(&dec))
	}
	if s := must("string", "42"); Hash(&s) == Hash(&i) {
		t.Error(`"42" hashes like 42`)
	}
	if v := must("string", `"user:42"`); v.S != "user:42" {
		t.Errorf("quotes not stripped: %q", v.S)
	}
	if v := must("date", "2025-11-28"); v.Kind != KindDate || v.I != 1764288000000 {
		t.Errorf("date: %+v", v)
	}
	if v := must("date", "2025-11-28T10:00:00.5Z"); v.I != 1764324000500 {
		t.Errorf("date-time: %d", v.I)
	}
	if v := must("decimal", "19.99"); v.I != 1999 || v.Scale != 2 {
		t.Errorf("decimal: %+v", v)
	}
	if v := must("binData", "9a7ee8da-a274-466d-ab99-cc97ad5f3db5"); v.Kind != KindBinary || v.Sub != 4 || len(v.B) != 16 || v.B[0] != 0x9a {
		t.Errorf("uuid: %+v", v)
	}
	if v := must("objectId", "507f1f77bcf86cd799439011"); v.Kind != KindObjectID || v.ID[0] != 0x50 {
		t.Errorf("objectId: %+v", v)
	}
	for _, c := range [][3]string{
		{"int", "4294967296", "not a valid int"},
		{"objectId", "xyz", "not a valid objectId"},
		{"binData", "abc", "32 hex digits"},
		{"bool", "maybe", "not a valid bool"},
		{"array", "[1]", "cannot be parsed"},
	} {
		if _, err := ParseLiteral(c[0], c[1]); err == nil || !strings.Contains(err.Error(), c[2]) {
			t.Errorf("%s %q: err %v, want %q", c[0], c[1], err, c[2])
		}
	}
}
