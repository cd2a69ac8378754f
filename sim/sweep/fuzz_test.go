package sweep

import (
	"strings"
	"testing"
)

// FuzzVary: any --vary and --set strings give a plan or an error, never a
// panic; a plan's points all resolve and are labelled uniquely.
func FuzzVary(f *testing.F) {
	for _, s := range []string{
		"clients.throttle.k=1.1,2,3",
		"clients.throttle=null,{k: 3}",
		"clients.retry.retry_on=[timeout],[rejected, timeout]",
		"faults.0.duration=10s,20s",
		"clients.throttle.k=",
		"=1,2",
		"clients.throttle.k=[1,2",
		"clients.throttle.k=1,1",
		"a.b.c.d.e=1",
		"faults.9.kind=outage",
	} {
		f.Add(s, "backend.workers=12")
	}
	f.Fuzz(func(t *testing.T, vary, set string) {
		var sets []string
		if set != "" {
			sets = []string{set}
		}
		p, err := NewPlan("tiny.yaml", []byte(small), PlanOptions{Vary: []string{vary}, Sets: sets, Seeds: 1})
		if err != nil {
			if p != nil {
				t.Fatal("a plan and an error")
			}
			if strings.TrimSpace(err.Error()) == "" {
				t.Fatal("an empty error")
			}
			return
		}
		seen := map[string]bool{}
		for i, pt := range p.Points {
			if seen[pt.Label] {
				t.Fatalf("label %q twice", pt.Label)
			}
			seen[pt.Label] = true
			if _, err := p.Resolve(i, 1); err != nil {
				t.Fatalf("point %q does not resolve: %v", pt.Label, err)
			}
		}
	})
}
