package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/throttlesim/throttlesim/report"
	"github.com/throttlesim/throttlesim/sim/resultdir"
	"github.com/throttlesim/throttlesim/sim/sweep"
)

func newCompareCmd(e *env) *cobra.Command {
	var out, title string
	cmd := &cobra.Command{
		Use:   "compare DIR...",
		Short: "Overlay the results of several runs in one chart set",
		Long: `Compare reads the results folders of earlier runs (throttlesim run) and writes
the comparison charts and tables that a sweep writes, one point per folder:
compare_server_load.png, compare_local_drops.png, compare_goodput.png,
compare_recovery.png, compare_peak_load.png, compare_amplification.png,
compare_success.png, sweep.csv and runs.csv.`,
		Example: `  throttlesim run scenarios/outage.yaml
  throttlesim run scenarios/outage-no-policy.yaml
  throttlesim compare results/outage results/outage-no-policy --out results/compare`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageError{errors.New("expected at least one results folder")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			return compareRun(cmd.Context(), e, args, out, title)
		},
	}
	cmd.Flags().StringVarP(&out, "out", "o", filepath.Join("results", "compare"), "folder for the comparison")
	cmd.Flags().StringVar(&title, "title", "", "chart title (default: the runs' names, or their number when more than two)")
	return cmd
}

func compareRun(_ context.Context, e *env, dirs []string, out, title string) error {
	out = filepath.Clean(out)
	if err := checkOut(out); err != nil {
		return err
	}
	var runs []*sweep.RunData
	count := map[string]int{}
	for _, d := range dirs {
		run, err := sweep.ReadRun(d)
		if err != nil {
			return err
		}
		runs = append(runs, run)
		count[run.Doc.Scenario.Name]++
	}
	var pts []sweep.PointData
	var names []string
	for i, run := range runs {
		label := run.Doc.Scenario.Name
		if count[label] > 1 { // runs of one scenario: name them by folder
			label = filepath.Base(filepath.Clean(dirs[i]))
		}
		run.Spec = sweep.RunSpec{Index: i, Point: i, Seed: run.Doc.Scenario.Seed}
		run.Key = "-"
		pts = append(pts, sweep.PointData{Label: label, Runs: []sweep.RunData{*run}})
		names = append(names, label)
	}
	tmp, err := os.MkdirTemp(filepath.Dir(out), "."+filepath.Base(out)+".tmp-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	if title == "" {
		title = strings.Join(names, " vs ")
		if len(names) > 2 {
			title = fmt.Sprintf("%d runs compared", len(names))
		}
	}
	if err := writeComparison(tmp, report.Comparison{Name: title, Points: pts, Baseline: -1}); err != nil {
		return err
	}
	// compare.json names what was compared (and marks the folder as ours).
	manifest, _ := json.MarshalIndent(map[string]any{"title": title, "runs": dirs, "labels": names}, "", "  ")
	if err := resultdir.WriteFile(filepath.Join(tmp, "compare.json"), append(manifest, '\n')); err != nil {
		return err
	}
	if err := resultdir.Replace(tmp, out); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "compared %d runs\nresults: %s%c\n", len(pts), out, filepath.Separator)
	return nil
}

func newMergeCmd(e *env) *cobra.Command {
	var out string
	cmd := &cobra.Command{
		Use:   "merge --out DIR SHARD_DIR...",
		Short: "Combine the shards of a sweep into the sweep's results",
		Long: `Merge combines sweep shards (throttlesim sweep --shard i/n) into exactly the
folder an unsharded sweep writes, byte for byte. Every shard must come from the
same sweep (identical sweep.json) and together they must hold every run.`,
		Example: `  throttlesim merge --out results/k-sweep results/k-sweep-shard*`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usageError{errors.New("expected at least one shard folder")}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return usageError{errors.New("--out DIR is required")}
			}
			return mergeRun(e, args, out)
		},
	}
	cmd.Flags().StringVarP(&out, "out", "o", "", "the merged sweep folder")
	return cmd
}

func mergeRun(e *env, shards []string, out string) error {
	out = filepath.Clean(out)
	if err := checkOut(out); err != nil {
		return err
	}
	work := out + ".incomplete"
	plan, err := sweep.Merge(shards, work)
	if err != nil {
		return err
	}
	if err := aggregateSweep(work, plan); err != nil {
		return err
	}
	if err := resultdir.Replace(work, out); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "merged %d shards: %d runs\nresults: %s%c\n", len(shards), len(plan.Runs()), out, filepath.Separator)
	return nil
}
