// Package textdist finds the known name closest to a misspelt one, for "did you mean"
// hints in error messages.
package textdist

// MaxLen bounds the strings Levenshtein compares: its work grows with the product of
// their lengths, and input names longer than this are no typo of a known name.
const MaxLen = 128

// Levenshtein is the edit distance between a and b in bytes (insertions, deletions and
// substitutions), or a distance beyond any name's when either is longer than MaxLen.
func Levenshtein(a, b string) int {
	if len(a) > MaxLen || len(b) > MaxLen {
		return 1 << 20
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// Closest is the known name nearest to s (the first of equals), when it is near enough
// to be what s meant: at most max(2, len(s)/3) edits away.
func Closest(s string, known []string) (string, bool) {
	best, bestD := "", 1<<30
	for _, k := range known {
		if d := Levenshtein(s, k); d < bestD {
			best, bestD = k, d
		}
	}
	return best, best != "" && bestD <= max(2, len(s)/3)
}
