package server

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/throttlesim/throttlesim/sim/scenario"
)

// serveLoopback serves a small backend on a loopback port within lim and
// returns the server and its address; both close when the test ends.
func serveLoopback(t *testing.T, lim Limits) (*Server, string) {
	t.Helper()
	sc, err := scenario.Parse([]byte("name: t\nduration: 10s\nclients:\n  count: 1\n  arrival: {total_rate: 1/s}\nbackend:\n  workers: 2\n  service: {dist: constant, mean: 1ms}\n"), "t.yaml", nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(sc, Options{NoSchedule: true})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s.Start()
	hs, done := s.Serve(ln, lim)
	t.Cleanup(func() {
		s.Close()
		hs.Close()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return s, ln.Addr().String()
}

// get sends one keep-alive GET on c and reads the answer's status.
func get(c net.Conn, r *bufio.Reader) (int, error) {
	if _, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
		return 0, err
	}
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		return 0, err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, nil
}

// closedWithin reports whether the server closes c (a read returns EOF or
// a reset) within d. d is a deadline for a test that would otherwise hang,
// not a tolerance: the limits under test are a fraction of it.
func closedWithin(c net.Conn, d time.Duration) bool {
	c.SetReadDeadline(time.Now().Add(d))
	_, err := io.Copy(io.Discard, c)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		return false
	}
	return true
}

// metric reads one sample of the server's /metrics.
func metric(t *testing.T, s *Server, name string) string {
	t.Helper()
	rec := &strings.Builder{}
	mfs, err := s.Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			for _, m := range mf.GetMetric() {
				switch {
				case m.Counter != nil:
					fmt.Fprint(rec, m.Counter.GetValue())
				case m.Gauge != nil:
					fmt.Fprint(rec, m.Gauge.GetValue())
				}
			}
		}
	}
	return rec.String()
}

// At most MaxConns connections are open: idle keep-alive connections at
// the cap are kept, the next connection is reset at once and counted, and
// a place freed by a close is taken again. Before, every connection was
// held (5,000 idle keep-alive connections, ~27 kB each, never returned).
func TestConnectionCap(t *testing.T) {
	s, addr := serveLoopback(t, Limits{ReadHeader: time.Minute, Read: time.Minute, Idle: time.Minute, MaxConns: 3})
	var held []net.Conn
	for i := range 3 {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if code, err := get(c, bufio.NewReader(c)); err != nil || code != 200 {
			t.Fatalf("connection %d: %d %v", i, code, err)
		}
		held = append(held, c)
	}
	// The reset may arrive before the dial returns (connect reports
	// ECONNRESET) or after it (the request fails): both are a refusal.
	if extra, err := net.Dial("tcp", addr); err == nil {
		defer extra.Close()
		if code, err := get(extra, bufio.NewReader(extra)); err == nil {
			t.Fatalf("a fourth connection got %d, want it reset", code)
		}
	} else if !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("a fourth connection: %v, want a reset", err)
	}
	if got := metric(t, s, "throttlesim_server_connections_refused_total"); got != "1" {
		t.Errorf("refused: %s, want 1", got)
	}
	if got := metric(t, s, "throttlesim_server_connections_open"); got != "3" {
		t.Errorf("open: %s, want 3", got)
	}
	// A held connection closed frees its place once the server sees it.
	held[0].Close()
	deadline := time.Now().Add(20 * time.Second)
	for metric(t, s, "throttlesim_server_connections_open") != "2" && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if code, err := get(c, bufio.NewReader(c)); err != nil || code != 200 {
		t.Errorf("after a place was freed: %d %v, want 200", code, err)
	}
}

// A connection that sends its body at a trickle (slowloris by body), or
// only its headers slowly, or idles between keep-alive requests, is closed
// at its limit. Before, serve set no read or idle timeout: 200 connections
// sending a declared 60 kB body at one byte per second were held for good.
func TestConnectionLimits(t *testing.T) {
	lim := Limits{ReadHeader: 200 * time.Millisecond, Read: 400 * time.Millisecond, Idle: 200 * time.Millisecond, MaxHeaderBytes: 1 << 12}
	_, addr := serveLoopback(t, lim)
	for _, tt := range []struct {
		name string
		send func(c net.Conn) error
	}{
		{"slow body", func(c net.Conn) error {
			if _, err := io.WriteString(c, "POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 60000\r\n\r\nx"); err != nil {
				return err
			}
			return nil // and never the rest
		}},
		{"slow headers", func(c net.Conn) error {
			_, err := io.WriteString(c, "GET / HTTP/1.1\r\nHost: x\r\n") // no blank line: the headers never end
			return err
		}},
		{"idle keep-alive", func(c net.Conn) error {
			if code, err := get(c, bufio.NewReader(c)); err != nil || code != 200 {
				return fmt.Errorf("first request: %d %v", code, err)
			}
			return nil // then idle
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			if err := tt.send(c); err != nil {
				t.Fatal(err)
			}
			if !closedWithin(c, 30*time.Second) {
				t.Errorf("the connection was still open 30 s later; the limit is under 1 s")
			}
		})
	}
}
