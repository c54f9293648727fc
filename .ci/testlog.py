#!/usr/bin/env python3
"""Reads `go test -json` on stdin and prints what a reader of a long test run needs.

While the run goes: the lines of `go test -v` that say what happens (a test starting or
ending, its own log lines, hadrill's error lines, panics and their stacks), not the progress
every command prints. At the end: for each test that failed, everything it printed (the
progress of the commands it ran included), so that a failure seen once can be read whole; then
the slowest tests and each package's wall time, for whoever makes the run shorter.
"""
import json
import re
import sys

KEEP = re.compile(
    r'^(=== (RUN|CONT)|--- |PASS|FAIL|ok|panic|\s+\S+_test\.go|\s+hadrill: |\s+ERROR [0-9]+ |'
    r'\s+(panic|fatal error): |\s+/\S+\.go:[0-9]+)')
SUBTEST_PASSED = re.compile(r'^\s*--- PASS: \S+/')  # a subtest that passed: its parent's line says it
MAX_LINES = 600  # of one failed test's output (its first and last ones)
SLOWEST = 15     # tests listed with their time at the end


def main():
    out = {}      # (package, test) -> output lines
    failed = []   # (package, test), in the order they failed
    took = {}     # (package, test) -> seconds it ran (top-level tests; a parallel one from its resumption)
    wall = {}     # package -> seconds
    for raw in sys.stdin:
        try:
            ev = json.loads(raw)
        except ValueError:
            sys.stdout.write(raw)  # a build error, printed as go test printed it
            continue
        key = (ev.get('Package', ''), ev.get('Test', ''))
        if ev.get('Action') == 'output':
            line = ev.get('Output', '')
            if key[1]:
                out.setdefault(key, []).append(line)
            if KEEP.match(line) and not SUBTEST_PASSED.match(line):
                sys.stdout.write(line)
                sys.stdout.flush()
        elif ev.get('Action') == 'fail' and key[1]:
            failed.append(key)
        if ev.get('Action') in ('pass', 'fail') and 'Elapsed' in ev:
            if not key[1]:
                wall[key[0]] = ev['Elapsed']
            elif '/' not in key[1]:
                took[key] = ev['Elapsed']
    for pkg, test in failed:
        lines = out.get((pkg, test), [])
        if len(lines) > MAX_LINES:  # the failure's own message may come first: the head and the tail
            head, tail = MAX_LINES // 4, MAX_LINES - MAX_LINES // 4
            lines = lines[:head] + [f'… {len(lines) - head - tail} lines left out …\n'] + lines[-tail:]
        print(f'\n===== everything {test} ({pkg}) printed =====')
        sys.stdout.write(''.join(lines))
    if took:
        print(f'\n===== the {min(SLOWEST, len(took))} slowest of {len(took)} tests (seconds each ran) =====')
        for (pkg, test), secs in sorted(took.items(), key=lambda kv: -kv[1])[:SLOWEST]:
            print(f'{secs:8.1f}  {test} ({pkg.rsplit("/", 1)[-1]})')
        for pkg, secs in sorted(wall.items()):
            print(f'{secs:8.1f}  the whole of {pkg}, {sum(v for (p, _), v in took.items() if p == pkg):.0f} s of tests run in parallel')
    sys.stdout.flush()


if __name__ == '__main__':
    main()
