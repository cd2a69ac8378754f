package metrics

import (
	"math"
	"strconv"
)

// FormatFloat is the one float format of every output file: the shortest
// representation that reads back to the same float64; NaN and infinities
// (which no output should hold) are written empty.
func FormatFloat(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return ""
	}
	return strconv.FormatFloat(x, 'g', -1, 64)
}
