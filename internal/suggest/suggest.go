// Package suggest finds the likely intended word for a typo: the
// did-you-mean of scenario fields, enum values, service and metric names.
package suggest

import (
	"math"
	"strings"
)

// Closest returns the candidate closest to s by edit distance, if it is
// close enough to be a likely typo (at most a third of s's length, and at
// least 1), else "". On a tie it prefers a candidate that starts with s.
func Closest(s string, candidates []string) string {
	best, bestD := "", math.MaxInt
	for _, c := range candidates {
		d := Distance(s, c)
		if d < bestD || d == bestD && strings.HasPrefix(c, s) && !strings.HasPrefix(best, s) {
			best, bestD = c, d
		}
	}
	if bestD <= max(1, len(s)/3) {
		return best
	}
	return ""
}

// Distance is the Levenshtein distance between a and b, by bytes.
func Distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			c := 1
			if a[i-1] == b[j-1] {
				c = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+c)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
