package report

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/throttlesim/throttlesim/sim/rundir"
	"github.com/throttlesim/throttlesim/sim/sweep"
)

// The verdicts below are the one or two sentences a page (and the
// command's output) starts with: what a person would act on, computed
// from the figures the page shows.

// RunVerdict says what happened in one run: whether and when it
// recovered, its success, and its peak load against the capacity (in a
// service graph, the most overloaded service's against its own).
func RunVerdict(doc *rundir.SummaryDoc) []string {
	s := doc.Summary
	r := s.Recovery
	var first string
	switch {
	case !r.Applicable:
		first = "Nothing to recover from (" + r.Reason + ")."
	case r.Recovered:
		first = fmt.Sprintf("Recovered %s s after the fault ended (at %s s).", fnum(r.RecoveryTimeS), fnum(r.RecoveredAtS))
		if r.SecondOutage {
			first = fmt.Sprintf("Recovered %s s after the fault ended (at %s s), then lost its goodput again at %s s.",
				fnum(r.RecoveryTimeS), fnum(r.RecoveredAtS), fnum(r.SecondOutageAtS))
		}
	default:
		first = "Did not recover: " + r.Reason + "."
	}
	var parts []string
	if s.SuccessRatio != nil {
		parts = append(parts, "success "+brief("success_ratio", *s.SuccessRatio))
	}
	switch g := doc.Graph; {
	case g != nil && len(g.Services) > 0:
		// The entry service's capacity counts workers that wait on their
		// calls: the load that matters is the most overloaded service's
		// against its own capacity (Services are highest first).
		if top := g.Services[0]; top.PeakLoadOverCapacity != nil {
			parts = append(parts, "most overloaded: "+top.Name+", peak load "+brief("peak_received_over_capacity", *top.PeakLoadOverCapacity)+"× its capacity")
		}
	default:
		if s.PeakReceivedOverCapacity != nil {
			parts = append(parts, "peak load "+brief("peak_received_over_capacity", *s.PeakReceivedOverCapacity)+"× capacity")
		}
		if s.FaultLoadOverCapacity != nil {
			parts = append(parts, brief("fault_load_over_effective_capacity", *s.FaultLoadOverCapacity)+"× the capacity left during the fault")
		}
	}
	out := []string{first}
	if len(parts) > 0 {
		out = append(out, capitalise(strings.Join(parts, "; "))+".")
	}
	if doc.Run.Status != "" && doc.Run.Status != "complete" {
		out = append(out, "The run is "+doc.Run.Status+": these figures cover only the part that ran.")
	}
	return out
}

// brief is a value for a sentence: as Show, to three significant digits
// ("152", "90.8", "3.00") where Show gives four.
func brief(metric string, x float64) string {
	if percentMetric(metric) || countMetrics[metric] || x == 0 || math.IsNaN(x) || math.IsInf(x, 0) {
		return Show(metric, x)
	}
	return group(strconv.FormatFloat(x, 'f', max(Decimals(x)-1, 0), 64))
}

func fnum(p *float64) string {
	if p == nil {
		return "–"
	}
	return group(fmt.Sprintf("%.0f", *p))
}

func capitalise(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// ranked is a point and a metric's statistic over its runs.
type ranked struct {
	i  int
	st sweep.Stat
}

// rank orders the points that have a value of m (and pass keep) best
// first: lowest first where lower is better.
func rank(pts []sweep.PointData, m Metric, keep func(int) bool) []ranked {
	var out []ranked
	for i, pt := range pts {
		if keep != nil && !keep(i) {
			continue
		}
		if st := m.Describe(pt); st.N > 0 && !math.IsNaN(st.Mean) {
			out = append(out, ranked{i, st})
		}
	}
	dir := better[m.Name]
	if dir == 0 {
		dir = -1
	}
	slices.SortStableFunc(out, func(a, b ranked) int {
		if a.st.Mean == b.st.Mean {
			return 0
		}
		if (a.st.Mean < b.st.Mean) == (dir < 0) {
			return -1
		}
		return 1
	})
	return out
}

// hasCI reports whether a statistic has an interval (two runs or more).
func hasCI(st sweep.Stat) bool {
	return st.N >= 2 && !math.IsNaN(st.Lo) && !math.IsNaN(st.Hi)
}

// withinNoise reports whether two points' values of m cannot be told
// apart: the interval of their paired differences covers zero (with
// common random numbers), or else their intervals overlap. Without
// intervals (one run each) they can be told apart only when they differ.
func withinNoise(pts []sweep.PointData, m Metric, a, b ranked, paired bool) bool {
	if paired {
		if d := m.Paired(pts[b.i], pts[a.i]); hasCI(d) {
			return d.Lo <= 0 && d.Hi >= 0
		}
	}
	if hasCI(a.st) && hasCI(b.st) {
		return a.st.Lo <= b.st.Hi && b.st.Lo <= a.st.Hi
	}
	return a.st.Mean == b.st.Mean
}

// withCI is a value and, when there is one, its interval: "227 s [215, 239]".
func withCI(metric string, st sweep.Stat, unit string) string {
	s := brief(metric, st.Mean) + unit
	if hasCI(st) {
		s += " [" + brief(metric, st.Lo) + ", " + brief(metric, st.Hi) + "]"
	}
	return s
}

// joinAnd joins names as English does: "a", "a and b", "a, b and c".
func joinAnd(names []string) string {
	if len(names) <= 1 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// SweepVerdict says which point of a sweep did best: the one that
// recovers fastest (from the points' mean recovery times and their
// intervals), whether the runner-up is within noise of it, which points
// never recover; then the one with the highest success. Without a fault
// to recover from it leads with success and amplification. paired says
// the replications share seeds (common random numbers), so that two
// points are told apart by their paired differences.
func SweepVerdict(pts []sweep.PointData, paired bool) []string {
	var out []string
	applicable := false
	full := map[int]bool{}
	var never, partial []string
	for i, pt := range pts {
		rec, app := recoveredCount(pt)
		switch {
		case app == 0:
		case rec == app:
			full[i] = true
		case rec == 0:
			never = append(never, pt.Label)
		default:
			partial = append(partial, fmt.Sprintf("%s recovers in %d of %d runs", pt.Label, rec, app))
		}
		applicable = applicable || app > 0
	}
	recM, _ := MetricByName("recovery_time_s")
	succ, _ := MetricByName("success_ratio")
	fastest := -1
	if applicable {
		var s string
		rs := rank(pts, recM, func(i int) bool { return full[i] })
		if len(rs) > 0 {
			fastest = rs[0].i
		}
		switch {
		case len(rs) == 0:
			s = "No point recovers in every run"
		default:
			s = pts[rs[0].i].Label + " recovers fastest: " + withCI("recovery_time_s", rs[0].st, " s")
			if len(rs) > 1 {
				var close []string
				for _, r := range rs[1:] {
					if withinNoise(pts, recM, rs[0], r, paired) {
						close = append(close, pts[r.i].Label+" ("+withCI("recovery_time_s", r.st, " s")+")")
					}
				}
				switch {
				case len(close) == 1:
					s += ", but " + close[0] + " is within noise of it"
				case len(close) > 1:
					s += ", but " + joinAnd(close) + " are within noise of it"
				default:
					s += "; next " + pts[rs[1].i].Label + ", " + withCI("recovery_time_s", rs[1].st, " s")
				}
			}
		}
		if len(partial) > 0 {
			s += "; " + strings.Join(partial, "; ")
		}
		if len(never) == 1 {
			s += "; " + never[0] + " never recovers"
		} else if len(never) > 1 {
			s += "; " + joinAnd(never) + " never recover"
		}
		out = append(out, s+".")
	}
	if ss := rank(pts, succ, nil); len(ss) > 0 {
		s := "Highest success: " + pts[ss[0].i].Label + ", " + withCI("success_ratio", ss[0].st, "")
		if len(ss) > 1 && withinNoise(pts, succ, ss[0], ss[1], paired) {
			s += "; " + pts[ss[1].i].Label + " (" + withCI("success_ratio", ss[1].st, "") + ") is within noise of it"
		}
		// The trade-off, when the fastest to recover is not the most
		// successful: its own success.
		if fastest >= 0 && fastest != ss[0].i {
			for _, r := range ss {
				if r.i == fastest {
					s += "; the fastest, " + pts[fastest].Label + ", has " + withCI("success_ratio", r.st, "")
				}
			}
		}
		out = append(out, s+".")
	}
	if !applicable {
		amp, _ := MetricByName("amplification")
		if as := rank(pts, amp, nil); len(as) > 1 {
			out = append(out, "Least amplification: "+pts[as[0].i].Label+", "+withCI("amplification", as[0].st, " attempts per request")+".")
		}
	}
	return out
}

// CompareVerdict says how each compared run (or point) did against the
// baseline (the first when baseline is −1): how much faster or slower it
// recovers, and its success against the baseline's in percentage points
// (with the interval of the paired differences when there are
// replications).
func CompareVerdict(pts []sweep.PointData, baseline int) []string {
	if len(pts) < 2 {
		return nil
	}
	ref := max(baseline, 0)
	if ref >= len(pts) {
		return nil
	}
	recM, _ := MetricByName("recovery_time_s")
	succ, _ := MetricByName("success_ratio")
	a := pts[ref]
	aRec, aApp := recoveredCount(a)
	var out []string
	for i, b := range pts {
		if i == ref {
			continue
		}
		var parts []string
		bRec, bApp := recoveredCount(b)
		ra, rb := recM.Describe(a), recM.Describe(b)
		aAll, bAll := aApp > 0 && aRec == aApp, bApp > 0 && bRec == bApp
		switch {
		case aApp == 0 && bApp == 0:
		case aAll && bAll:
			ab := ranked{ref, ra}
			bb := ranked{i, rb}
			switch {
			case withinNoise(pts, recM, ab, bb, true):
				parts = append(parts, fmt.Sprintf("%s and %s recover as fast (%s s and %s s)", b.Label, a.Label, brief(recM.Name, rb.Mean), brief(recM.Name, ra.Mean)))
			case rb.Mean < ra.Mean:
				parts = append(parts, fmt.Sprintf("%s recovers %s faster than %s (%s s vs %s s)", b.Label, times(ra.Mean, rb.Mean), a.Label, brief(recM.Name, rb.Mean), brief(recM.Name, ra.Mean)))
			default:
				parts = append(parts, fmt.Sprintf("%s recovers %s slower than %s (%s s vs %s s)", b.Label, times(rb.Mean, ra.Mean), a.Label, brief(recM.Name, rb.Mean), brief(recM.Name, ra.Mean)))
			}
		case bAll:
			parts = append(parts, fmt.Sprintf("%s recovers (%s s after the fault); %s does not", b.Label, brief(recM.Name, rb.Mean), a.Label))
		case aAll:
			parts = append(parts, fmt.Sprintf("%s does not recover; %s does (%s s after the fault)", b.Label, a.Label, brief(recM.Name, ra.Mean)))
		default:
			parts = append(parts, fmt.Sprintf("neither %s nor %s recovers in every run", b.Label, a.Label))
		}
		sa, sb := succ.Describe(a), succ.Describe(b)
		if sa.N > 0 && sb.N > 0 {
			d := succ.Paired(b, a)
			s := "success " + ShowDiff(succ.Name, sb.Mean-sa.Mean)
			if hasCI(d) {
				s = "success " + signed(succ.Name, d.Mean) + " points [" + signed(succ.Name, d.Lo) + ", " + signed(succ.Name, d.Hi) + "]"
			}
			s += " (" + brief(succ.Name, sb.Mean) + " vs " + brief(succ.Name, sa.Mean) + ")"
			if len(parts) == 0 {
				s = b.Label + " against " + a.Label + ": " + s
			}
			parts = append(parts, s)
		}
		if len(parts) > 0 {
			out = append(out, strings.Join(parts, "; ")+".")
		}
	}
	return out
}

// times is how many times x is y: "3.2×".
func times(x, y float64) string {
	if y == 0 {
		return "infinitely"
	}
	r := x / y
	if r >= 10 {
		return fmt.Sprintf("%.0f×", r)
	}
	return fmt.Sprintf("%.1f×", r)
}
