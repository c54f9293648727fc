#!/usr/bin/env python3
"""Reads `go test -json` on stdin and prints what a reader of a long test run needs.

While the run goes: the lines of `go test -v` that say what happens (a test starting or
ending, its own log lines, hadrill's error lines, panics and their stacks), not the progress
every command prints. At the end: for each test that failed, everything it printed (the
progress of the commands it ran included), so that a failure seen once can be read whole; then
the slowest tests and each package's wall time, for whoever makes the run shorter, and how the
package's tests ran at once: how long one, two or three ran together and which ran last alone
(a test that waited for a lab slot counted from when it had one). Last, since a reader of a long
log often sees its end only: why each failed test failed, its own messages without the logs it
dumped or the times of its commands.
"""
import datetime
import json
import re
import sys

KEEP = re.compile(
    r'^(=== (RUN|CONT)|--- |PASS|FAIL|ok|panic|\s+\S+_test\.go|\s+hadrill: |\s+ERROR [0-9]+ |'
    r'\s+(panic|fatal error): |\s+/\S+\.go:[0-9]+)')
SUBTEST_PASSED = re.compile(r'^\s*--- PASS: \S+/')  # a subtest that passed: its parent's line says it
SLOT = re.compile(r'a lab slot taken after ([0-9.]+) s')  # a test begins to run once it has one
MAX_LINES = 600  # of one failed test's output (its first and last ones)
SLOWEST = 15     # tests listed with their time at the end
TEST_LINE = re.compile(r'^\s+\S+_test\.go:[0-9]+: (.*)')  # a test's own message (t.Log, t.Error, t.Fatal)
NOT_WHY = re.compile(  # a test's messages that never say why it failed: its logs' ends and its commands' times
    r'^(\S+/(nodes|runs)/\S+: |\S+keeper\.log: |--- \S+ \(last [0-9]+ lines\)|a lab slot taken after |'
    r'hadrill .*: [0-9.]+s$|\S+: (not )?kept( in|\b))')
WHY_LINES = 30   # of one failed test's own messages, at the very end


def main():
    out = {}      # (package, test) -> output lines
    failed = []   # (package, test), in the order they failed
    took = {}     # (package, test) -> seconds it ran (top-level tests; a parallel one from its resumption,
                  # or from its lab slot)
    waited = {}   # (package, test) -> when it (or its first subtest) took a lab slot
    wall = {}     # package -> seconds
    spans = {}    # (package, test) -> [start, end] of a top-level test's running (as took)
    first = {}    # package -> its first event's time
    for raw in sys.stdin:
        try:
            ev = json.loads(raw)
        except ValueError:
            sys.stdout.write(raw)  # a build error, printed as go test printed it
            continue
        key = (ev.get('Package', ''), ev.get('Test', ''))
        at = when(ev.get('Time'))
        if at is not None and key[0]:
            first.setdefault(key[0], at)
            if key[1] and '/' not in key[1]:
                act = ev.get('Action')
                if act in ('run', 'cont'):
                    spans.setdefault(key, [at, None])[0] = at
                elif act in ('pass', 'fail', 'skip'):
                    spans.setdefault(key, [at, None])[1] = at
        if ev.get('Action') == 'output':
            line = ev.get('Output', '')
            if key[1]:
                out.setdefault(key, []).append(line)
            slot = SLOT.search(line)
            if slot and key[1] and at is not None:  # a subtest's slot: its test runs from the first
                top = (key[0], key[1].split('/')[0])
                if top not in waited:
                    waited[top] = at
                    spans.setdefault(top, [at, None])[0] = at
            if KEEP.match(line) and not SUBTEST_PASSED.match(line):
                sys.stdout.write(line)
                sys.stdout.flush()
        elif ev.get('Action') == 'fail' and key[1]:
            failed.append(key)
        if ev.get('Action') in ('pass', 'fail') and 'Elapsed' in ev:
            if not key[1]:
                wall[key[0]] = ev['Elapsed']
            elif '/' not in key[1]:
                took[key] = ev['Elapsed'] if key not in waited or at is None else at - waited[key]
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
        rest = sorted(((secs, test) for (_, test), secs in took.items() if secs >= 1), reverse=True)[SLOWEST:]
        if rest:  # integration/slots_test.go's longestFirst ranks tests by these
            print('  then: ' + ', '.join(f'{test} {secs:.1f}' for secs, test in rest))
    for pkg in sorted(wall):
        together(pkg, {t: v for (p, t), v in spans.items() if p == pkg and v[1] is not None}, first[pkg])
    if failed:
        print('\n===== why each failed test failed (its own messages; everything it printed is above) =====')
        for pkg, test in failed:
            print(f'{test}:')
            sys.stdout.write(''.join(why(out.get((pkg, test), []))))
    sys.stdout.flush()


def why(lines):
    """A failed test's own messages, each with the lines that continue it, without the logs it
    dumped and the times of its commands: the last WHY_LINES of them."""
    kept, keep = [], False
    for line in lines:
        m = TEST_LINE.match(line)
        if m:
            keep = not NOT_WHY.match(m.group(1))
        elif not line.startswith('        '):  # a continuation is indented deeper than the message
            keep = False
        if keep:
            kept.append(line)
    return kept[-WHY_LINES:]


def when(text):
    """The time of an event (None when it has none or it does not parse)."""
    if not text:
        return None
    try:
        return datetime.datetime.fromisoformat(text.replace('Z', '+00:00')).timestamp()
    except ValueError:
        return None


def together(pkg, spans, start, tail=4):
    """Prints how many of a package's tests ran at once, for how long: the time with one, two,
    three… running, the head of tests that ran one after another before the parallel ones
    resumed, and the tests that ran last (whose end is the package's)."""
    if len(spans) < 2:
        return
    edges = sorted([(a, 1) for a, _ in spans.values()] + [(b, -1) for _, b in spans.values()])
    held, running, last = {}, 0, edges[0][0]
    for t, d in edges:
        held[running] = held.get(running, 0) + t - last
        running, last = running + d, t
    order = sorted(spans.items(), key=lambda kv: kv[1][0])
    head = 0
    for i, (_, (a, b)) in enumerate(order):  # one after another while none overlaps the next
        if i + 1 < len(order) and order[i + 1][1][0] >= b - 0.5:
            head = i + 1
        else:
            break
    print(f'\n===== how the {len(spans)} tests of {pkg.rsplit("/", 1)[-1]} ran at once =====')
    print('  ' + ', '.join(f'{n} at once {secs:.0f} s' for n, secs in sorted(held.items()) if n > 0 and secs >= 0.5))
    if head:
        print(f'  one after another first: {head} tests, {order[head - 1][1][1] - order[0][1][0]:.0f} s')
    for test, (a, b) in sorted(spans.items(), key=lambda kv: kv[1][1])[-tail:]:
        print(f'  {a - start:7.1f} s to {b - start:7.1f} s  {test}')


if __name__ == '__main__':
    main()
