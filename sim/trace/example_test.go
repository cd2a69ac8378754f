package trace_test

import (
	"fmt"

	"github.com/throttlesim/throttlesim/sim/trace"
)

// A rate recorded every 15 s, replayed from its second sample for 30 s.
func ExampleParseCSV() {
	data := []byte("time,rate\n0,100\n15,150\n30,120\n45,80\n")
	r, err := trace.ParseCSV(data, "time", "rate", 0)
	if err != nil {
		fmt.Println(err)
		return
	}
	cut, _ := r.Cut(15e9, 30e9, false)
	fmt.Println(cut.T, cut.Rate, cut.End)

	_, err = trace.ParseCSV([]byte("time,rate\n0,100\n15,-1\n"), "time", "rate", 0)
	fmt.Println(err)
	// Output:
	// [0 15000000000] [150 120] 30000000000
	// trace: line 3: rate -1: expected a finite number of requests/s >= 0
}
