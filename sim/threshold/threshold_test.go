package threshold

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/throttlesim/throttlesim/sim/metrics"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		in, want string // want: the normalised threshold, or a piece of the error
		ok       bool
	}{
		{"recovery_s<=120", "recovery_s<=120", true},
		{"  success_ratio >= 99% ", "success_ratio>=0.99", true},
		{"amplification<1.5", "amplification<1.5", true},
		{"recovered==1", "recovered==1", true},
		{"peak_received_over_capacity > 2e0", "peak_received_over_capacity>2", true},
		{"recovery<=120", `unknown metric "recovery" (did you mean "recovery_s"?)`, false},
		{"recovery_time_s<=120", `(did you mean "recovery_s"?)`, false},
		{"zzz<=1", `unknown metric "zzz"; the metrics are amplification,`, false},
		{"recovery_s=120", "the operator must be one of <, <=, >, >=, ==", false},
		{"recovery_s!=120", "the operator must be one of", false},
		{"recovery_s 120", "expected METRIC OP VALUE", false},
		{"", "expected METRIC OP VALUE", false},
		{"<=120", "no metric before <=", false},
		{"recovery_s<=", "no value after <=", false},
		{"recovery_s<=2m", `the value "2m" is not a number`, false},
		{"recovery_s<=NaN", `the value "NaN" is not a number`, false},
	} {
		t.Run(c.in, func(t *testing.T) {
			th, err := Parse(c.in)
			switch {
			case c.ok && err != nil:
				t.Fatalf("got error %v, want %s", err, c.want)
			case c.ok && th.String() != c.want:
				t.Errorf("got %s, want %s", th, c.want)
			case !c.ok && err == nil:
				t.Errorf("got %s, want an error containing %q", th, c.want)
			case !c.ok && !strings.Contains(err.Error(), c.want):
				t.Errorf("got error %q, want it to contain %q", err, c.want)
			}
		})
	}
}

func fp(x float64) *float64 { return &x }

// The four operators on both sides of their bound, and a run without a
// value: a run that did not recover has no recovery_s, and fails.
func TestCheck(t *testing.T) {
	rec := func(s float64) *metrics.Summary {
		return &metrics.Summary{Recovery: metrics.Recovery{Applicable: true, Recovered: true, RecoveryTimeS: fp(s)}}
	}
	stuck := &metrics.Summary{Recovery: metrics.Recovery{Applicable: true, Reason: "goodput stayed below 90% of baseline"}}
	noFault := &metrics.Summary{}
	for _, c := range []struct {
		th              string
		runs            []*metrics.Summary
		passed, missing int
		ok              bool
		worst           *float64
	}{
		{"recovery_s<=120", []*metrics.Summary{rec(120)}, 1, 0, true, fp(120)},
		{"recovery_s<120", []*metrics.Summary{rec(120)}, 0, 0, false, fp(120)},
		{"recovery_s<=120", []*metrics.Summary{rec(30), rec(150), rec(60)}, 2, 0, false, fp(150)},
		{"recovery_s<=120", []*metrics.Summary{stuck}, 0, 1, false, nil},
		{"recovery_s<=120", []*metrics.Summary{rec(10), stuck}, 1, 1, false, fp(10)},
		{"recovered==1", []*metrics.Summary{rec(10), stuck}, 1, 0, false, fp(1)},
		{"recovered==1", []*metrics.Summary{noFault}, 0, 1, false, nil},
		{"recovery_s>=5", []*metrics.Summary{rec(30), rec(4)}, 1, 0, false, fp(4)},
		{"recovery_s>30", []*metrics.Summary{rec(30)}, 0, 0, false, fp(30)},
		{"recovery_s<=120", nil, 0, 0, false, nil},
	} {
		t.Run(c.th, func(t *testing.T) {
			th, err := Parse(c.th)
			if err != nil {
				t.Fatal(err)
			}
			v := th.Check(c.runs...)
			if v.Passed != c.passed || v.Missing != c.missing || v.OK() != c.ok {
				t.Errorf("got passed %d missing %d ok %v, want %d %d %v", v.Passed, v.Missing, v.OK(), c.passed, c.missing, c.ok)
			}
			if (v.Worst == nil) != (c.worst == nil) || (v.Worst != nil && *v.Worst != *c.worst) {
				t.Errorf("got worst %v, want %v", v.Worst, c.worst)
			}
		})
	}
}

// Every metric name reads a value from a summary that has all figures.
func TestEveryNameHasAValue(t *testing.T) {
	s := &metrics.Summary{
		SuccessRatio: fp(1), LocalDropRate: fp(1), Amplification: fp(1), PeakReceivedOverCapacity: fp(1),
		WastedWorkFraction: fp(1), Utilisation: fp(1), LatencyP50MS: fp(1), LatencyP99MS: fp(1),
		MeanQueueWaitMS: fp(1), LastSuccessS: fp(1),
		FaultLoadOverCapacity: fp(1), FaultSuccessRatio: fp(1), TimeAboveCapacityS: fp(1), RecoveryWastedFraction: fp(1),
		Recovery:    metrics.Recovery{Applicable: true, Recovered: true, RecoveryTimeS: fp(1)},
		Connections: &metrics.ConnSummary{PeakConnectRateOverCapacity: fp(1), WastedHandshakeFraction: fp(1), Reconnected99S: fp(1), ReconnectedAllS: fp(1)},
		Replicas:    &metrics.ReplicaSummary{Peak: 1, Mean: 1},
	}
	for _, n := range Names() {
		if _, ok := Value(n, s); !ok {
			t.Errorf("%s: no value", n)
		}
		if About(n) == "" {
			t.Errorf("%s: not described", n)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"recovery_s<=120", "success_ratio>=99%", "a<", "<=", "x==1e308", "recovered == 1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		th, err := Parse(s)
		if err != nil {
			return
		}
		// What parses is normalised: parsing it again gives itself.
		again, err := Parse(th.String())
		if err != nil || again != th {
			t.Errorf("%q parsed as %q, which parses as %q, %v", s, th, again, err)
		}
	})
}

func ExampleThreshold_Check() {
	th, _ := Parse("recovery_s <= 120")
	rec := 95.0
	recovered := &metrics.Summary{Recovery: metrics.Recovery{Applicable: true, Recovered: true, RecoveryTimeS: &rec}}
	stuck := &metrics.Summary{Recovery: metrics.Recovery{Applicable: true}}
	for _, s := range []*metrics.Summary{recovered, stuck} {
		v := th.Check(s)
		fmt.Println(th, v.OK())
	}
	// Output:
	// recovery_s<=120 true
	// recovery_s<=120 false
}

// docs/scenario-reference.md lists every metric name, in a table row of
// its own.
func TestDocsListEveryName(t *testing.T) {
	b, err := os.ReadFile("../../docs/scenario-reference.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range Names() {
		if !strings.Contains(string(b), "| `"+n+"` | ") {
			t.Errorf("docs/scenario-reference.md: no row for threshold metric %s", n)
		}
	}
}
