package design

import (
	"testing"

	"github.com/shardbench/shardbench/workloads"
)

// A step's when: selects the operations it applies to: a signed-in user's or a guest's
// (User -1), one naming a category or a global one.
func TestStepConditions(t *testing.T) {
	user := workloads.Op{User: 7, Category: 3}
	guest := workloads.Op{User: -1, Category: workloads.NoCategory}
	for _, c := range []struct {
		when        condition
		user, guest bool
	}{
		{always, true, true},
		{ifUser, true, false},
		{ifGuest, false, true},
		{ifCategory, true, false},
		{ifGlobal, false, true},
	} {
		if got := c.when.holds(&user); got != c.user {
			t.Errorf("condition %d on a user's operation in a category: %v, want %v", c.when, got, c.user)
		}
		if got := c.when.holds(&guest); got != c.guest {
			t.Errorf("condition %d on a guest's global operation: %v, want %v", c.when, got, c.guest)
		}
	}
}
