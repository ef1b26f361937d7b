"""Unit tests of run_bench.py's judgement: noisy runs, ratio rows.

  python3 -m unittest test_run_bench   (from bench/; ctest: bench_judgement)
"""

import argparse
import unittest

import run_bench


def args(spin=False):
    return argparse.Namespace(spin_idle_cpus=spin)


def run(p50, p99, others=0.0, steal=0.0, failed=0):
    return {"latency_us": {"p50": p50, "p99": p99, "p999": 2 * p99}, "qps": 1000.0,
            "failed": failed, "others_on_cpu0": others, "steal_on_cpu0": steal}


class NoiseTest(unittest.TestCase):
    def test_quiet_rows_are_judged(self):
        rows = []
        run_bench.row(rows, "r", "<= 1x", "m", True, noise=0.02)
        run_bench.row(rows, "r", "<= 1x", "m", False, noise=0.05)
        self.assertEqual([r[3] for r in rows], ["PASS", "MISS"])

    def test_a_noisy_row_reads_noisy_rerun_and_says_how_noisy(self):
        rows = []
        run_bench.row(rows, "r", "<= 1x", "m", True, noise=0.06)
        run_bench.row(rows, "r", "<= 1x", "m", False, "kept", noise=0.30)
        self.assertEqual([r[3] for r in rows], ["noisy, rerun", "noisy, rerun"])
        self.assertIn("up to 6% of the servers' core (limit 5%)", rows[0][4])
        self.assertTrue(rows[1][4].startswith("kept; "))

    def test_a_row_without_target_stays_info_however_noisy(self):
        rows = []
        run_bench.row(rows, "r", "reported", "m", None, noise=0.9)
        self.assertEqual(rows[0][3], "info")

    def test_noise_is_the_worst_run_with_steal(self):
        runs = [run(1, 2, others=0.01, steal=0.01), run(1, 2, others=0.03, steal=0.03)]
        self.assertAlmostEqual(run_bench.noise_of(runs, args(), True), 0.06)

    def test_noise_cannot_be_told_unpinned_or_with_spinning_cpus(self):
        runs = [run(1, 2, others=0.5)]
        self.assertIsNone(run_bench.noise_of(runs, args(), False))
        self.assertIsNone(run_bench.noise_of(runs, args(spin=True), True))


class LatencyRowTest(unittest.TestCase):
    def test_judged_on_the_median_of_the_rounds_ratios(self):
        # Ratios 1.00, 1.20, 1.04: median 1.04 <= 1.05, although the
        # medians of each server's p50 (104 vs 100) would also pass and a
        # single round (the second) would not.
        runs = {"compatd": [run(100, 300), run(120, 300), run(104, 300)],
                "null": [run(100, 200), run(100, 200), run(100, 200)]}
        rows = []
        run_bench.latency_row(rows, "c1", 1.05, "p50", "p99", runs, args(), True)
        self.assertEqual(rows[0][3], "PASS")
        self.assertTrue(rows[0][2].startswith("1.04x"), rows[0][2])
        self.assertIn("median of 3 rounds: 1.00, 1.20, 1.04", rows[0][2])

    def test_over_target_misses_and_a_failed_call_misses(self):
        slow = {"compatd": [run(110, 300)], "null": [run(100, 200)]}
        failing = {"compatd": [run(100, 300, failed=1)], "null": [run(100, 200)]}
        rows = []
        run_bench.latency_row(rows, "c1", 1.05, "p50", "p99", slow, args(), True)
        run_bench.latency_row(rows, "c1", 1.05, "p50", "p99", failing, args(), True)
        self.assertEqual([r[3] for r in rows], ["MISS", "MISS"])

    def test_a_round_on_a_busy_core_makes_the_row_noisy(self):
        runs = {"compatd": [run(100, 300), run(100, 300, others=0.2)],
                "null": [run(100, 200), run(100, 200)]}
        rows = []
        run_bench.latency_row(rows, "ol", 1.2, "p99", "p999", runs, args(), True)
        self.assertEqual(rows[0][3], "noisy, rerun")


class CpuTimesTest(unittest.TestCase):
    def test_reads_tasks_and_steal_of_cpu0(self):
        task, steal = run_bench.cpu_task_seconds(0)
        self.assertGreater(task, 0.0)
        self.assertGreaterEqual(steal, 0.0)


if __name__ == "__main__":
    unittest.main()
