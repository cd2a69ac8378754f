package scenario

import (
	"fmt"
	"strings"
	"time"

	"github.com/throttlesim/throttlesim/internal/suggest"
)

// Node is one service of a service graph: everything a backend has
// (workers, service time, queue, reject cost, accept backlog, connections),
// a name, and what it does with a request after its local work: the calls
// it makes to other services and waits for, or the services it forwards
// the request to without waiting.
type Node struct {
	Name    string `yaml:"name" json:"name"`
	Backend `yaml:",inline"`
	// Blocking: a worker stays busy while the request's downstream calls
	// are outstanding (thread per request), so a slow dependency uses up
	// the caller's workers; false frees it after the local work
	// (asynchronous, event loop).
	Blocking bool `yaml:"blocking" json:"blocking"`
	// Calls are made after the local work, one after another
	// (call_mode: sequential) or all at once (parallel) and then joined.
	Calls    []Call   `yaml:"calls" json:"calls"`
	CallMode CallMode `yaml:"call_mode" json:"call_mode"`
	// Join decides when a parallel group is done: all (every call must
	// succeed; the first failure fails the request), any (the first
	// success), or first (the first join_k successes).
	Join  Join `yaml:"join" json:"join"`
	JoinK int  `yaml:"join_k" json:"join_k"`
	// PropagateDeadline passes the remaining deadline of the request being
	// served, less DeadlineMargin, to every call it makes: a call whose
	// deadline has passed fails without being sent, and a service drops
	// queued work whose deadline passed (counted as deadline_dropped).
	PropagateDeadline bool     `yaml:"propagate_deadline" json:"propagate_deadline"`
	DeadlineMargin    Duration `yaml:"deadline_margin" json:"deadline_margin"`
	// Forward hands the request on after the local work, without waiting
	// and without calls: to the first route with probability p1, the next
	// with p2, ..., or out of the system (answered) with the rest
	// (probabilistic routing, an open Jackson network). A service forwards
	// or calls, not both.
	Forward []Route `yaml:"forward" json:"forward"`
}

// Call is one downstream call a service makes while serving a request,
// with its own client policy stack (the same fields as clients).
type Call struct {
	To string `yaml:"to" json:"to"`
	// Probability that the call is made for a given request (default 1).
	Probability float64 `yaml:"probability" json:"probability"`
	// Policies are the call's own policy stack, defaults as the fleet's
	// but a timeout of 1s.
	Policies `yaml:",inline"`
}

// Route is one forwarding edge: to service To with probability
// Probability.
type Route struct {
	To          string  `yaml:"to" json:"to"`
	Probability float64 `yaml:"probability" json:"probability"`
}

// CallMode is services[].call_mode.
type CallMode string

// Call modes.
const (
	CallSequential CallMode = "sequential"
	CallParallel   CallMode = "parallel"
)

// Names lists the valid call modes.
func (CallMode) Names() []string { return []string{"sequential", "parallel"} }

// Join is services[].join.
type Join string

// Joins of a parallel call group.
const (
	JoinAll   Join = "all"
	JoinAny   Join = "any"
	JoinFirst Join = "first"
)

// Names lists the valid joins.
func (Join) Names() []string { return []string{"all", "any", "first"} }

func (s *Node) setDefaults() {
	*s = Node{Backend: Default().Backend, Blocking: true, Calls: []Call{}, CallMode: CallSequential, Join: JoinAll, JoinK: 1, Forward: []Route{}}
}

func (c *Call) setDefaults() {
	*c = Call{Probability: 1, Policies: Policies{Timeout: Duration(time.Second)}}
}

// DefaultNode is a service as a section that sets nothing decodes to.
func DefaultNode() Node {
	var n Node
	n.setDefaults()
	return n
}

// DefaultCall is a call as a section that sets nothing decodes to.
func DefaultCall() Call {
	var c Call
	c.setDefaults()
	return c
}

// IsGraph reports whether the scenario declares services.
func (s *Scenario) IsGraph() bool { return len(s.Services) > 0 }

// Nodes is the scenario's services: its services, or the backend as a
// one-node graph named "backend".
func (s *Scenario) Nodes() []Node {
	if s.IsGraph() {
		return s.Services
	}
	return []Node{{Name: "backend", Backend: s.Backend}}
}

// ServiceIndex is the index in Nodes of the service named name, or -1.
func (s *Scenario) ServiceIndex(name string) int {
	for i, sv := range s.Nodes() {
		if sv.Name == name {
			return i
		}
	}
	return -1
}

// EntryBackend is the backend the clients call: the entry service's, or
// the backend.
func (s *Scenario) EntryBackend() Backend {
	if i := s.EntryIndex(); s.IsGraph() && i >= 0 {
		return s.Services[i].Backend
	}
	return s.Backend
}

// EntryIndex is the index of the service the external clients call.
func (s *Scenario) EntryIndex() int {
	if s.Clients.Target == "" {
		return 0
	}
	return s.ServiceIndex(s.Clients.Target)
}

// FaultService is the index of the service fault f hits.
func (s *Scenario) FaultService(f Fault) int {
	if f.Service == "" {
		return s.EntryIndex()
	}
	return s.ServiceIndex(f.Service)
}

func (v *validator) graph(s *Scenario) {
	names := map[string]int{}
	var list []string
	namesOK := true // every service name is short enough to quote
	for i, sv := range s.Services {
		p := fmt.Sprintf("services.%d", i)
		v.check(sv.Name != "", p+".name", "is required: it names the service in calls, faults and results")
		if !v.short(p+".name", sv.Name, MaxLabelLen) {
			names[sv.Name] = i // found by its references, but never quoted or listed
			namesOK = false
			continue
		}
		v.check(sv.Name == "" || nameRE.MatchString(sv.Name), p+".name", "%q must start with a letter or digit and hold only letters, digits, '.', '_' and '-'", sv.Name)
		if j, dup := names[sv.Name]; dup && sv.Name != "" {
			v.check(false, p+".name", "%q is also the name of services.%d", sv.Name, j)
		}
		names[sv.Name] = i
		list = append(list, sv.Name)
	}
	ref := func(path, name string) {
		if !v.short(path, name, MaxLabelLen) {
			return
		}
		if _, ok := names[name]; ok {
			return
		}
		msg := fmt.Sprintf("%q is not a service", name)
		if sg := suggest.Closest(name, list); sg != "" {
			msg += fmt.Sprintf(" (did you mean %q?)", sg)
		}
		v.check(false, path, "%s; services: %s", msg, strings.Join(list, ", "))
	}
	if s.Clients.Target != "" {
		ref("clients.target", s.Clients.Target)
	}
	for i, f := range s.Faults {
		if f.Service != "" {
			ref(fmt.Sprintf("faults.%d.service", i), f.Service)
		}
	}
	for i, sv := range s.Services {
		p := fmt.Sprintf("services.%d", i)
		v.backend(p, sv.Backend, s)
		v.check(sv.Kind == BackendPool, p+".kind", "only pool services can be part of a graph, got %s", sv.Kind)
		v.check(len(sv.Calls) == 0 || len(sv.Forward) == 0 || len(sv.Name) > MaxLabelLen, p+".forward", "a service either calls (and waits) or forwards (and does not); %s has both", sv.Name)
		v.check(sv.DeadlineMargin >= 0, p+".deadline_margin", "must be >= 0, got %s", sv.DeadlineMargin)
		for j, c := range sv.Calls {
			cp := fmt.Sprintf("%s.calls.%d", p, j)
			ref(cp+".to", c.To)
			v.check(c.Probability > 0 && c.Probability <= 1, cp+".probability", "must be in (0, 1], got %g", c.Probability)
			v.check(c.Timeout >= 0, cp+".timeout", "must be >= 0 (0: none), got %s", c.Timeout)
			v.check(c.Deadline >= 0, cp+".deadline", "must be >= 0 (0: none), got %s", c.Deadline)
			c.Policies.validate(v, cp)
		}
		if sv.CallMode == CallParallel && len(sv.Calls) > 0 {
			switch sv.Join {
			case JoinFirst:
				v.check(sv.JoinK >= 1 && sv.JoinK <= len(sv.Calls), p+".join_k", "must be in 1..%d (the number of calls), got %d", len(sv.Calls), sv.JoinK)
			}
		}
		var total float64
		for j, r := range sv.Forward {
			rp := fmt.Sprintf("%s.forward.%d", p, j)
			ref(rp+".to", r.To)
			v.check(r.Probability > 0 && r.Probability <= 1, rp+".probability", "must be in (0, 1], got %g", r.Probability)
			total += r.Probability
		}
		v.check(total <= 1+1e-12, p+".forward", "the probabilities add up to %g, more than 1", total)
	}
	// Calls must not form a cycle (a request would wait for itself);
	// forwarding may loop, as long as every loop can be left.
	calls := make([][]int, len(s.Services))
	fwd := make([][]int, len(s.Services))
	for i, sv := range s.Services {
		for _, c := range sv.Calls {
			if j, ok := names[c.To]; ok {
				calls[i] = append(calls[i], j)
			}
		}
		for _, r := range sv.Forward {
			if j, ok := names[r.To]; ok && r.Probability >= 1 {
				fwd[i] = append(fwd[i], j)
			}
		}
	}
	if !namesOK {
		return // the checks below name services; a name too long is reported already
	}
	if cyc := findCycle(calls); cyc != nil {
		v.check(false, fmt.Sprintf("services.%d.calls", cyc[0]), "the calls form a cycle: %s (a request would wait for itself)", cycleNames(s.Services, cyc))
	}
	if cyc := findCycle(fwd); cyc != nil {
		v.check(false, fmt.Sprintf("services.%d.forward", cyc[0]), "the forwarding loop %s has probability 1 at every hop: a request would never leave", cycleNames(s.Services, cyc))
	}
	// Every service must be reachable from the entry.
	if e := s.EntryIndex(); e >= 0 {
		seen := make([]bool, len(s.Services))
		var visit func(i int)
		visit = func(i int) {
			if seen[i] {
				return
			}
			seen[i] = true
			for _, c := range s.Services[i].Calls {
				if j, ok := names[c.To]; ok {
					visit(j)
				}
			}
			for _, r := range s.Services[i].Forward {
				if j, ok := names[r.To]; ok {
					visit(j)
				}
			}
		}
		visit(e)
		for i, ok := range seen {
			if !ok {
				v.check(false, fmt.Sprintf("services.%d.name", i), "service %q is not reachable from the entry service %q: no call or forward leads to it", s.Services[i].Name, s.Services[e].Name)
			}
		}
	}
}

// findCycle returns the nodes of a cycle in the graph adj (first node
// repeated at the end), or nil.
func findCycle(adj [][]int) []int {
	state := make([]uint8, len(adj)) // 0 new, 1 on the stack, 2 done
	var stack []int
	var found []int
	var dfs func(i int) bool
	dfs = func(i int) bool {
		state[i] = 1
		stack = append(stack, i)
		for _, j := range adj[i] {
			if state[j] == 1 {
				for k, x := range stack {
					if x == j {
						found = append(append([]int(nil), stack[k:]...), j)
						return true
					}
				}
			}
			if state[j] == 0 && dfs(j) {
				return true
			}
		}
		stack = stack[:len(stack)-1]
		state[i] = 2
		return false
	}
	for i := range adj {
		if state[i] == 0 && dfs(i) {
			return found
		}
	}
	return nil
}

func cycleNames(svcs []Node, cyc []int) string {
	var parts []string
	for _, i := range cyc {
		parts = append(parts, svcs[i].Name)
	}
	return strings.Join(parts, " → ")
}
