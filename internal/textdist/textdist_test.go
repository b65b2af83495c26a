package textdist

import (
	"strings"
	"testing"
)

func TestLevenshtein(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"", "abc", 3}, {"abc", "", 3}, {"kitten", "sitting", 3}, {"flaw", "lawn", 2},
		{"p99", "p99", 0}, {"respone_p99", "response_p99", 1}, {"ab", "ba", 2},
		{strings.Repeat("a", MaxLen), strings.Repeat("a", MaxLen-1) + "b", 1},
		{strings.Repeat("a", MaxLen+1), strings.Repeat("a", MaxLen+1), 1 << 20},
	} {
		if got := Levenshtein(c.a, c.b); got != c.want {
			t.Errorf("Levenshtein(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

func TestClosest(t *testing.T) {
	known := []string{"variant", "checks", "verdict"}
	for _, c := range []struct {
		s, want string
		ok      bool
	}{
		{"varient", "variant", true},
		{"chekcs", "checks", true},  // two edits: within max(2, 6/3)
		{"zzzzzz", "checks", false}, // nearest, but too far to be meant
		{"vrdct", "verdict", true},  // two insertions
		{"", "checks", false},       // six edits from anything
		{"verdictvariant", "variant", false},
	} {
		got, ok := Closest(c.s, known)
		if got != c.want || ok != c.ok {
			t.Errorf("Closest(%q) = %q, %v; want %q, %v", c.s, got, ok, c.want, c.ok)
		}
	}
	if got, _ := Closest("abx", []string{"abc", "abd"}); got != "abc" {
		t.Errorf("Closest(abx) = %q, want the first of the nearest, abc", got)
	}
	if _, ok := Closest("x", nil); ok {
		t.Error("a name is close to nothing")
	}
}
