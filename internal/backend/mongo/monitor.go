package mongo

import (
	"context"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.mongodb.org/mongo-driver/v2/event"
)

// monitor counts the commands the driver sends (command monitoring): per command name and
// per server address, so results show which server served the operations and how the
// client-side command counts compare with the server's own counters.
//
// It runs on every operation, so it listens to finished commands only: a started-event
// listener makes the driver copy every command document for the event. Commands are
// counted as sent when they are answered (succeeded or failed), which at the end of a run
// is every command sent. Counting is lock-free.
type monitor struct {
	commands map[string]*cmdCounts // the measured commands; fixed at construction
	servers  sync.Map              // server address -> *atomic.Int64
	hook     func(*event.CommandStartedEvent)
	mu       sync.Mutex // serialises reset and snapshot
}

type cmdCounts struct {
	succeeded, failed, nanos atomic.Int64
}

type cmdStats struct {
	Started, Succeeded, Failed int64
	Duration                   time.Duration
}

func newMonitor(hook func(*event.CommandStartedEvent)) *monitor {
	m := &monitor{commands: map[string]*cmdCounts{}, hook: hook}
	for n := range measured {
		m.commands[n] = &cmdCounts{}
	}
	return m
}

// measured names the commands operations send; the rest (hello, endSessions, setup) are
// not attributed.
var measured = map[string]bool{"insert": true, "update": true, "delete": true, "find": true, "getMore": true, "findAndModify": true, "aggregate": true}

func (m *monitor) event() *event.CommandMonitor {
	cm := &event.CommandMonitor{
		Succeeded: func(_ context.Context, e *event.CommandSucceededEvent) {
			m.finished(&e.CommandFinishedEvent, false)
		},
		Failed: func(_ context.Context, e *event.CommandFailedEvent) {
			m.finished(&e.CommandFinishedEvent, true)
		},
	}
	if m.hook != nil {
		cm.Started = func(_ context.Context, e *event.CommandStartedEvent) { m.hook(e) }
	}
	return cm
}

func (m *monitor) finished(e *event.CommandFinishedEvent, failed bool) {
	c := m.commands[e.CommandName]
	if c == nil {
		return
	}
	if failed {
		c.failed.Add(1)
	} else {
		c.succeeded.Add(1)
	}
	c.nanos.Add(int64(e.Duration))
	srv := serverOf(e.ConnectionID)
	n, ok := m.servers.Load(srv)
	if !ok {
		n, _ = m.servers.LoadOrStore(strings.Clone(srv), new(atomic.Int64))
	}
	n.(*atomic.Int64).Add(1)
}

// reset forgets what was counted (after setup and the load phase).
func (m *monitor) reset() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, c := range m.commands {
		c.succeeded.Store(0)
		c.failed.Store(0)
		c.nanos.Store(0)
	}
	m.servers.Clear()
}

func (m *monitor) snapshot() (map[string]cmdStats, []string, map[string]int64) {
	m.mu.Lock()
	defer m.mu.Unlock()
	cmds := map[string]cmdStats{}
	for k, c := range m.commands {
		s := cmdStats{Succeeded: c.succeeded.Load(), Failed: c.failed.Load(), Duration: time.Duration(c.nanos.Load())}
		s.Started = s.Succeeded + s.Failed
		if s.Started > 0 {
			cmds[k] = s
		}
	}
	srv := map[string]int64{}
	var names []string
	m.servers.Range(func(k, v any) bool {
		srv[k.(string)] = v.(*atomic.Int64).Load()
		names = append(names, k.(string))
		return true
	})
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
