"""Tests of the reference lookup of the coverage sweep: earlier references found in the
history of a MAP-LIB-like repository whose newest CSV blob is absent (as in a snapshot
without large files), and how the sweep picks them up."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import earlier_references  # noqa: E402
import msl_coverage  # noqa: E402

FOLDER = "Modelica/Pkg/Examples/Demo"


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True
    ).stdout


def trajectory(rows: int, scale: float) -> str:
    lines = ['"time","x"'] + [f"{t / 10},{scale * t}" for t in range(rows)]
    return "\n".join(lines) + "\n"


def commit_reference(repo: Path, csv: str, signals: str, message: str) -> None:
    folder = repo / FOLDER
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "Demo.csv").write_text(csv)
    (folder / "comparisonSignals.txt").write_text(signals)
    (folder / "creation.txt").write_text("Tolerance=1e-07 // set by user\n")
    git(repo, "add", "-A")
    git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", message)


def make_history(tmp: Path) -> Path:
    """Three versions: a good one (v1.0), a degenerate two-row one (an update gone wrong) and
    the newest (v2.0) whose blob is then removed, as a snapshot without large files has it."""
    repo = tmp / "refs"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    commit_reference(repo, trajectory(50, 1.0), "time\nx\n// y\n", "results based on v1.0")
    commit_reference(repo, trajectory(2, 0.0), "time\nx\n", "broken update")
    commit_reference(repo, trajectory(200, 1.0), "time\nx\n", "results based on v2.0")
    newest = git(repo, "rev-parse", f"HEAD:{FOLDER}/Demo.csv").strip()
    (repo / ".git" / "objects" / newest[:2] / newest[2:]).unlink()
    return repo


def test_the_newest_present_trajectory_is_taken(tmp_path: Path) -> None:
    repo = make_history(tmp_path)
    out = tmp_path / "earlier"
    assert earlier_references.main([str(repo / ".git"), str(out), "--branch", "main"]) == 0
    written = out / FOLDER / "Demo.csv"
    # The degenerate update is skipped, v1.0 (50 rows) is taken.
    assert written.read_text() == trajectory(50, 1.0)
    assert (out / FOLDER / "comparisonSignals.txt").read_text() == "time\nx\n// y\n"
    provenance = (out / FOLDER / "provenance.txt").read_text().splitlines()
    assert provenance[1] == "results based on v1.0"


def test_the_sweep_uses_an_earlier_reference_only_for_a_missing_csv(tmp_path: Path) -> None:
    repo = make_history(tmp_path)
    earlier = tmp_path / "earlier"
    earlier_references.main([str(repo / ".git"), str(earlier), "--branch", "main"])
    # The current references: the signal list is there, the CSV is not.
    current = tmp_path / "current"
    (current / FOLDER).mkdir(parents=True)
    (current / FOLDER / "comparisonSignals.txt").write_text("time\nx\n")
    model = FOLDER.replace("/", ".")

    without = msl_coverage.find_reference(current, model)
    assert without.csv is None and without.missing

    ref = msl_coverage.find_reference(current, model, earlier)
    assert ref.csv == earlier / FOLDER / "Demo.csv"
    assert ref.earlier is not None and ref.earlier.endswith(", v1.0")
    assert ref.current_signals == current / FOLDER / "comparisonSignals.txt"
    assert msl_coverage.csv_columns(ref.csv) == {"time", "x"}

    # A present current CSV wins over any earlier one.
    (current / FOLDER / "Demo.csv").write_text(trajectory(20, 1.0))
    ref = msl_coverage.find_reference(current, model, earlier)
    assert ref.csv == current / FOLDER / "Demo.csv" and ref.earlier is None
