package sim

import "testing"

// A key held now keeps its intervals however many other keys come and go (the array
// fills, the overflow takes the rest); a key whose intervals all ended is forgotten.
func TestHoldTableKeepsLiveKeys(t *testing.T) {
	tb := newHoldTable()
	tb.of(42, 0).add(0, 1000)
	for fp := uint64(1000); fp < 1000+3*holdSlots; fp++ {
		tb.of(fp, 10).add(10, 2000) // all held at once: more than the array holds
	}
	if h := tb.of(42, 500); !h.busy(900, 950) {
		t.Error("key 42's interval [0, 1000] was lost")
	}
	for fp := uint64(1000); fp < 1000+3*holdSlots; fp += 97 {
		if !tb.of(fp, 500).busy(1500, 1600) {
			t.Fatalf("key %d's interval was lost", fp)
		}
	}
	if h := tb.of(42, 1500); h.busy(0, 3000) {
		t.Error("key 42's interval ended at 1000: at 1500 it holds nothing")
	}
}
