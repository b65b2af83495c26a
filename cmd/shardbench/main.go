// Command shardbench measures whether Cassandra and MongoDB data designs avoid hot
// partitions under the traffic they claim to handle.
//
// Exit codes: 0 success; 1 the run failed, was interrupted, or a gate failed; 2 usage or
// bad input (scenario, design or flag errors).
package main

import (
	"os"
)

func main() {
	os.Exit(Main(os.Args[1:], newSystemIO()))
}
