package sweep

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/throttlesim/throttlesim/sim/rng"
	"github.com/throttlesim/throttlesim/sim/scenario"
)

// PointSpec is one variant: a label and the overrides that make it.
type PointSpec struct {
	Label string   `json:"label"`
	Sets  []string `json:"sets"`
}

// RunSpec is one run of the sweep.
type RunSpec struct {
	Index int    `json:"index"`
	Point int    `json:"point"`
	Rep   int    `json:"replication"`
	Seed  uint64 `json:"seed"`
}

// Plan is a sweep, fully expanded.
type Plan struct {
	File        string      `json:"file"`
	Name        string      `json:"name"`
	BaseSets    []string    `json:"base_sets"`
	Points      []PointSpec `json:"points"`
	Seeds       int         `json:"seeds"`
	Independent bool        `json:"independent_seeds"`
	BaseSeed    uint64      `json:"base_seed"`
	Baseline    int         `json:"baseline"`
	// Varied names the fields varied, for chart legends.
	Varied []string `json:"varied"`
	// ScenarioSHA256 and Model pin what the runs were made from: shards or
	// a resumed sweep of another file or model version do not match.
	ScenarioSHA256 string `json:"scenario_sha256"`
	Model          string `json:"model"`
	// Title, when set, titles the charts instead of Name (sweep --title).
	Title string `json:"title,omitempty"`

	data []byte
	// Where the points came from, for error messages (known only for a
	// plan made by NewPlan): the first gridPoints are the vary grid, from
	// --vary when varyFlags.
	known      bool
	gridPoints int
	varyFlags  bool
}

// Options of a plan that come from the command line.
type PlanOptions struct {
	Sets        []string // --set, applied to every point
	Vary        []string // --vary path=v1,v2,... (replace the file's vary)
	Seeds       int      // --seeds (0: the file's, or 5)
	Independent bool     // --independent-seeds
	Title       string   // --title: the charts' title (default: the scenario's name)
	Seed        *uint64  // --seed: the base seed
}

// NewPlan expands the sweep of the scenario in data (named file).
func NewPlan(file string, data []byte, o PlanOptions) (*Plan, error) {
	base, err := scenario.Parse(data, file, o.Sets)
	if err != nil {
		return nil, err
	}
	sw := base.Sweep
	if sw == nil {
		sw = &scenario.Sweep{Seeds: 5}
	}
	vary := sw.Vary
	if len(o.Vary) > 0 {
		vary = nil
		for _, v := range o.Vary {
			path, vals, ok := strings.Cut(v, "=")
			path = strings.TrimSpace(path)
			// The path and the values name the points in tables and
			// legends: bounded as a scenario's sweep.vary is.
			if len(path) > scenario.MaxLabelLen {
				return nil, fmt.Errorf("--vary: the path is %d characters long; at most %d", len(path), scenario.MaxLabelLen)
			}
			if !ok || path == "" || strings.TrimSpace(vals) == "" {
				return nil, fmt.Errorf("--vary %q: expected path=v1,v2,..., e.g. clients.throttle.k=1.1,2,3", v)
			}
			var rv []scenario.RawValue
			for i, x := range splitTop(vals) {
				x = strings.TrimSpace(x)
				if len(x) > scenario.MaxValueLen {
					return nil, fmt.Errorf("--vary %s: value %d is %d characters long; at most %d", path, i+1, len(x), scenario.MaxValueLen)
				}
				rv = append(rv, scenario.RawValue(x))
			}
			vary = append(vary, scenario.Vary{Path: path, Values: rv})
		}
	}
	sum := sha256.Sum256(data)
	p := &Plan{File: file, Name: base.Name, Title: o.Title, BaseSets: o.Sets, Seeds: sw.Seeds, Independent: sw.IndependentSeeds || o.Independent, BaseSeed: base.Seed, data: data,
		ScenarioSHA256: hex.EncodeToString(sum[:]), Model: ModelVersion + "/" + rng.DerivationVersion}
	if o.Seeds > 0 {
		p.Seeds = o.Seeds
	}
	if o.Seed != nil {
		p.BaseSeed = *o.Seed
	}
	for _, v := range vary {
		p.Varied = append(p.Varied, v.Path)
	}
	// The grid: every combination, the first vary outermost.
	grid := []PointSpec{{}}
	for _, v := range vary {
		var next []PointSpec
		for _, g := range grid {
			for j, val := range v.Values {
				label := shortPath(v.Path) + "=" + string(val)
				if j < len(v.Labels) {
					label = v.Labels[j] // validated: one per value
				}
				if g.Label != "" {
					label = g.Label + ", " + label
				}
				next = append(next, PointSpec{Label: label, Sets: append(append([]string{}, g.Sets...), v.Path+"="+string(val))})
			}
		}
		grid = next
	}
	if len(vary) > 0 {
		p.Points = grid
		p.gridPoints = len(grid)
	}
	p.known, p.varyFlags = true, len(o.Vary) > 0
	for _, pt := range sw.Points {
		p.Points = append(p.Points, PointSpec{Label: pt.Label, Sets: pt.Set})
	}
	if len(p.Points) == 0 {
		return nil, fmt.Errorf("%s: nothing to sweep: add a sweep: block (vary: or points:) or --vary path=v1,v2 (e.g. --vary clients.throttle.k=1.5,2,3)", file)
	}
	seen := map[string]bool{}
	for _, pt := range p.Points {
		if seen[pt.Label] {
			return nil, fmt.Errorf("%s: two sweep points are both labelled %q", file, pt.Label)
		}
		seen[pt.Label] = true
	}
	p.Baseline = 0
	if sw.Baseline != "" {
		p.Baseline = -1
		for i, pt := range p.Points {
			if pt.Label == sw.Baseline {
				p.Baseline = i
			}
		}
		if p.Baseline < 0 {
			return nil, fmt.Errorf("%s: sweep.baseline %q is not the label of any point", file, sw.Baseline)
		}
	}
	// Every point must resolve: report every bad path or value now, each
	// naming the point.
	var errs []error
	for i := range p.Points {
		if _, err := p.Resolve(i, 0); err != nil {
			errs = append(errs, fmt.Errorf("sweep point %q:\n%w", p.Points[i].Label, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return p, nil
}

// splitTop splits on commas outside brackets and quotes.
func splitTop(s string) []string {
	var out []string
	depth, start := 0, 0
	var quote rune
	for i, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '"' || r == '\'':
			quote = r
		case r == '[' || r == '{':
			depth++
		case r == ']' || r == '}':
			depth--
		case r == ',' && depth == 0:
			out = append(out, s[start:i])
			start = i + 1
		}
	}
	return append(out, s[start:])
}

func shortPath(p string) string {
	if i := strings.LastIndex(p, "."); i >= 0 {
		return p[i+1:]
	}
	return p
}

// Runs lists every run: replications innermost.
func (p *Plan) Runs() []RunSpec {
	var rs []RunSpec
	for pt := range p.Points {
		for r := 0; r < p.Seeds; r++ {
			rs = append(rs, RunSpec{Index: len(rs), Point: pt, Rep: r, Seed: p.seed(pt, r)})
		}
	}
	return rs
}

// seed of replication r of point pt: with common random numbers the same
// for every point (base + r), else mixed from (base, point, r).
func (p *Plan) seed(pt, r int) uint64 {
	if !p.Independent {
		return p.BaseSeed + uint64(r)
	}
	return rng.Mix(rng.Mix(p.BaseSeed) ^ rng.Mix(uint64(pt)+1) ^ uint64(r)*0x9e3779b97f4a7c15)
}

// Resolve builds the scenario of a point with a seed.
func (p *Plan) Resolve(point int, seed uint64) (*scenario.Scenario, error) {
	sets := append(append([]string{}, p.BaseSets...), p.Points[point].Sets...)
	sc, err := scenario.Parse(p.data, p.File, sets)
	if err != nil {
		// Name the point's overrides by where they came from, not by
		// their place in the list of --set overrides.
		var errs scenario.Errors
		if errors.As(err, &errs) {
			for _, e := range errs {
				if i := e.Pos.Set - 1 - len(p.BaseSets); e.Pos.Set > 0 && i >= 0 && i < len(p.Points[point].Sets) {
					e.Source = p.source(point) + " " + p.Points[point].Sets[i]
				}
			}
		}
		return nil, err
	}
	sc.Seed = seed
	sc.Sweep = nil
	return sc, nil
}

// source names where a point's overrides come from: --vary, the file's
// sweep.vary, or a labelled point of sweep.points.
func (p *Plan) source(point int) string {
	if !p.known {
		return fmt.Sprintf("sweep point %q:", p.Points[point].Label)
	}
	if point >= p.gridPoints {
		return fmt.Sprintf("sweep.points %q:", p.Points[point].Label)
	}
	if p.varyFlags {
		return "--vary"
	}
	return "sweep.vary"
}

// ModelVersion changes whenever the simulator's behaviour changes on
// purpose; it is part of every run key, so resumed sweeps never mix runs of
// two model versions.
const ModelVersion = "2"

// Key identifies a run's result: a hash of the resolved scenario (seed
// included), the replication and the model version.
func Key(sc *scenario.Scenario, rep int) string {
	b, _ := json.Marshal(struct {
		Scenario *scenario.Scenario `json:"scenario"`
		Rep      int                `json:"replication"`
		Model    string             `json:"model"`
		Streams  string             `json:"streams"`
	}{sc, rep, ModelVersion, rng.DerivationVersion})
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:12])
}
