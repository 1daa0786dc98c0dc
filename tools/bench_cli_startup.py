#!/usr/bin/env python
"""How long `fewshot-nb --version`, `--help` and `data where` take to answer, as a user waits for them (issue 46).

    python tools/bench_cli_startup.py [--repeat 10]

Each command runs in a fresh interpreter `--repeat` times; the table gives the median and the slowest wall time. The
target: `--version` and `--help` well under a second on an idle machine of our kind (they import nothing heavy:
tests/test_api.py checks that torch and pandas stay out).
"""
import argparse, statistics, subprocess, sys, time

COMMANDS = {"--version": ["--version"], "--help": ["--help"], "evaluate --help": ["evaluate", "--help"], "data where": ["data", "where"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=10)
    a = ap.parse_args()
    code = "import sys; from fewshot_nb.cli import main; sys.exit(main(sys.argv[1:]))"
    print(f"| command | median (s) | slowest (s) |  ({a.repeat} runs each, {sys.executable})\n|---|---|---|")
    for name, args in COMMANDS.items():
        times = []
        for _ in range(a.repeat):
            t0 = time.perf_counter()
            subprocess.run([sys.executable, "-c", code, *args], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
            times.append(time.perf_counter() - t0)
        print(f"| fewshot-nb {name} | {statistics.median(times):.3f} | {max(times):.3f} |")


if __name__ == "__main__":
    main()
