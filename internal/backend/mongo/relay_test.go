package mongo_test

import (
	"encoding/binary"
	"io"
	"net"
	"net/url"
	"strings"
	"sync"
	"testing"
)

func hostOf(t *testing.T, uri string) string {
	u, err := url.Parse(uri)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

// startMongosRelay relays TCP to a real server and adds msg: "isdbgrid" to its hello
// replies (OP_REPLY to the OP_QUERY handshake, OP_MSG to hello/isMaster), everything else
// byte for byte: the driver then talks to the real server as to a mongos.
func startMongosRelay(t *testing.T, upstream string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial("tcp", upstream)
			if err != nil {
				c.Close()
				continue
			}
			hellos := &helloIDs{m: map[int32]bool{}}
			wg.Add(2)
			go func() { defer wg.Done(); relay(c, s, hellos, false); s.Close() }()
			go func() { defer wg.Done(); relay(s, c, hellos, true); c.Close() }()
		}
	}()
	return ln.Addr().String()
}

type helloIDs struct {
	mu sync.Mutex
	m  map[int32]bool
}

func (h *helloIDs) set(id int32) { h.mu.Lock(); h.m[id] = true; h.mu.Unlock() }
func (h *helloIDs) take(id int32) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	ok := h.m[id]
	delete(h.m, id)
	return ok
}

const (
	opReply = 1
	opQuery = 2004
	opMsg   = 2013
)

func relay(src io.Reader, dst io.Writer, hellos *helloIDs, replies bool) {
	hdr := make([]byte, 16)
	for {
		if _, err := io.ReadFull(src, hdr); err != nil {
			return
		}
		n := int(binary.LittleEndian.Uint32(hdr))
		if n < 16 || n > 48<<20 {
			return
		}
		msg := make([]byte, n)
		copy(msg, hdr)
		if _, err := io.ReadFull(src, msg[16:]); err != nil {
			return
		}
		reqID := int32(binary.LittleEndian.Uint32(msg[4:]))
		respTo := int32(binary.LittleEndian.Uint32(msg[8:]))
		code := binary.LittleEndian.Uint32(msg[12:])
		if !replies {
			if code == opQuery || code == opMsg && isHello(msg) {
				hellos.set(reqID)
			}
		} else if hellos.take(respTo) {
			msg = addIsdbgrid(msg, code)
			if code == opMsg && binary.LittleEndian.Uint32(msg[16:])&2 != 0 { // moreToCome: streamed hellos
				hellos.set(reqID)
			}
		}
		if _, err := dst.Write(msg); err != nil {
			return
		}
	}
}

// isHello: an OP_MSG whose body document starts with hello or isMaster.
func isHello(msg []byte) bool {
	if len(msg) < 26 || msg[20] != 0 {
		return false
	}
	doc := msg[21:]
	if len(doc) < 6 {
		return false
	}
	name := doc[5:]
	if i := strings.IndexByte(string(name), 0); i > 0 {
		k := strings.ToLower(string(name[:i]))
		return k == "hello" || k == "ismaster"
	}
	return false
}

// addIsdbgrid appends msg: "isdbgrid" to the reply document.
func addIsdbgrid(msg []byte, code uint32) []byte {
	var at int
	checksum := code == opMsg && binary.LittleEndian.Uint32(msg[16:])&1 != 0
	switch code {
	case opReply:
		at = 16 + 20
	case opMsg:
		if msg[20] != 0 {
			return msg
		}
		at = 21
		binary.LittleEndian.PutUint32(msg[16:], binary.LittleEndian.Uint32(msg[16:])&^1) // no checksum
	default:
		return msg
	}
	dl := int(binary.LittleEndian.Uint32(msg[at:]))
	doc := msg[at : at+dl]
	el := []byte{0x02, 'm', 's', 'g', 0}
	el = binary.LittleEndian.AppendUint32(el, 9)
	el = append(el, "isdbgrid\x00"...)
	nd := append(append(append([]byte(nil), doc[:dl-1]...), el...), 0)
	binary.LittleEndian.PutUint32(nd, uint32(len(nd)))
	out := append(append(append([]byte(nil), msg[:at]...), nd...), msg[at+dl:]...)
	if checksum {
		out = out[:len(out)-4]
	}
	binary.LittleEndian.PutUint32(out, uint32(len(out)))
	return out
}
