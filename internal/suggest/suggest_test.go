package suggest

import "testing"

func TestClosest(t *testing.T) {
	for _, tc := range []struct {
		s    string
		cand []string
		want string
	}{
		{"throtle", []string{"timeout", "throttle", "retry"}, "throttle"},
		{"dbb", []string{"api", "db"}, "db"},
		{"xyz", []string{"throttle", "retry"}, ""},                      // too far
		{"rec", []string{"reject", "recovery_s"}, ""},                   // 3 edits from both: more than a third of 3 letters
		{"recovery", []string{"recovery_s", "recovered"}, "recovery_s"}, // a tie (2 and 2): the one that starts with s
		{"", []string{"a"}, "a"},
	} {
		if got := Closest(tc.s, tc.cand); got != tc.want {
			t.Errorf("Closest(%q, %v) = %q, want %q", tc.s, tc.cand, got, tc.want)
		}
	}
}
