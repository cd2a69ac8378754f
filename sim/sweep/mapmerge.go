package sweep

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/throttlesim/throttlesim/sim/explore"
)

// MapFile is a map's document (explore.MapDoc), in a map's folder and in
// each of its shards'.
const MapFile = "map.json"

// MergeMaps gathers the shards of one map (map --shard i/n) into one
// map: every shard must be of the same map (same scenario, ranges, test,
// seed and labels), no load level may be in two shards and together they
// must hold every level. Beside Merge, which does this for a sweep.
func MergeMaps(shards []string) (*explore.MapDoc, error) {
	var merged *explore.MapDoc
	seen := map[int]string{}
	for _, d := range shards {
		b, err := os.ReadFile(filepath.Join(d, MapFile))
		if err != nil {
			return nil, fmt.Errorf("%s: not a map shard: %w", d, err)
		}
		var doc explore.MapDoc
		if err := json.Unmarshal(b, &doc); err != nil {
			return nil, fmt.Errorf("%s/map.json: %w", d, err)
		}
		if merged == nil {
			m := doc
			m.Shard = ""
			m.Result = &explore.MapResult{Load: doc.Result.Load, Trigger: doc.Result.Trigger}
			merged = &m
		} else if doc.Scenario != merged.Scenario || doc.Load != merged.Load || doc.Trigger != merged.Trigger || doc.Test != merged.Test ||
			doc.BaseSeed != merged.BaseSeed || doc.Grid != merged.Grid || doc.HorizonS != merged.HorizonS || !slices.Equal(doc.Sets, merged.Sets) ||
			doc.TriggerLabel != merged.TriggerLabel || doc.TriggerOrigin != merged.TriggerOrigin || doc.LoadLabel != merged.LoadLabel {
			return nil, fmt.Errorf("%s: a shard of a different map (its settings differ from %s's)", d, shards[0])
		}
		for _, l := range doc.Result.Levels {
			if prev, dup := seen[l.Index]; dup {
				return nil, fmt.Errorf("load level %d is in both %s and %s", l.Index, prev, d)
			}
			seen[l.Index] = d
			merged.Result.Levels = append(merged.Result.Levels, l)
		}
		merged.Result.Rare = append(merged.Result.Rare, doc.Result.Rare...)
	}
	if err := missingMapShards(shards, seen, merged.Levels); err != nil {
		return nil, err
	}
	for i := 0; i < merged.Levels; i++ {
		if _, ok := seen[i]; !ok {
			return nil, fmt.Errorf("load level %d is in none of the shards: is a shard missing?", i)
		}
	}
	slices.SortFunc(merged.Result.Levels, func(a, b explore.Level) int { return a.Index - b.Index })
	slices.SortFunc(merged.Result.Rare, func(a, b explore.RarePoint) int { return cmp.Compare(a.Load, b.Load) })
	merged.Result.Notes = explore.LoadNotes(merged.Result.Levels, merged.Result.Load)
	return merged, nil
}

// missingMapShards names the shards a merge was not given, when the shard
// folders say which of how many they are: load level l is shard l mod n's.
func missingMapShards(dirs []string, seen map[int]string, levels int) error {
	n := 0
	for _, d := range dirs {
		b, err := os.ReadFile(filepath.Join(d, MapFile))
		if err != nil {
			return nil
		}
		var doc struct{ Shard string }
		if json.Unmarshal(b, &doc) != nil {
			return nil
		}
		var i, m int
		if _, err := fmt.Sscanf(doc.Shard, "%d/%d", &i, &m); err != nil || m < 1 {
			return nil // an older shard, or --shard auto before it was resolved: levels are named instead
		}
		if n != 0 && m != n {
			return fmt.Errorf("%s: shard %s, but %s is one of %d: shards of differently split maps", d, doc.Shard, dirs[0], n)
		}
		n = m
	}
	// Shard s's first load level is s; a shard with no level (s >= levels) is not missed.
	return MissingShards(min(n, levels), func(s int) bool { _, ok := seen[s]; return ok }, len(dirs))
}
