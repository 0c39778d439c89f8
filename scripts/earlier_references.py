#!/usr/bin/env python3
"""Earlier reference results for the examples whose current reference CSV is missing.

A snapshot of MAP-LIB_ReferenceResults without its large blobs (the fetch tool leaves out
files of 4 MiB and more) lacks the CSV of some 85 MSL examples on branch v4.1.0. Many of
those files were smaller in an earlier release of the references (coarser output, fewer
signals) and their blobs are in the snapshot. This script finds, for every CSV of the branch
whose blob is absent, the newest commit on any branch that has a present blob at the same
path, and writes that CSV with the comparisonSignals.txt and creation.txt of the same commit
into a folder with the MAP-LIB layout, plus `provenance.txt` (commit and subject), which
`msl_coverage.py --earlier-refs` reads.

An earlier reference was computed from an earlier release of the example, so agreement with
it is evidence, not the v4.1.0 verdict; the coverage report says which reference it used.

    python3 scripts/earlier_references.py /path/to/MAP-LIB.git OUTPUT_DIR [--branch v4.1.0]

Python 3.11 standard library only; needs `git`.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path


class Repo:
    def __init__(self, git_dir: Path):
        self.base = ["git", f"--git-dir={git_dir}"]
        self.batch = subprocess.Popen(
            self.base + ["cat-file", "--batch-check"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )

    def run(self, *args: str) -> str:
        return subprocess.run(
            self.base + list(args), capture_output=True, text=True, check=False
        ).stdout

    def show(self, commit: str, path: str) -> bytes | None:
        run = subprocess.run(self.base + ["show", f"{commit}:{path}"], capture_output=True)
        return run.stdout if run.returncode == 0 else None

    def present(self, blob: str) -> bool:
        """Whether the snapshot has the blob's content (not only its name in a tree)."""
        assert self.batch.stdin and self.batch.stdout
        self.batch.stdin.write(blob + "\n")
        self.batch.stdin.flush()
        return not self.batch.stdout.readline().rstrip().endswith("missing")


def missing_csvs(repo: Repo, branch: str) -> list[str]:
    """Reference CSVs of `branch` whose blobs the snapshot lacks."""
    missing = []
    for line in repo.run("ls-tree", "-r", branch).splitlines():
        meta, path = line.split("\t", 1)
        blob = meta.split()[2]
        if path.endswith(".csv") and not repo.present(blob):
            missing.append(path)
    return missing


# A reference with fewer rows than this cannot check a trajectory: one update of the
# references (MSL issue 4340) wrote files with only the start and end rows.
MIN_ROWS = 10


def newest_present_version(repo: Repo, path: str) -> tuple[str, str] | None:
    """The newest commit (on any branch) whose blob at `path` is present and holds a
    trajectory: (commit, subject)."""
    for line in repo.run("log", "--all", "--format=%H %s", "--", path).splitlines():
        commit, _, subject = line.partition(" ")
        listing = repo.run("ls-tree", commit, "--", path).split()
        if len(listing) < 3 or not repo.present(listing[2]):
            continue
        data = repo.show(commit, path) or b""
        if data.count(b"\n") > MIN_ROWS:
            return commit, subject
    return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("git_dir", type=Path, help="the MAP-LIB_ReferenceResults git directory")
    ap.add_argument("output", type=Path, help="folder to write the earlier references into")
    ap.add_argument("--branch", default="v4.1.0", help="the branch of the current references")
    args = ap.parse_args(argv)

    repo = Repo(args.git_dir)
    missing = missing_csvs(repo, args.branch)
    found = 0
    for path in missing:
        version = newest_present_version(repo, path)
        if version is None:
            continue
        commit, subject = version
        folder = path.rsplit("/", 1)[0]
        target = args.output / folder
        target.mkdir(parents=True, exist_ok=True)
        for name in (path.rsplit("/", 1)[1], "comparisonSignals.txt", "creation.txt"):
            data = repo.show(commit, f"{folder}/{name}")
            if data is not None:
                (target / name).write_bytes(data)
        (target / "provenance.txt").write_text(f"{commit}\n{subject}\n")
        found += 1
        print(f"{path}: {commit[:8]} {subject[:70]}")
    print(f"{len(missing)} CSVs missing on {args.branch}; an earlier version of {found} written")
    return 0


if __name__ == "__main__":
    sys.exit(main())
