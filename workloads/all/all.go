// Package all registers every workload. Import it for its side effect:
//
//	import _ "github.com/shardbench/shardbench/workloads/all"
package all

import (
	// Each workload registers itself in init.
	_ "github.com/shardbench/shardbench/workloads/carts"
	_ "github.com/shardbench/shardbench/workloads/catalog"
	_ "github.com/shardbench/shardbench/workloads/orders"
	_ "github.com/shardbench/shardbench/workloads/sessions"
	_ "github.com/shardbench/shardbench/workloads/views"
)
