package mongo

import (
	"context"
	"sort"
	"strings"
	"sync"
	"time"

	"go.mongodb.org/mongo-driver/v2/event"
)

// monitor counts the commands the driver sends (command monitoring): per command name and
// per server address, so results show which server served the operations and how the
// client-side command counts compare with the server's own counters.
type monitor struct {
	mu       sync.Mutex
	commands map[string]*cmdStats
	servers  map[string]int64
	hook     func(*event.CommandStartedEvent)
	// skip ignores the backend's own setup and reporting commands.
	skip bool
}

type cmdStats struct {
	Started, Succeeded, Failed int64
	Duration                   time.Duration
}

func newMonitor(hook func(*event.CommandStartedEvent)) *monitor {
	return &monitor{commands: map[string]*cmdStats{}, servers: map[string]int64{}, hook: hook}
}

// measured names the commands operations send; the rest (hello, endSessions, setup) are
// not attributed.
var measured = map[string]bool{"insert": true, "update": true, "delete": true, "find": true, "getMore": true, "findAndModify": true, "aggregate": true}

func (m *monitor) event() *event.CommandMonitor {
	return &event.CommandMonitor{
		Started: func(_ context.Context, e *event.CommandStartedEvent) {
			if m.hook != nil {
				m.hook(e)
			}
			if !measured[e.CommandName] {
				return
			}
			m.mu.Lock()
			m.stats(e.CommandName).Started++
			m.servers[serverOf(e.ConnectionID)]++
			m.mu.Unlock()
		},
		Succeeded: func(_ context.Context, e *event.CommandSucceededEvent) {
			if !measured[e.CommandName] {
				return
			}
			m.mu.Lock()
			s := m.stats(e.CommandName)
			s.Succeeded++
			s.Duration += e.Duration
			m.mu.Unlock()
		},
		Failed: func(_ context.Context, e *event.CommandFailedEvent) {
			if !measured[e.CommandName] {
				return
			}
			m.mu.Lock()
			s := m.stats(e.CommandName)
			s.Failed++
			s.Duration += e.Duration
			m.mu.Unlock()
		},
	}
}

func (m *monitor) stats(name string) *cmdStats {
	s := m.commands[name]
	if s == nil {
		s = &cmdStats{}
		m.commands[name] = s
	}
	return s
}

// reset forgets what was counted (after setup and the load phase).
func (m *monitor) reset() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.commands = map[string]*cmdStats{}
	m.servers = map[string]int64{}
}

func (m *monitor) snapshot() (map[string]cmdStats, []string, map[string]int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	cmds := make(map[string]cmdStats, len(m.commands))
	for k, v := range m.commands {
		cmds[k] = *v
	}
	srv := make(map[string]int64, len(m.servers))
	var names []string
	for k, v := range m.servers {
		srv[k] = v
		names = append(names, k)
	}
	sort.Strings(names)
	return cmds, names, srv
}

// serverOf turns a driver connection id ("host:port[-12]") into the server address.
func serverOf(connID string) string {
	if i := strings.LastIndexByte(connID, '['); i > 0 {
		return connID[:i]
	}
	return connID
}
