package report

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"testing"

	"github.com/throttlesim/throttlesim/plots"
	"github.com/throttlesim/throttlesim/sim/metrics"
	"github.com/throttlesim/throttlesim/sim/sweep"
)

// keptBand is the band as it was computed before the aggregation streamed
// (over every run's kept series), the reference the streamed bands must
// equal bit for bit.
func keptBand(pt sweep.PointData, interval int64, v func(*metrics.Row) float64, rate bool) plots.Band {
	if len(pt.Runs) == 0 {
		return plots.Band{}
	}
	n := len(pt.Runs[0].Series.Rows)
	bd := plots.Band{Mean: make([]float64, n), Lo: make([]float64, n), Hi: make([]float64, n)}
	sec := float64(interval) / 1e9
	for j := 0; j < n; j++ {
		var sum float64
		cnt := 0
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, r := range pt.Runs {
			if j >= len(r.Series.Rows) {
				continue
			}
			x := v(&r.Series.Rows[j])
			if math.IsNaN(x) {
				continue
			}
			if rate {
				x /= sec
			}
			sum += x
			cnt++
			lo, hi = min(lo, x), max(hi, x)
		}
		if cnt == 0 {
			bd.Mean[j], bd.Lo[j], bd.Hi[j] = math.NaN(), math.NaN(), math.NaN()
			continue
		}
		bd.Mean[j], bd.Lo[j], bd.Hi[j] = sum/float64(cnt), lo, hi
	}
	return bd
}

// A sweep aggregated with its series streamed into the bands and dropped
// (sweep.LoadRunsEach, as `throttlesim sweep` does) draws the same chart
// inputs and the same PNG bytes as one aggregated over every kept series,
// and keeps no series; the bands equal the reference computation bit for
// bit. Streaming is what bounds a 30,000-run sweep's memory (issue 24).
func TestBandsStreamedAreTheKeptOnes(t *testing.T) {
	p, dir := tinySweepDir(t)
	kept, err := sweep.LoadRuns(context.Background(), dir, p)
	if err != nil {
		t.Fatal(err)
	}
	bands := NewBands(len(p.Points))
	streamed, err := sweep.LoadRunsEach(context.Background(), dir, p, bands.Add)
	if err != nil {
		t.Fatal(err)
	}
	for _, pt := range streamed {
		for _, r := range pt.Runs {
			if r.Series != nil {
				t.Fatalf("point %s: a streamed run kept its series", pt.Label)
			}
		}
	}
	a, b := CompareInput(p.Name, "k", kept), CompareInputBands(p.Name, "k", streamed, bands)
	if fa, fb := fmt.Sprintf("%#v", a), fmt.Sprintf("%#v", b); fa != fb {
		t.Fatalf("chart inputs differ:\nkept     %.400s\nstreamed %.400s", fa, fb)
	}
	interval := kept[0].Runs[0].Series.Interval
	for i, pt := range kept {
		want := keptBand(pt, interval, func(r *metrics.Row) float64 { return float64(r.Received) }, true)
		if got := b.Points[i].Received; fmt.Sprint(got) != fmt.Sprint(want) || len(got.Mean) == 0 {
			t.Errorf("point %s: received band differs from the reference", pt.Label)
		}
		for j, x := range want.Mean {
			if math.Float64bits(x) != math.Float64bits(b.Points[i].Received.Mean[j]) {
				t.Fatalf("point %s interval %d: mean %v, reference %v", pt.Label, j, b.Points[i].Received.Mean[j], x)
			}
		}
	}
	ca, err := plots.Compare(a)
	if err != nil {
		t.Fatal(err)
	}
	cb, err := plots.Compare(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(ca) != len(cb) || len(ca) == 0 {
		t.Fatalf("%d charts kept, %d streamed", len(ca), len(cb))
	}
	for i := range ca {
		if ca[i].File != cb[i].File || !bytes.Equal(ca[i].PNG, cb[i].PNG) {
			t.Errorf("%s: the streamed chart is not the kept one's bytes", ca[i].File)
		}
	}
}

// A band over runs of different lengths is as long as the first run's,
// leaves NaN values out, and is NaN where no run has a value.
func TestBandAccUnevenRuns(t *testing.T) {
	v := func(r *metrics.Row) float64 {
		if r.Offered == 0 {
			return math.NaN()
		}
		return float64(r.Succeeded)
	}
	ser := func(rows ...[2]int64) *metrics.Series {
		s := &metrics.Series{Interval: 5e8}
		for _, x := range rows {
			s.Rows = append(s.Rows, metrics.Row{Offered: x[0], Succeeded: x[1]})
		}
		return s
	}
	a := newBandAcc(5e8, true, v)
	a.add(ser([2]int64{1, 1}, [2]int64{0, 0}, [2]int64{2, 2}))
	a.add(ser([2]int64{3, 3}, [2]int64{0, 0}, [2]int64{4, 4}, [2]int64{9, 9}))
	a.add(ser([2]int64{5, 2}))
	got := fmt.Sprint(a.band())
	want := fmt.Sprint(plots.Band{Mean: []float64{4, math.NaN(), 6}, Lo: []float64{2, math.NaN(), 4}, Hi: []float64{6, math.NaN(), 8}})
	if got != want {
		t.Errorf("band %s, want %s", got, want)
	}
	if b := (*bandAcc)(nil).band(); b.Mean != nil {
		t.Errorf("a band not charted: %v, want empty", b)
	}
}
