package metrics

// Class is why an operation failed. Every backend maps its driver's errors onto this one
// fixed set, so reports and gates compare like with like across databases.
type Class uint8

// Error classes. OK is success.
const (
	OK           Class = iota
	Timeout            // the operation did not complete in time (client or server side)
	Unavailable        // too few replicas / no primary / no shard reachable for the consistency asked
	Overloaded         // the server shed load (Cassandra Overloaded, queue full, rate limited)
	Connection         // connection refused, reset or closed
	Conflict           // LWT not applied, write conflict, duplicate key
	NotSupported       // the server lacks a feature the design uses
	Server             // any other server-side error
	Client             // the request itself was wrong (a design or harness bug)
	Canceled           // canceled by an interrupt
	numClasses
)

var classNames = [...]string{"ok", "timeout", "unavailable", "overloaded", "connection", "conflict", "not_supported", "server", "client", "canceled"}

// NumClasses is the size of the class table, including OK.
const NumClasses = int(numClasses)

func (c Class) String() string {
	if int(c) < len(classNames) {
		return classNames[c]
	}
	return "unknown"
}

// ParseClass returns the class with the given name.
func ParseClass(s string) (Class, bool) {
	for i, n := range classNames {
		if n == s {
			return Class(i), true
		}
	}
	return 0, false
}

// ClassNames lists the error class names (without "ok"), in a stable order.
func ClassNames() []string { return append([]string(nil), classNames[1:]...) }
