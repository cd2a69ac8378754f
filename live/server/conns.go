package server

import (
	"errors"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// DefaultMaxConns is serve's cap on open connections: far above what a
// scenario's clients hold on one machine, far below what exhausts memory
// (an idle keep-alive connection holds ~27 kB: 4,096 hold ~110 MB).
const DefaultMaxConns = 4096

// LimitListener wraps ln so that at most max connections are open at once.
// A connection beyond the cap is accepted and closed at once (the client
// sees its connection reset: unavailable, as a server at its connection
// limit answers), and counted in /metrics as
// throttlesim_server_connections_refused_total; the open connections are
// the gauge throttlesim_server_connections_open. Unlike blocking in Accept
// (golang.org/x/net/netutil.LimitListener), which leaves the excess to
// the kernel's backlog unseen, every refusal is counted. Call it once per
// listener.
func (s *Server) LimitListener(ln net.Listener, max int) net.Listener {
	l := &limitListener{Listener: ln, max: int64(max)}
	s.reg.MustRegister(
		prometheus.NewCounterFunc(prometheus.CounterOpts{
			Name: "throttlesim_server_connections_refused_total",
			Help: "Connections closed at once because the cap on open connections (serve --max-conns) was reached.",
		}, func() float64 { return float64(l.refused.Load()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Name: "throttlesim_server_connections_open",
			Help: "Connections open now (at most serve --max-conns).",
		}, func() float64 { return float64(l.open.Load()) }),
	)
	return l
}

type limitListener struct {
	net.Listener
	max     int64
	open    atomic.Int64
	refused atomic.Int64
}

func (l *limitListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if l.open.Add(1) > l.max {
			l.open.Add(-1)
			l.refused.Add(1)
			if tc, ok := c.(*net.TCPConn); ok {
				tc.SetLinger(0) // a reset, not a graceful close the client may take for an empty answer
			}
			c.Close()
			continue
		}
		return &limitConn{Conn: c, l: l}, nil
	}
}

// limitConn gives its place back once, however often it is closed.
type limitConn struct {
	net.Conn
	l    *limitListener
	once sync.Once
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.open.Add(-1) })
	return err
}

// Limits bound what one connection can hold: serve's defaults are
// DefaultLimits. No WriteTimeout: an answer legitimately waits out the
// queue, the service time and a blackhole outage, which the scenario
// bounds; the client's own timeout ends it.
type Limits struct {
	// ReadHeader: the request's headers must arrive within it (slow
	// headers); Read: the whole request, body included (a slow body);
	// Idle: a keep-alive connection between requests.
	ReadHeader, Read, Idle time.Duration
	MaxHeaderBytes         int
	// MaxConns caps the open connections (LimitListener); 0: no cap.
	MaxConns int
}

// DefaultLimits: headers within 10 s, the whole request within 30 s
// (bodies are not used, but a slow one must not hold a connection), an
// idle keep-alive connection closed after 2 min, headers of at most
// 64 KiB, at most DefaultMaxConns connections.
func DefaultLimits() Limits {
	return Limits{ReadHeader: 10 * time.Second, Read: 30 * time.Second, Idle: 2 * time.Minute, MaxHeaderBytes: 64 << 10, MaxConns: DefaultMaxConns}
}

// Serve serves s on ln within lim until Shutdown or Close of the returned
// server; errors of Serve (other than a clean shutdown) arrive on done.
func (s *Server) Serve(ln net.Listener, lim Limits) (hs *http.Server, done <-chan error) {
	if lim.MaxConns > 0 {
		ln = s.LimitListener(ln, lim.MaxConns)
	}
	hs = &http.Server{Handler: s.Handler(), ReadHeaderTimeout: lim.ReadHeader, ReadTimeout: lim.Read,
		IdleTimeout: lim.Idle, MaxHeaderBytes: lim.MaxHeaderBytes}
	ch := make(chan error, 1)
	go func() {
		err := hs.Serve(ln)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		ch <- err
	}()
	return hs, ch
}
