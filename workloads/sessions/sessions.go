// Package sessions is the user-session workload: sessions start (for a user or a guest),
// are touched on every page, read by id, listed per user, and end.
//
// Operations (Op fields used):
//
//	create        Session (new id), User (-1 guest), Zone, Bot, Ref = Time, Size = payload bytes
//	touch         Session, User, Zone, Ref = the session's start; sets last_activity
//	read          Session (by id), User, Zone, Ref
//	list_by_user  User, Zone, Qty = row limit
//	expire        Session, User, Zone, Ref: the session ends (logout or explicit expiry)
//
// touch, read and expire act with probability sessions.recent_share in a recently created
// session (by age: one created during the run, or an initial one when the age drawn reaches
// back before the run's start), else in the initial population by the activity skew; bots
// act in their own long-lived sessions.
package sessions

import (
	"time"

	"github.com/shardbench/shardbench/workloads"
)

func init() { workloads.Register(Meta) }

// Meta describes the workload.
var Meta = &workloads.Meta{
	Name:        "sessions",
	Entity:      "sessions",
	Description: "user sessions: create, touch, read by id, list a user's sessions, expire",
	Ops: []workloads.OpSpec{
		{Name: "create", Action: workloads.Insert, Doc: "a user (or a guest) starts a session", PerHour: workloads.PaceCheckout},
		{Name: "touch", Action: workloads.Update,
			Binds: []string{"session_id", "user_id", "owner_key", "created_at", "geo_zone", "device_type"},
			Sets:  []string{"last_activity", "expires_at"}, Doc: "a page view updates the session's last activity", PerHour: workloads.PacePage, Bots: true},
		{Name: "read", Action: workloads.Get, Binds: []string{"session_id"}, Doc: "read a session by its id (every request)", PerHour: workloads.PacePage, Bots: true},
		{Name: "list_by_user", Action: workloads.List, Binds: []string{"user_id"}, Doc: "list a user's sessions, newest first", PerHour: workloads.PaceAccount},
		{Name: "expire", Action: workloads.Delete, Binds: []string{"session_id", "user_id", "owner_key", "created_at", "geo_zone", "device_type"},
			Doc: "a session ends (logout); TTLs expire the rest", PerHour: workloads.PaceCheckout},
	},
	Fields: []workloads.Field{
		workloads.SessionID(),
		workloads.UserID("user_id"),
		workloads.OwnerKey(),
		workloads.Created("created_at"),
		workloads.Now("last_activity", "the operation's time (Op.Time)"),
		{Name: "expires_at", Type: workloads.TTimestamp, Size: 8, Doc: "last activity plus sessions.ttl_hours",
			Get: func(m *workloads.Model) workloads.Getter {
				ttl := int64(m.Knob("sessions", "ttl_hours") * float64(time.Hour))
				return func(op *workloads.Op, buf []byte) workloads.Value {
					var v workloads.Value
					v.Type, v.Null, v.Int = workloads.TTimestamp, false, workloads.FloorDiv(op.Time+ttl, 1e6)
					return v
				}
			}},
		{Name: "ip_address", Type: workloads.TInet, Size: 4, Doc: "the client's IPv4 address (stable per session)",
			Get: func(m *workloads.Model) workloads.Getter {
				return func(op *workloads.Op, buf []byte) workloads.Value {
					var v workloads.Value
					ip := m.SessionIP(op.Session, op.Zone)
					v.Type, v.Null = workloads.TInet, false
					v.Bytes = append(buf[:0], ip[:]...)
					return v
				}
			}},
		workloads.ConstText("user_agent", "the browser's User-Agent (bots announce themselves)", 120, func(m *workloads.Model, op *workloads.Op) string {
			return m.SessionUserAgent(op.Session)
		}),
		workloads.DeviceType(),
		workloads.GeoZone(),
		workloads.ConstText("status", `"active"`, 6, func(*workloads.Model, *workloads.Op) string { return "active" }),
		{Name: "session_data", Type: workloads.TTextMap, Size: 160, Doc: "session attributes as a map (locale, currency, geo zone, device, last page)",
			Composite: func(m *workloads.Model) func(*workloads.Op) any {
				return func(op *workloads.Op) any {
					out := map[string]string{}
					for _, kv := range m.SessionData(op) {
						out[kv[0]] = kv[1]
					}
					return out
				}
			}},
		workloads.AppendText("session_data_json", "the same attributes as one JSON text (seed 004's session_data blob)", 160,
			func(m *workloads.Model, dst []byte, op *workloads.Op) []byte { return m.AppendSessionData(dst, op) }),
	},
	Knobs: []workloads.Knob{
		{Name: "recent_share", Default: 0.3, Min: 0, Max: 1,
			Doc: "share of touch/read/expire acting on recently created sessions (by age, mean " +
				"2,000 sessions: created during the run, or before it while the run has created " +
				"fewer)"},
		{Name: "ttl_hours", Default: 24, Min: 0.01, Max: 24 * 365, Doc: "session lifetime after the last activity (expires_at)"},
		{Name: "list_limit", Default: 10, Min: 1, Max: 10000, Doc: "rows read by list_by_user"},
	},
	Owner:      owner,
	Population: population,
	New:        newGen,
}

// owner: the operations of a session the run created go with the session; those of the
// sessions that existed before the run, and listing a user's sessions, belong to no life
// cycle of the run's.
func owner(m *workloads.Model, i int, op *workloads.Op) (uint64, int64) {
	if i == opList || op.Session < m.Sessions {
		return 0, 0
	}
	return workloads.KindSession, op.Session
}

// population is the initial sessions (Model.SessionRecord), bots' first, then by activity
// rank.
func population(m *workloads.Model) []workloads.RecordSet {
	return []workloads.RecordSet{{Name: "sessions", Count: m.Sessions, Record: func(i int64, op *workloads.Op) bool {
		m.SessionRecord(i, op)
		return true
	}}}
}

type gen struct {
	st      *workloads.State
	recent  float64
	limit   int32
	created int64
}

// Stats reports the sessions created during the run (workloads.Stater).
func (g *gen) Stats(add func(string, int64)) { add("created", g.created) }

func newGen(st *workloads.State) workloads.Generator {
	return &gen{st: st, recent: st.M.Knob("sessions", "recent_share"), limit: int32(st.M.Knob("sessions", "list_limit"))}
}

const (
	opCreate = iota
	opTouch
	opRead
	opList
	opExpire
)

func (g *gen) Fill(i int, op *workloads.Op) {
	st, m := g.st, g.st.M
	switch i {
	case opCreate:
		u, bot := st.User()
		if !bot && st.Rand.Chance(m.GuestShare) {
			u = -1
		}
		id := st.NewSessionID()
		zone := m.SessionZone(id, u)
		op.Session, op.User, op.Zone, op.Bot, op.Ref = id, u, zone, bot, op.Time
		op.Size = 300
		st.NewSessions.Push(workloads.SessionRef{ID: id, User: u, Created: op.Time, Zone: zone})
		g.created++
	case opTouch, opRead, opExpire:
		s := st.Session(g.recent)
		op.Session, op.User, op.Zone, op.Ref, op.Bot = s.ID, s.User, s.Zone, s.Created, m.IsBot(s.User)
		op.Size = 300
		op.Items = 1
	case opList:
		u, bot := st.User()
		op.User, op.Bot, op.Zone, op.Qty = u, bot, m.UserZone(u), g.limit
		op.Items = 2
		op.Ref = op.Time
	}
}
