package policy

import (
	"strings"
	"testing"
)

// The hot-cold lexicographic rule on hand-made pools: each case adds
// probes (replica, RIF, latency, time) and picks at a time; want is the
// replica picked in turn (-1: none).
func TestPrequalHotCold(t *testing.T) {
	type pr struct {
		rep, rif int
		lat      float64
		at       int64
	}
	cfg := PrequalConfig{PoolSize: 8, QRIF: 0.75, MaxAge: 100, MaxReuse: 100}
	for _, tc := range []struct {
		name   string
		cfg    PrequalConfig
		probes []pr
		picks  []int64 // times of the picks
		elig   []int   // eligible replicas (nil: all)
		want   []int
	}{
		{"an empty pool picks nothing", cfg, nil, []int64{0}, nil, []int{-1}},
		{"all cold: the lowest latency wins, not the lowest RIF", PrequalConfig{PoolSize: 8, QRIF: 1, MaxAge: 100, MaxReuse: 100},
			[]pr{{0, 1, 90, 0}, {1, 5, 10, 0}, {2, 3, 50, 0}}, []int64{1}, nil, []int{1}},
		// RIFs 1 2 3 10: the 0.75 quantile (nearest rank: the 3rd smallest)
		// is 3, so RIF 10 is hot; among the cold the fastest wins, and the
		// hot replica loses although it reports the lowest latency.
		{"a hot probe loses to a slower cold one", cfg,
			[]pr{{0, 1, 80, 0}, {1, 2, 60, 0}, {2, 3, 70, 0}, {3, 10, 5, 0}}, []int64{1}, nil, []int{1}},
		// q_rif 0: only the lowest RIF is cold (the quantile is the minimum).
		{"q_rif 0 is least RIF first, latency second", PrequalConfig{PoolSize: 8, QRIF: 0, MaxAge: 100, MaxReuse: 100},
			[]pr{{0, 2, 10, 0}, {1, 1, 90, 0}, {2, 1, 40, 0}}, []int64{1}, nil, []int{2}},
		// Equal latency among the cold: the lower RIF, then the newer probe.
		{"cold ties: lower RIF, then newer", PrequalConfig{PoolSize: 8, QRIF: 1, MaxAge: 100, MaxReuse: 100},
			[]pr{{0, 2, 10, 0}, {1, 1, 10, 1}, {2, 1, 10, 2}}, []int64{3}, nil, []int{2}},
		// The quantile is over the last pool_size answers: replicas 4-7
		// answered RIF 0 and were used up (max_reuse 1), so what is left
		// (RIF 5, 6, 7) is all above the 0.5 quantile of 0 0 0 0 5 6 7:
		// all hot, and the lowest RIF wins whatever its latency.
		{"all hot: the lowest RIF wins", PrequalConfig{PoolSize: 8, QRIF: 0.5, MaxAge: 100, MaxReuse: 1},
			[]pr{{1, 6, 10, 0}, {2, 5, 90, 0}, {3, 7, 20, 0}, {4, 0, 1, 0}, {5, 0, 2, 0}, {6, 0, 3, 0}, {7, 0, 4, 0}},
			[]int64{1, 1, 1, 1, 1, 1, 1, 1}, nil, []int{4, 5, 6, 7, 2, 1, 3, -1}},
		{"a probe older than max_age is dropped", cfg,
			[]pr{{0, 0, 10, 0}, {1, 0, 20, 50}}, []int64{100, 101, 151}, nil, []int{0, 1, -1}},
		{"max_reuse: a probe serves that many picks", PrequalConfig{PoolSize: 8, QRIF: 1, MaxAge: 100, MaxReuse: 2},
			[]pr{{0, 0, 10, 0}, {1, 0, 20, 0}}, []int64{1, 1, 1, 1, 1}, nil, []int{0, 0, 1, 1, -1}},
		{"a full pool evicts the oldest", PrequalConfig{PoolSize: 2, QRIF: 1, MaxAge: 100, MaxReuse: 100},
			[]pr{{0, 0, 1, 0}, {1, 0, 20, 1}, {2, 0, 30, 2}}, []int64{3}, nil, []int{1}},
		{"only eligible replicas are picked", cfg,
			[]pr{{0, 0, 1, 0}, {1, 0, 20, 0}, {2, 0, 30, 0}}, []int64{1, 1}, []int{2}, []int{2, 2}},
		{"nothing eligible", cfg, []pr{{0, 0, 1, 0}}, []int64{1}, []int{5}, []int{-1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := NewPrequal(tc.cfg)
			if err != nil {
				t.Fatal(err)
			}
			for _, x := range tc.probes {
				p.Add(Probe{Replica: x.rep, RIF: x.rif, Latency: x.lat, At: x.at})
			}
			var elig func(int) bool
			if tc.elig != nil {
				elig = func(r int) bool {
					for _, e := range tc.elig {
						if e == r {
							return true
						}
					}
					return false
				}
			}
			for i, now := range tc.picks {
				got, ok := p.Pick(now, elig)
				if !ok {
					got = -1
				}
				if got != tc.want[i] {
					t.Fatalf("pick %d at %d: got replica %d, want %d", i, now, got, tc.want[i])
				}
			}
		})
	}
}

func TestQuantileNearestRank(t *testing.T) {
	for _, tc := range []struct {
		xs   []int
		q    float64
		want int
	}{
		{[]int{5}, 0.5, 5}, {[]int{4, 1, 3, 2}, 0, 1}, {[]int{4, 1, 3, 2}, 0.25, 1}, {[]int{4, 1, 3, 2}, 0.26, 2},
		{[]int{4, 1, 3, 2}, 0.75, 3}, {[]int{4, 1, 3, 2}, 0.8, 4}, {[]int{4, 1, 3, 2}, 1, 4},
	} {
		if got := Quantile(append([]int(nil), tc.xs...), tc.q); got != tc.want {
			t.Errorf("Quantile(%v, %g): got %d, want %d", tc.xs, tc.q, got, tc.want)
		}
	}
}

func TestNewPrequalRefusesBadConfigs(t *testing.T) {
	ok := PrequalConfig{PoolSize: 16, QRIF: 0.8, MaxAge: 1, MaxReuse: 3}
	for _, tc := range []struct {
		mut  func(*PrequalConfig)
		want string
	}{
		{func(c *PrequalConfig) { c.PoolSize = 0 }, "pool size"},
		{func(c *PrequalConfig) { c.QRIF = 1.5 }, "q_rif"},
		{func(c *PrequalConfig) { c.MaxAge = 0 }, "max age"},
		{func(c *PrequalConfig) { c.MaxReuse = 0 }, "max reuse"},
	} {
		c := ok
		tc.mut(&c)
		if _, err := NewPrequal(c); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: got %v, want an error naming %s", c, err, tc.want)
		}
	}
	if _, err := NewPrequal(ok); err != nil {
		t.Errorf("%+v: got %v, want no error", ok, err)
	}
}
