package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/throttlesim/throttlesim/sim/rundir"
)

// liveScenario takes 2 s of wall time: 20 clients at 50 req/s against a
// 200 req/s backend.
const liveScenario = `name: live-tiny
duration: 2s
metrics: {interval: 500ms}
clients:
  count: 20
  arrival: {total_rate: 50/s}
  timeout: 1s
  retry: {max_attempts: 2}
backend:
  workers: 2
  service: {dist: constant, mean: 10ms}
  queue: {limit: 20}
`

// live writes run's results folder plus live.json, and summarize reads it.
func TestLiveCommand(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "s.yaml", liveScenario)
	out := filepath.Join(dir, "out")
	r := runCLI(t, "live", file, "--out", out, "--no-charts")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	for _, want := range []string{"live-tiny LIVE (seed", "schedule lag", "application requests"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("stdout lacks %q:\n%s", want, r.stdout)
		}
	}
	doc, err := rundir.ReadSummary(out)
	if err != nil {
		t.Fatal(err)
	}
	// How many of the 100 scheduled arrivals start and succeed depends on
	// the machine's lag; that some do, and no more than were sent, does
	// not.
	if doc.Run.Status != "complete" || doc.Summary.Offered == 0 || doc.Summary.Succeeded > doc.Summary.Offered {
		t.Errorf("status %s, offered %d, succeeded %d", doc.Run.Status, doc.Summary.Offered, doc.Summary.Succeeded)
	}
	t.Logf("TIMING offered %d, succeeded %d (idle machine: >= 50, all but 5)", doc.Summary.Offered, doc.Summary.Succeeded)
	// The schedule lag is in summary.json too, as live.json has it.
	if doc.Live == nil || doc.Live.ScheduleLagMaxMS < doc.Live.ScheduleLagP99MS || doc.Live.ScheduleLagP99MS < doc.Live.ScheduleLagP50MS {
		t.Errorf("summary.json live: %+v", doc.Live)
	}
	var info struct {
		InProcess bool  `json:"in_process"`
		Arrivals  int64 `json:"arrivals"`
	}
	if err := json.Unmarshal(readFile(t, filepath.Join(out, "live.json")), &info); err != nil || !info.InProcess || info.Arrivals != doc.Summary.Offered {
		t.Errorf("live.json: %+v, %v", info, err)
	}
	if r := runCLI(t, "summarize", out); r.code != 0 {
		t.Errorf("summarize: exit %d: %s", r.code, r.stderr)
	}
}

func TestLiveRefuses(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "s.yaml", liveScenario)
	r := runCLI(t, "live", file, "--set", "clients.arrival.total_rate=5000/s", "--out", filepath.Join(dir, "x"))
	if r.code != exitError || !strings.Contains(r.stderr, "attempts/s") || !strings.Contains(r.stderr, "--force") {
		t.Errorf("exit %d, stderr %q: want the load refused, naming --force", r.code, r.stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "x")); err == nil {
		t.Error("a refused run wrote results")
	}
	if r := runCLI(t, "live", file, "--target", "ftp://x"); r.code != exitUsage {
		t.Errorf("--target ftp://x: exit %d, want %d", r.code, exitUsage)
	}
}

// serve answers requests and /metrics until its context ends, then exits
// cleanly.
func TestServeCommand(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "s.yaml", liveScenario)
	ctx, cancel := context.WithCancel(context.Background())
	addr := make(chan string, 1)
	done := make(chan error, 1)
	e := &env{stdout: io.Discard, stderr: io.Discard}
	go func() {
		done <- runServe(ctx, e, &serveOptions{file: file, listen: "127.0.0.1:0", ready: func(a string) { addr <- a }})
	}()
	var base string
	select {
	case a := <-addr:
		base = "http://" + a
	case err := <-done:
		t.Fatal(err)
	case <-time.After(time.Minute): // a hang guard, not a bound: serve starts in ms
		t.Fatal("serve did not start")
	}
	tr := &http.Transport{}
	hc := &http.Client{Transport: tr}
	for _, path := range []string{"/", "/metrics"} {
		resp, err := hc.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || path == "/metrics" && !strings.Contains(string(body), `throttlesim_server_requests_total{result="served"} 1`) {
			t.Errorf("GET %s: %d\n%s", path, resp.StatusCode, body)
		}
	}
	tr.CloseIdleConnections()
	cancel()
	if err := <-done; err != nil {
		t.Errorf("serve ended with %v", err)
	}
}

// An interrupted live run keeps what ran, marked incomplete, beside the
// folder it would have replaced, and exits 130.
func TestLiveInterrupted(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "s.yaml", liveScenario)
	out := filepath.Join(dir, "out")
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(700*time.Millisecond, cancel)
	r := runCLICtx(t, ctx, false, "live", file, "--out", out, "--no-charts", "--set", "duration=30s")
	if r.code != exitInterrupted || !strings.Contains(r.stderr, "incomplete") {
		t.Fatalf("exit %d, stderr %q; want 130 and the partial result named", r.code, r.stderr)
	}
	doc, err := rundir.ReadSummary(out + ".incomplete")
	if err != nil {
		t.Fatal(err)
	}
	// Cancelled at 0.7 s of 30: stopped before the end, whatever the
	// machine's lag (which the time it stopped at reports).
	if doc.Run.Status != "incomplete" || doc.Run.StoppedAtS >= 30 {
		t.Errorf("status %s, stopped at %.1f s, offered %d", doc.Run.Status, doc.Run.StoppedAtS, doc.Summary.Offered)
	}
	t.Logf("TIMING stopped at %.1f s with %d offered (idle machine: under 2 s, some offered)", doc.Run.StoppedAtS, doc.Summary.Offered)
}

// serve is safe by default: it listens on loopback, and its admin
// endpoint is off; with --admin it takes the token from the flag, the
// environment, or generates one and prints it. Before, --listen defaulted
// to :8080 (every interface) and POST /admin/faults took any request.
func TestServeSafeByDefault(t *testing.T) {
	if got := newServeCmd(&env{}, nil).Flags().Lookup("listen").DefValue; got != "127.0.0.1:8080" {
		t.Errorf("--listen defaults to %q, want 127.0.0.1:8080", got)
	}
	dir := t.TempDir()
	file := writeFile(t, dir, "s.yaml", liveScenario)
	post := func(base, token string) int {
		req, _ := http.NewRequest("POST", base+"/admin/faults", strings.NewReader(`{"kind":"outage","duration":"1s"}`))
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	t.Setenv("THROTTLESIM_ADMIN_TOKEN", "from-env")
	for _, tt := range []struct {
		name  string
		o     serveOptions
		token string // what to send
		want  int
	}{
		{"admin off", serveOptions{}, "from-env", http.StatusNotFound},
		{"token from the flag", serveOptions{admin: true, adminToken: "flag"}, "flag", http.StatusAccepted},
		{"flag wins over the environment", serveOptions{admin: true, adminToken: "flag"}, "from-env", http.StatusUnauthorized},
		{"token from the environment", serveOptions{admin: true}, "from-env", http.StatusAccepted},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			addr := make(chan string, 1)
			done := make(chan error, 1)
			o := tt.o
			o.file, o.listen, o.noFaults = file, "127.0.0.1:0", true
			o.ready = func(a string) { addr <- a }
			go func() { done <- runServe(ctx, &env{stdout: io.Discard, stderr: io.Discard}, &o) }()
			select {
			case a := <-addr:
				if got := post("http://"+a, tt.token); got != tt.want {
					t.Errorf("POST /admin/faults: got %d, want %d", got, tt.want)
				}
			case err := <-done:
				t.Fatal(err)
			case <-time.After(time.Minute): // a hang guard: serve starts in ms
				t.Fatal("serve did not start")
			}
			http.DefaultClient.CloseIdleConnections()
			cancel()
			if err := <-done; err != nil {
				t.Errorf("serve ended with %v", err)
			}
		})
	}
	// Neither flag nor environment: a token is generated and printed.
	t.Setenv("THROTTLESIM_ADMIN_TOKEN", "")
	var stderr strings.Builder
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // serve starts, prints, and stops at once
	if err := runServe(ctx, &env{stdout: io.Discard, stderr: &stderr}, &serveOptions{file: file, listen: "127.0.0.1:0", admin: true, noFaults: true}); err != nil {
		t.Fatal(err)
	}
	if tok, ok := strings.CutPrefix(strings.TrimSpace(stderr.String()), "serve: admin token (Authorization: Bearer …): "); !ok || len(tok) != 32 {
		t.Errorf("stderr %q: want the generated 32-hex-digit token", stderr.String())
	}
	err := runServe(ctx, &env{stdout: io.Discard, stderr: io.Discard}, &serveOptions{file: file, listen: "127.0.0.1:0", adminToken: "x"})
	if !errors.As(err, new(usageError)) {
		t.Errorf("--admin-token without --admin: got %v, want a usage error", err)
	}
}

// A live run takes its duration in wall time: in a terminal it draws a
// bar of that time on stderr, cleared when it ends, and stdout stays the
// summary's; -q, or a stderr that is not a terminal, draws none.
func TestLiveProgress(t *testing.T) {
	dir := t.TempDir()
	file := writeFile(t, dir, "s.yaml", liveScenario)
	tests := []struct {
		name  string
		tty   bool
		quiet bool
		bar   bool
	}{
		{"terminal", true, false, true},
		{"terminal, -q", true, true, false},
		{"not a terminal", false, false, false},
	}
	for i, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			args := []string{"live", file, "--out", filepath.Join(dir, fmt.Sprint(i)), "--no-charts"}
			if tc.quiet {
				args = append(args, "-q")
			}
			r := runCLICtx(t, context.Background(), tc.tty, args...)
			if r.code != 0 {
				t.Fatalf("exit %d: %s", r.code, r.stderr)
			}
			// The bar is drawn at once, empty, and its line cleared as the
			// run ends, however many ticks fell between.
			i := strings.LastIndex(r.stderr, "live live-tiny ")
			drawn := strings.Contains(r.stderr, "live live-tiny   0% |")
			if drawn != tc.bar {
				t.Fatalf("got a bar drawn %v, want %v; stderr %q", drawn, tc.bar, r.stderr)
			}
			if drawn {
				last := strings.Split(r.stderr[i:], "\r")
				if len(last) < 2 || strings.TrimLeft(last[1], " ") != "" || len(last[1]) < utf8.RuneCountInString(last[0]) {
					t.Errorf("got the bar's last line not cleared at the end: %q", r.stderr[i:])
				}
			}
			if !tc.bar && strings.Contains(r.stderr, "%") {
				t.Errorf("got a bar's trace on stderr, want none: %q", r.stderr)
			}
			if strings.Contains(r.stdout, "%|") || strings.Contains(r.stdout, "\r") {
				t.Errorf("got a bar on stdout: %q", r.stdout)
			}
		})
	}
}
