#!/usr/bin/env python3
"""List the apex heights of a bouncing ball from moss CSV results.

Usage: bounce_apexes.py RESULT.csv [SIGNAL]   (SIGNAL defaults to ball.s)

Prints every local maximum of SIGNAL after the first impact and the ratio of successive
heights above the contact point s = 0.05 m, which should be e^2 for a coefficient of
restitution e (0.9086^2 = 0.8256 for the bouncing-ball examples).
"""
import csv
import sys

CONTACT = 0.05


def read_signal(path, name):
    with open(path, newline="") as f:
        rows = csv.reader(f)
        header = next(rows)
        if name not in header:
            sys.exit(f"{path}: no column named {name!r} (columns: {', '.join(header[:8])} ...)")
        it, iy = header.index("time"), header.index(name)
        return [(float(r[it]), float(r[iy])) for r in rows if r]


def apexes(points):
    found = []
    for (t0, y0), (t1, y1), (t2, y2) in zip(points, points[1:], points[2:]):
        if y1 > y0 and y1 >= y2 and y1 > CONTACT + 1e-3:
            found.append((t1, y1))
    return found


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    name = sys.argv[2] if len(sys.argv) > 2 else "ball.s"
    peaks = apexes(read_signal(sys.argv[1], name))
    previous = None
    for t, y in peaks:
        height = y - CONTACT
        ratio = f"  ratio {height / previous:.4f}" if previous else ""
        print(f"t = {t:8.4f} s  apex {y:.4f} m{ratio}")
        previous = height


if __name__ == "__main__":
    main()
