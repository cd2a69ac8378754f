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

// A query_range answer with two series: the selector picks one.
func ExampleParsePrometheus() {
	data := []byte(`{"status":"success","data":{"resultType":"matrix","result":[
{"metric":{"instance":"a:9"},"values":[[1733450000,"10"],[1733450015,"12.5"]]},
{"metric":{"instance":"b:9"},"values":[[1733450000,"1"],[1733450015,"2"]]}]}}`)
	r, err := trace.ParsePrometheus(data, `{instance="a:9"}`, 0)
	fmt.Println(r.Rate, err)
	_, err = trace.ParsePrometheus(data, "", 0)
	fmt.Println(err)
	// Output:
	// [10 12.5] <nil>
	// trace: the matrix holds 2 series; set selector to pick one: {instance="a:9"}, {instance="b:9"}
}

// An access log's two requests in one second are spread over it.
func ExampleParseAccessLog() {
	data := []byte(`10.0.0.1 - - [10/Oct/2000:13:55:36 -0700] "GET / HTTP/1.1" 200 12
10.0.0.2 - - [10/Oct/2000:13:55:36 -0700] "GET /a HTTP/1.1" 200 12
`)
	t, err := trace.ParseAccessLog(data)
	fmt.Println(t[1]-t[0], err)
	// Output:
	// 500000000 <nil>
}
