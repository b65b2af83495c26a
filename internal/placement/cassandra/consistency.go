package cassandra

import (
	"fmt"
	"strings"
)

// Consistency is a Cassandra consistency level; its value is the native protocol code.
type Consistency uint16

const (
	Any         Consistency = 0
	One         Consistency = 1
	Two         Consistency = 2
	Three       Consistency = 3
	Quorum      Consistency = 4
	All         Consistency = 5
	LocalQuorum Consistency = 6
	EachQuorum  Consistency = 7
	Serial      Consistency = 8
	LocalSerial Consistency = 9
	LocalOne    Consistency = 10
)

var clNames = [...]string{"ANY", "ONE", "TWO", "THREE", "QUORUM", "ALL", "LOCAL_QUORUM", "EACH_QUORUM", "SERIAL", "LOCAL_SERIAL", "LOCAL_ONE"}

func (c Consistency) String() string {
	if int(c) < len(clNames) {
		return clNames[c]
	}
	return fmt.Sprintf("Consistency(%d)", uint16(c))
}

// ParseConsistency parses a level name, case-insensitively ("local_quorum", "QUORUM").
func ParseConsistency(s string) (Consistency, error) {
	u := strings.ToUpper(strings.TrimSpace(s))
	for i, n := range clNames {
		if n == u {
			return Consistency(i), nil
		}
	}
	return 0, fmt.Errorf("cassandra: unknown consistency level %q (want one of %s)", s, strings.Join(clNames[:], ", "))
}

// IsSerial reports SERIAL and LOCAL_SERIAL.
func (c Consistency) IsSerial() bool { return c == Serial || c == LocalSerial }

// IsLocal reports the levels that count only the coordinator's data center.
func (c Consistency) IsLocal() bool {
	return c == LocalQuorum || c == LocalOne || c == LocalSerial
}

// CheckRead is ConsistencyLevel.validateForRead: ANY is for writes only.
func (c Consistency) CheckRead() error {
	if c == Any {
		return fmt.Errorf("cassandra: ANY ConsistencyLevel is only supported for writes")
	}
	return c.valid()
}

// CheckWrite is ConsistencyLevel.validateForWrite: SERIAL and LOCAL_SERIAL are only the
// serial (Paxos) level of a conditional update, never a write's consistency.
func (c Consistency) CheckWrite() error {
	if c.IsSerial() {
		return fmt.Errorf("cassandra: %s: you must use conditional updates for serializable writes", c)
	}
	return c.valid()
}

// CheckSerial is ConsistencyLevel.validateForCas: a conditional update's serial level.
func (c Consistency) CheckSerial() error {
	if !c.IsSerial() {
		return fmt.Errorf("cassandra: invalid consistency %s for conditional update: must be SERIAL or LOCAL_SERIAL", c)
	}
	return nil
}

func (c Consistency) valid() error {
	if int(c) >= len(clNames) {
		return fmt.Errorf("cassandra: unknown consistency level %d", uint16(c))
	}
	return nil
}

// Need is how many replica responses a level waits for.
type Need struct {
	// Total is ConsistencyLevel.blockFor.
	Total int
	// PerDC, when set, is where they must come from: LOCAL_* count only the local DC
	// (one entry), EACH_QUORUM needs a quorum in every DC of a NetworkTopologyStrategy
	// keyspace (one entry per DC). Nil: any replicas.
	PerDC map[string]int
}

func quorum(rf int) int { return rf/2 + 1 }

// Need is ConsistencyLevel.blockFor for a keyspace's replication, with localDC the
// coordinator's data center. The counts follow the configured replication factors even
// when a DC has fewer nodes (the request then fails as unavailable). ANY needs one
// acknowledgement, which a hint on the coordinator satisfies.
func (c Consistency) Need(rep Replication, localDC string) Need {
	switch c {
	case Any, One:
		return Need{Total: 1}
	case Two:
		return Need{Total: 2}
	case Three:
		return Need{Total: 3}
	case Quorum, Serial:
		return Need{Total: quorum(rep.Total())}
	case All:
		return Need{Total: rep.Total()}
	case LocalOne:
		return Need{Total: 1, PerDC: map[string]int{localDC: 1}}
	case LocalQuorum, LocalSerial:
		n := quorum(rep.Factor(localDC))
		return Need{Total: n, PerDC: map[string]int{localDC: n}}
	case EachQuorum:
		if rep.Strategy != NetworkTopologyStrategy {
			return Need{Total: quorum(rep.Total())}
		}
		need := Need{PerDC: map[string]int{}}
		for dc, rf := range rep.DCs {
			if rf <= 0 {
				continue // a DC listed with factor 0 holds no replicas
			}
			q := quorum(rf)
			need.PerDC[dc] = q
			need.Total += q
		}
		return need
	}
	return Need{}
}
