package cruntime

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// parPolicy is a C program that runs ks_par_choose and ks_par_learn on
// made-up costs: phases of runs, each with the ratio of wall to CPU time a
// loop has on one thread and on a team, and the wall time of a run (the
// same either way: it only decides how often runs are timed), and prints,
// per phase, how many of
// its runs were on a team, how many of its last 100, and how many were
// timed.
const parPolicy = `#define _DEFAULT_SOURCE 1
#include "ksc_runtime.h"

int main(int argc, char **argv) {
  ks_par_site s;
  memset(&s, 0, sizeof s);
  for (int a = 1; a + 3 < argc; a += 4) {
    int runs = atoi(argv[a]);
    double serial = atof(argv[a + 1]), team = atof(argv[a + 2]), wall = atof(argv[a + 3]);
    int teams = 0, last = 0, timed = 0;
    for (int r = 0; r < runs; r++) {
      bool tm;
      bool t = ks_par_choose(&s, &tm);
      if (tm) ks_par_learn(&s, t, wall, t ? team : serial);
      teams += t;
      timed += tm;
      if (r >= runs - 100) last += t;
    }
    printf("%d %d %d\n", teams, last, timed);
  }
  return 0;
}
`

// TestParallelPolicy checks how a context chooses between a team of
// threads and one thread for a loop (ks_par_choose): the faster way most
// of the time, the other now and then, rarely if it is much slower, a
// change of the machine's load followed within a few periods, and few runs
// timed.
func TestParallelPolicy(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("no gcc")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "ksc_runtime.h"), []byte(Header), 0o644); err != nil {
		t.Fatal(err)
	}
	src := filepath.Join(dir, "policy.c")
	if err := os.WriteFile(src, []byte(parPolicy), 0o644); err != nil {
		t.Fatal(err)
	}
	exe := filepath.Join(dir, "policy")
	if out, err := exec.Command("gcc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-o", exe, src, "-lm").CombinedOutput(); err != nil {
		t.Fatalf("gcc: %v\n%s", err, out)
	}
	type phase struct {
		runs               int
		serial, team, wall float64
		// the least and most runs on a team, of all and of the last 100,
		// and the least and most runs timed
		minTeams, maxTeams, minLast, maxLast, minTimed, maxTimed int
	}
	tests := []struct {
		name   string
		phases []phase
	}{
		{"team twice as fast", []phase{{1000, 1, 0.52, 1e-5, 1000, 1000, 100, 100, 0, 140}}},
		{"team faster on a busy machine", []phase{{1000, 1, 0.8, 1e-5, 1000, 1000, 100, 100, 0, 140}}},
		{"team slower", []phase{{1000, 1, 1.2, 1e-5, 10, 30, 1, 3, 0, 160}}},
		{"team barely faster", []phase{{1000, 1, 0.95, 1e-5, 10, 30, 1, 3, 0, 160}}},
		{"a short loop on a busy machine", []phase{{10000, 2, 2000, 1e-5, 5, 15, 0, 1, 0, 1300}}},
		{"long loops, every run timed", []phase{{1000, 1, 0.52, 0.01, 1000, 1000, 100, 100, 1000, 1000}}},
		{"a neighbour comes and goes", []phase{
			{1000, 1, 0.52, 1e-5, 1000, 1000, 100, 100, 0, 140},
			{1000, 1, 1.3, 1e-5, 10, 60, 1, 3, 0, 160},
			{1000, 1, 0.52, 1e-5, 940, 1000, 100, 100, 0, 150},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var args []string
			for _, p := range tt.phases {
				args = append(args, fmt.Sprint(p.runs), fmt.Sprint(p.serial), fmt.Sprint(p.team), fmt.Sprint(p.wall))
			}
			out, err := exec.Command(exe, args...).Output()
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(string(out)), "\n")
			if len(lines) != len(tt.phases) {
				t.Fatalf("output %q", out)
			}
			for i, p := range tt.phases {
				var teams, last, timed int
				if _, err := fmt.Sscan(lines[i], &teams, &last, &timed); err != nil {
					t.Fatal(err)
				}
				if teams < p.minTeams || teams > p.maxTeams || last < p.minLast || last > p.maxLast || timed < p.minTimed || timed > p.maxTimed {
					t.Errorf("phase %d (%d runs, cost %g on one thread, %g on a team): %d on a team, %d of the last 100, %d timed; want %d-%d, %d-%d and %d-%d",
						i, p.runs, p.serial, p.team, teams, last, timed, p.minTeams, p.maxTeams, p.minLast, p.maxLast, p.minTimed, p.maxTimed)
				}
			}
		})
	}
}
