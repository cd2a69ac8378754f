# ci.sh, sourced by the experiments' tables.sh scripts.
#
# ci FMT: the mean ± t·sd/√n (the half-width of the Student-t 95%
# interval) of the numbers on stdin, each with printf format FMT; no ±
# with one number, "–" with none. t is tabulated up to 10 numbers.
ci() {
	awk -v fmt="$1" 'BEGIN { split("12.706 4.303 3.182 2.776 2.571 2.447 2.365 2.306 2.262", t, " ") }
		{ x[++n] = $1; s += $1 }
		END {
			if (n == 0) { print "–"; exit }
			m = s / n
			if (n == 1) { printf fmt "\n", m; exit }
			for (i = 1; i <= n; i++) v += (x[i] - m)^2
			h = t[n-1] * sqrt(v / (n - 1)) / sqrt(n)
			printf fmt " ± " fmt "\n", m, h
		}'
}
