#!/usr/bin/env python3
"""Copy reference results into the repository, reduced to what the tube comparison needs.

Usage: trim_references.py SOURCE_DIR TARGET_DIR

SOURCE_DIR holds one folder per model in the MAP-LIB layout (`<Model>/<Short>.csv`,
`<Model>/comparisonSignals.txt`, where <Short> is the last part of the model name). For every
such folder this writes `TARGET_DIR/<Model>/<Short>.csv` with only the `time` column and the
columns named in comparisonSignals.txt (in that order), and a copy of comparisonSignals.txt.

Values are copied as text, exactly as they are in the source, and every row is kept (the two
rows with the same time at an event included), so the trimmed file compares exactly like the
original. A signal listed in comparisonSignals.txt but missing from the CSV is an error.
"""

import csv
import os
import sys


def read_signals(path):
    """Signal names of a comparisonSignals.txt, without the leading `time` line."""
    with open(path, encoding="utf-8") as f:
        names = [line.strip() for line in f if line.strip()]
    if names and names[0] == "time":
        names = names[1:]
    return names


def trim_csv(source, target, signals):
    """Write the time column and the given signal columns of `source` to `target`."""
    with open(source, newline="", encoding="utf-8") as f:
        reader = csv.reader(f)
        header = next(reader)
        index = {name.strip(): i for i, name in enumerate(header)}
        missing = [s for s in ["time"] + signals if s not in index]
        if missing:
            raise SystemExit(f"{source}: no column for {', '.join(missing)}")
        columns = [index["time"]] + [index[s] for s in signals]
        with open(target, "w", newline="", encoding="utf-8") as out:
            out.write(",".join(f'"{header[c].strip()}"' for c in columns) + "\n")
            rows = 0
            for row in reader:
                if not row:
                    continue
                out.write(",".join(row[c].strip() for c in columns) + "\n")
                rows += 1
    return rows


def main():
    if len(sys.argv) != 3:
        raise SystemExit(__doc__.strip().splitlines()[2])
    source_dir, target_dir = sys.argv[1], sys.argv[2]
    for model in sorted(os.listdir(source_dir)):
        folder = os.path.join(source_dir, model)
        short = model.rsplit(".", 1)[-1]
        csv_path = os.path.join(folder, f"{short}.csv")
        signals_path = os.path.join(folder, "comparisonSignals.txt")
        if not (os.path.isfile(csv_path) and os.path.isfile(signals_path)):
            continue
        signals = read_signals(signals_path)
        out_folder = os.path.join(target_dir, model)
        os.makedirs(out_folder, exist_ok=True)
        rows = trim_csv(csv_path, os.path.join(out_folder, f"{short}.csv"), signals)
        with open(os.path.join(out_folder, "comparisonSignals.txt"), "w", encoding="utf-8") as f:
            f.write("\n".join(["time"] + signals) + "\n")
        print(f"{model}: {len(signals)} signals, {rows} rows")


if __name__ == "__main__":
    main()
