#!/usr/bin/env python3
"""Coverage sweep over the example models of a Modelica library (the MSL by default).

Finds every example model (every non-partial model, block or class below a package named
`Examples`, at any depth, in directories, files or packages nested in files), runs
`moss simulate` on each in a temporary directory with a time limit, compares the result with
the Modelica Association reference (tube method, the signals of comparisonSignals.txt) when
one exists, and writes a Markdown report. Python 3.11 standard library only.

Run it through scripts/msl-coverage.sh, which sets the defaults; `--help` lists the options.
Progress is kept in a JSON-lines state file, so an interrupted sweep continues with
`--resume` and the report can be rebuilt from it with `--report-only`.
"""

from __future__ import annotations

import argparse
import collections
import dataclasses
import json
import os
import re
import resource
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# ---------------------------------------------------------------------------------------------
# Finding the example models
# ---------------------------------------------------------------------------------------------

TOKEN = re.compile(
    r"""
      (?P<skip>\s+|//[^\n]*|/\*.*?\*/)
    | (?P<str>"(?:\\.|[^"\\])*")
    | (?P<id>[A-Za-z_][A-Za-z0-9_]*|'(?:\\.|[^'\\])*')
    | (?P<num>(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)
    | (?P<op>:=|[-+*/^=<>(){}\[\];,.:])
    | (?P<other>.)
    """,
    re.S | re.X,
)

CLASS_KINDS = {"model", "block", "class", "package", "connector", "record", "function", "type"}
CLASS_PREFIXES = {
    "partial", "encapsulated", "final", "redeclare", "replaceable", "inner", "outer",
    "expandable", "pure", "impure", "operator",
}
# A class keyword after one of these is part of an expression (`f = function g(x = 1)`).
NOT_A_DEFINITION_AFTER = {"=", "(", ",", ":="}
EXPERIMENT_KEYS = ("StartTime", "StopTime", "Interval", "Tolerance")


@dataclasses.dataclass
class ClassInfo:
    """One class definition found in the source."""

    name: str  # full name, e.g. Modelica.Blocks.Examples.PID_Controller
    kind: str  # model, block, package, ... (`operator record` gives record)
    partial: bool
    experiment: dict[str, float] | None = None  # the numbers of its experiment annotation


def tokens(text: str):
    """(kind, text) pairs of Modelica source, without white space and comments."""
    for m in TOKEN.finditer(text):
        kind = m.lastgroup
        if kind != "skip":
            yield kind, m.group()


def _number(toks: list[tuple[str, str]], i: int) -> tuple[float | None, int]:
    """A numeric literal with an optional sign at toks[i]; the value (or None if the value
    is an expression) and the index after it."""
    sign = 1.0
    if toks[i][1] in "+-" and toks[i][0] == "op":
        sign = -1.0 if toks[i][1] == "-" else 1.0
        i += 1
    if toks[i][0] == "num" and toks[i + 1][1] in {",", ")"}:
        return sign * float(toks[i][1]), i + 1
    return None, i


def scan_source(text: str, within: str) -> list[ClassInfo]:
    """Every class defined in one file, with full names under the package `within`."""
    toks = list(tokens(text)) + [("eof", "")] * 3
    found: list[ClassInfo] = []
    # Open classes: (simple name, info, paren depth where a short definition ends or None).
    stack: list[tuple[str, ClassInfo, int | None]] = []
    depth = 0
    i = 0
    while i < len(toks):
        kind, tok = toks[i]
        if kind == "op":
            if tok == "(":
                depth += 1
            elif tok == ")":
                depth -= 1
            elif tok == ";" and stack and stack[-1][2] == depth:
                stack.pop()  # the end of a short class definition
            i += 1
            continue
        if kind != "id":
            i += 1
            continue
        prev = toks[i - 1][1] if i > 0 else ";"
        if tok in CLASS_KINDS or (tok == "operator" and toks[i + 1][1] in {"record", "function"}):
            # Inside parentheses a class keyword is an expression or a redeclaration in a
            # modifier (`pipe(redeclare package Medium = Medium)`), not a definition.
            if prev in NOT_A_DEFINITION_AFTER or depth > 0:
                i += 1
                continue
            prefixes = set()
            j = i - 1
            while j >= 0 and toks[j][0] == "id" and toks[j][1] in CLASS_PREFIXES:
                prefixes.add(toks[j][1])
                j -= 1
            class_kind = tok
            if tok == "operator":
                i += 1
                class_kind = toks[i][1]
            i += 1
            if toks[i][1] == "extends":  # `model extends Base ... end Base;`
                i += 1
            name = toks[i][1]
            if toks[i][0] != "id":
                continue
            outer = stack[-1][1].name if stack else within
            info = ClassInfo(f"{outer}.{name}" if outer else name, class_kind, "partial" in prefixes)
            found.append(info)
            short = toks[i + 1][1] == "="
            stack.append((name, info, depth if short else None))
            i += 1
            continue
        if tok == "end" and toks[i + 1][0] == "id" and toks[i + 2][1] == ";":
            name = toks[i + 1][1]
            names = [entry[0] for entry in stack]
            if name in names:
                del stack[len(names) - 1 - names[::-1].index(name):]
            i += 3
            continue
        if tok == "experiment" and toks[i + 1][1] == "(" and prev in {"(", ","} and stack:
            values: dict[str, float] = {}
            j = i + 2
            while toks[j][0] == "id" and toks[j + 1][1] == "=":
                value, j = _number(toks, j + 2)
                if value is not None and toks[j - 2][1] in EXPERIMENT_KEYS:
                    values[toks[j - 2][1]] = value
                elif value is None:
                    # An expression: skip to the next `,` or `)` at this level.
                    level = 0
                    while toks[j][0] != "eof":
                        if toks[j][1] == "(":
                            level += 1
                        elif toks[j][1] == ")":
                            if level == 0:
                                break
                            level -= 1
                        elif toks[j][1] == "," and level == 0:
                            break
                        j += 1
                if toks[j][1] == ",":
                    j += 1
            stack[-1][1].experiment = values
        i += 1
    return found


def scan_library(path: Path, within: str = "") -> list[ClassInfo]:
    """Every class of a library stored as a directory tree (package.mo, one file per class,
    subdirectories for subpackages) or as a single file."""
    if path.is_file():
        return scan_source(path.read_text(encoding="utf-8", errors="replace"), within)
    package = path / "package.mo"
    if not package.is_file():
        return []
    found = scan_source(package.read_text(encoding="utf-8", errors="replace"), within)
    full = f"{within}.{path.name}" if within else path.name
    for entry in sorted(path.iterdir()):
        if entry.is_dir() or (entry.suffix == ".mo" and entry.name != "package.mo"):
            found += scan_library(entry, full)
    return found


def example_models(classes: list[ClassInfo]) -> list[ClassInfo]:
    """Non-partial models, blocks and classes inside a package named `Examples`."""
    return sorted(
        (
            c
            for c in classes
            if c.kind in {"model", "block", "class"}
            and not c.partial
            and "Examples" in c.name.split(".")[:-1]
        ),
        key=lambda c: c.name,
    )


def package_of(model: str) -> str:
    """The library package an example belongs to: its name up to the first `Examples`."""
    parts = model.split(".")
    return ".".join(parts[: parts.index("Examples")]) if "Examples" in parts else parts[0]


# ---------------------------------------------------------------------------------------------
# References
# ---------------------------------------------------------------------------------------------


@dataclasses.dataclass
class Reference:
    """Where the reference of one model is, if anywhere."""

    csv: Path | None  # the reference result, None when it is not available
    signals: Path | None  # comparisonSignals.txt
    missing: bool  # the reference exists upstream but its CSV is not here
    # When the current CSV is missing and an earlier release of the references has one (see
    # scripts/earlier_references.py): which release, e.g. "commit 2ea98d39, v4.0.0-beta.2".
    earlier: str | None = None
    # With an earlier reference: the current comparisonSignals.txt, whose list (the MA's
    # present choice: signals that are rounding noise are switched off) decides.
    current_signals: Path | None = None


def find_reference(refs: Path | None, model: str, earlier: Path | None = None) -> Reference:
    """The MAP-LIB layout: <refs>/<A>/<B>/.../<Short>/<Short>.csv and comparisonSignals.txt.
    `earlier` is a folder of the same layout with earlier references for missing CSVs."""
    if refs is None:
        return Reference(None, None, False)
    folder = refs.joinpath(*model.split("."))
    csv = folder / f"{model.rsplit('.', 1)[-1]}.csv"
    signals = folder / "comparisonSignals.txt"
    has_signals = signals.is_file()
    if csv.is_file() and not _is_pointer(csv):
        return Reference(csv, signals if has_signals else None, False)
    missing = has_signals or csv.exists()
    if missing and earlier is not None:
        found = find_reference(earlier, model)
        provenance = found.csv.parent / "provenance.txt" if found.csv else None
        if found.csv is not None and provenance is not None and provenance.is_file():
            current = signals if has_signals else None
            return Reference(found.csv, found.signals, True, earlier_label(provenance), current)
    return Reference(None, signals if has_signals else None, missing)


def earlier_label(provenance: Path) -> str:
    """"commit 2ea98d39, v4.0.0-beta.2" from a provenance.txt (commit, then subject)."""
    commit, _, subject = provenance.read_text(encoding="utf-8").partition("\n")
    release = re.search(r"(?:MSL ?)?v?\d+\.\d+(?:\.\d+)?[-+.\w]*|maint\\?/?[\d.x]+", subject)
    label = release.group(0).rstrip(".") if release else ""
    return f"commit {commit.strip()[:8]}" + (f", {label}" if label else "")


def _is_pointer(path: Path) -> bool:
    """A Git LFS pointer stored instead of the data."""
    with open(path, "rb") as f:
        return f.read(40).startswith(b"version https://git-lfs")


def reference_times(csv: Path) -> tuple[float, float, float | None]:
    """Start, stop and output interval of a reference: its first and last time and the most
    common step between distinct times (rounded to 6 digits, the references are often
    written in single precision)."""
    times: list[float] = []
    with open(csv, encoding="utf-8", errors="replace") as f:
        next(f)  # the header
        for line in f:
            head = line.split(",", 1)[0].strip()
            if head:
                times.append(float(head))
    steps = collections.Counter(
        float(f"{b - a:.6g}") for a, b in zip(times, times[1:]) if b > a
    )
    interval = steps.most_common(1)[0][0] if steps else None
    return times[0], times[-1], interval


def reference_tolerance(csv: Path) -> float | None:
    """The relative tolerance the reference was computed with, from the `creation.txt` beside
    it (`Tolerance=1e-07 // used annotation from model, multiplied by 0.1`): the MA's tool
    ran many examples at a tenth of their annotation's tolerance, and a comparison repeats
    the reference's own experiment."""
    creation = csv.parent / "creation.txt"
    if not creation.is_file():
        return None
    for line in creation.read_text(encoding="utf-8", errors="replace").splitlines():
        key, _, rest = line.partition("=")
        if key.strip() == "Tolerance":
            try:
                return float(rest.split("//", 1)[0].strip())
            except ValueError:
                return None
    return None


def read_signals(path: Path | None) -> list[str]:
    """The signals of a comparisonSignals.txt, as `moss compare` reads them."""
    if path is None:
        return []
    names = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        line = line.strip()
        if line and not line.startswith(("#", "//")):
            names.append(line)
    if names and names[0].lower() == "time":
        names = names[1:]
    return names


def name_pattern(names: list[str]) -> str:
    """A regular expression for `moss simulate --vars` matching exactly these names."""
    return "|".join(re.sub(r"([\\.\[\]\(\)\{\}*+?|^$])", r"\\\1", n) for n in names)


# ---------------------------------------------------------------------------------------------
# Running one model
# ---------------------------------------------------------------------------------------------


@dataclasses.dataclass
class Outcome:
    """The result of one example: status is one of STATUSES."""

    model: str
    status: str
    reason: str
    seconds: float


STATUSES = ("in tube", "off tube", "failing", "no reference")
UNAVAILABLE = "reference unavailable locally"
EARLIER = "against an earlier MA reference"


def first_error(output: str) -> str:
    """The first `error` line of moss's output, else its last line."""
    lines = [l.strip() for l in output.splitlines() if l.strip()]
    for line in lines:
        if line.startswith("error"):
            return line.removeprefix("error:").strip()
    return lines[-1] if lines else "no output"


NOISE_ONLY = (
    "; inside with csv-compare 2.1's value floor of 0.001 (the failing signals are zero up to"
    " rounding noise)"
)


def passes_with_value_floor(cmd: list, cwd, timeout: float) -> bool:
    """Whether the comparison passes with csv-compare 2.1's floor of the value range: the
    status stays "off tube" (moss compares as strictly as csv-compare 2.0.3), the reason says
    the failure is noise of a signal that is zero."""
    try:
        run = subprocess.run(
            cmd + ["--value-floor", "0.001"], cwd=cwd, capture_output=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        return False
    return run.returncode == 0


def csv_columns(csv: Path) -> set[str]:
    """The column names of a reference CSV (its header, quotes removed)."""
    with open(csv, encoding="utf-8", errors="replace") as f:
        return {c.strip().strip('"') for c in f.readline().split(",")}


def older_version_reason(cmd: list, cwd, timeout: float) -> str:
    """Why an earlier reference belongs to an older version of the example, or "": it names
    variables the current example does not have (a renamed or removed component)."""
    try:
        run = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return ""
    missing = [l.split()[0] for l in run.stdout.splitlines()[1:] if "MISSING" in l]
    return f"it names {', '.join(missing[:3])}, which the example lacks" if missing else ""


def compare_reason(output: str) -> str:
    """Which signals leave the tube, from the table `moss compare` prints."""
    failing = []
    for line in output.splitlines()[1:]:
        words = line.split()
        if len(words) < 2 or line.startswith(("PASSED", "FAILED", "plot:")):
            continue
        name, status = words[0], " ".join(words[1:])
        if status.startswith("pass"):
            continue
        if words[1] == "FAIL" and len(words) == 5:
            failing.append(f"{name} (from t = {float(words[4]):g})")
        elif status.startswith("MISSING"):
            failing.append(f"{name} (missing)")
        else:
            failing.append(f"{name} ({status.removeprefix('FAIL: ').lower()})")
    total = sum(
        1 for l in output.splitlines()[1:] if l.split() and not l.startswith(("PASSED", "FAILED"))
    )
    shown = ", ".join(failing[:4]) + (f", ... ({len(failing) - 4} more)" if len(failing) > 4 else "")
    return f"{len(failing)} of {total} signals off: {shown}" if failing else first_error(output)


def limit_memory(gib: float):
    """A function for `preexec_fn` that caps the address space of the child at `gib` GiB (a
    runaway model must not take the memory of a shared machine)."""

    def apply():
        size = int(gib * 2**30)
        resource.setrlimit(resource.RLIMIT_AS, (size, size))

    return apply


def run_model(
    moss: Path, model: str, ref: Reference, timeout: float, tolerance: float, memory: float
) -> Outcome:
    """Simulate `model` in a fresh temporary directory (models write files of their own) and
    compare it with its reference."""
    with tempfile.TemporaryDirectory(prefix="moss-coverage-") as tmp:
        result = Path(tmp) / "result.mat"
        cmd = [str(moss), "simulate", model, "-o", str(result)]
        signals = read_signals(ref.signals)
        signals += [n for n in read_signals(ref.current_signals) if n not in signals]
        if ref.csv is not None:
            start, stop, interval = reference_times(ref.csv)
            cmd += ["--start-time", repr(start), "--stop-time", repr(stop)]
            if interval is not None:
                cmd += ["--interval", repr(interval)]
            rtol = reference_tolerance(ref.csv)
            if rtol is not None:
                cmd += ["--tolerance", repr(rtol)]
            if signals:
                cmd += ["--vars", name_pattern(signals)]
        began = time.monotonic()
        try:
            run = subprocess.run(
                cmd,
                cwd=tmp,
                capture_output=True,
                text=True,
                errors="replace",
                timeout=timeout,
                preexec_fn=limit_memory(memory),
            )
        except subprocess.TimeoutExpired:
            return Outcome(model, "failing", f"timeout after {timeout:g} s", time.monotonic() - began)
        seconds = time.monotonic() - began
        if run.returncode != 0:
            if run.returncode < 0:
                # The first words of the process say why (a panic, a failed allocation); a
                # backtrace may follow.
                words = [l.strip() for l in run.stderr.splitlines() if l.strip()][:1]
                reason = f"killed by {signal.Signals(-run.returncode).name}" + (
                    f" ({words[0]})" if words else ""
                )
            else:
                reason = first_error(run.stderr + "\n" + run.stdout)
            return Outcome(model, "failing", reason, seconds)
        if ref.csv is None:
            why = UNAVAILABLE if ref.missing else "no reference result"
            return Outcome(model, "no reference", why, seconds)
        cmd = [str(moss), "compare", str(result), str(ref.csv), "--tolerance", str(tolerance)]
        if ref.signals is not None:
            cmd += ["--signals", str(ref.signals)]
        against = f"{EARLIER} ({ref.earlier})" if ref.earlier else ""
        if ref.earlier and ref.current_signals is not None:
            # First whether the earlier file fits the example at all (every signal of its
            # own list exists), then the verdict on the current list's signals it holds.
            older = older_version_reason(cmd, tmp, timeout)
            if older:
                why = f"the earlier one ({ref.earlier}) is of an older version of the example"
                return Outcome(model, "no reference", f"{UNAVAILABLE}; {why}: {older}", seconds)
            current = read_signals(ref.current_signals)
            held = [n for n in current if n in csv_columns(ref.csv)]
            (Path(tmp) / "signals.txt").write_text("\n".join(held) + "\n")
            cmd[-1] = str(Path(tmp) / "signals.txt")
            against += f", the {len(held)} of the v4.1.0 list's {len(current)} signals it holds"
        try:
            cmp = subprocess.run(
                cmd, cwd=tmp, capture_output=True, text=True, errors="replace", timeout=timeout
            )
        except subprocess.TimeoutExpired:
            return Outcome(model, "off tube", "comparison timed out", seconds)
        if cmp.returncode == 0:
            return Outcome(model, "in tube", against, seconds)
        if cmp.returncode == 1 and cmp.stdout.strip():
            reason = compare_reason(cmp.stdout)
            if passes_with_value_floor(cmd, tmp, timeout):
                reason += NOISE_ONLY
            return Outcome(model, "off tube", "; ".join(r for r in (reason, against) if r), seconds)
        return Outcome(
            model, "off tube", "comparison failed: " + first_error(cmp.stderr + cmp.stdout), seconds
        )


# ---------------------------------------------------------------------------------------------
# The report
# ---------------------------------------------------------------------------------------------


# Clauses of moss's messages that only say where something failed; the cause follows them.
CONTEXT_CLAUSE = re.compile(
    r"(simulation failed|during initialization|in the event iteration|in function|argument|"
    r"cannot compile)\b"
)


def reason_class(reason: str) -> str:
    """A failure reason without its particulars, so that equal causes count together: quoted
    names stay when they are single words (`Clock`, `when`), longer quotes (paths,
    expressions), dotted variable names, numbers and remarks in parentheses are left out, and
    of the clauses (separated by `: `) the where-clauses and the first cause are kept."""
    text = re.sub(
        r"`([^`]*)`",
        lambda m: m.group(0) if re.fullmatch(r"[A-Za-z_]\w*", m.group(1)) else "`…`",
        reason,
    )
    # Variable names outside quotes (`der(a.b[2]), c.d`): dotted names with their subscripts.
    text = re.sub(r"(der\()?[A-Za-z_]\w*(\[[^\]]*\])?(\.[A-Za-z_]\w*(\[[^\]]*\])?)+\)?", "…", text)
    text = re.sub(r"\b\d+(\.\d+)?([eE][-+]?\d+)?", "N", text)
    text = re.sub(r"…(, …)+", "…", text)
    text = re.sub(r" ?\bat time N(?=: |$)", "", text).removeprefix(": ").strip()
    kept = []
    for clause in re.split(r": |; ", text):
        kept.append(re.sub(r" \([^()]*\)?", "", clause).strip())
        if not CONTEXT_CLAUSE.match(clause):
            break
    return ": ".join(c for c in kept if c)


def cell(text: str, limit: int = 220) -> str:
    """Text for a Markdown table cell: one line, `|` escaped, shortened to `limit`."""
    text = " ".join(text.split())
    if len(text) > limit:
        text = text[: limit - 1] + "…"
    return text.replace("|", "\\|")


def write_report(
    path: Path,
    outcomes: list[Outcome],
    helpers: list[str],
    header: dict[str, str],
) -> None:
    by_package: dict[str, list[Outcome]] = collections.defaultdict(list)
    for o in sorted(outcomes, key=lambda o: o.model):
        by_package[package_of(o.model)].append(o)
    lines = [
        "# How much of the MSL runs: example coverage",
        "",
        "<!-- Generated by scripts/msl-coverage.sh; do not edit by hand. -->",
        "",
        f"Every example model of {header['library']} (every non-partial model below a package "
        "named `Examples`, at any depth, that has an `experiment` annotation or a reference "
        "result) simulated with `moss simulate` in a temporary directory and, where the "
        "Modelica Association reference result exists, compared with it by `moss compare` on "
        f"the signals of its comparisonSignals.txt (tube tolerance {header['tolerance']}). "
        "With a reference, the start, stop time, output interval and relative tolerance are the reference's "
        "(the tolerance from its creation.txt: the MA ran many examples at a tenth of their annotation's).",
        "",
        f"- moss: commit `{header['commit']}`; {header['library']} {header['version']}; "
        f"references: {header['refs']}",
        f"- limit per model: {header['timeout']} s; swept on {header['date']}, "
        f"{header['elapsed']} of runs in total",
        "- **in tube**: every compared signal stays in the tube; **off tube**: simulates, but "
        "a signal leaves the tube or is missing; **failing**: `moss simulate` fails or times "
        "out; **no reference**: simulates, no reference result to compare with (or the "
        "reference CSV is one of the large files missing from the local snapshot)",
        "- examples whose reference cannot decide a signal (a pole, a chaotic end, rounding "
        "noise), each with the measurement that shows it: [msl-references.md](msl-references.md)",
        "",
        "## Summary per package",
        "",
        "| package | in tube | off tube | failing | no reference | total |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    totals = collections.Counter()
    for package, items in sorted(by_package.items()):
        count = collections.Counter(o.status for o in items)
        totals.update(count)
        lines.append(
            f"| {package} | " + " | ".join(str(count[s]) for s in STATUSES) + f" | {len(items)} |"
        )
    lines.append(
        "| **all** | "
        + " | ".join(f"**{totals[s]}**" for s in STATUSES)
        + f" | **{len(outcomes)}** |"
    )
    unavailable = sum(1 for o in outcomes if o.reason.startswith(UNAVAILABLE))
    if unavailable:
        lines += [
            "",
            f"{unavailable} of the examples without reference have one upstream whose CSV is "
            f"missing from the local snapshot (\"{UNAVAILABLE}\").",
        ]
    earlier = [o for o in outcomes if EARLIER in o.reason]
    if earlier:
        count = collections.Counter(o.status for o in earlier)
        lines += [
            "",
            f"{len(earlier)} examples whose v4.1.0 reference CSV is missing locally are compared "
            "with the newest earlier release of the same reference that the snapshot holds "
            "(scripts/earlier_references.py; the release is named in the reason column): "
            + ", ".join(f"{count[s]} {s}" for s in STATUSES if count[s])
            + ". An earlier reference was computed from an earlier release of the example, so "
            "agreement is evidence, not the v4.1.0 verdict.",
        ]
    failing = [o for o in outcomes if o.status == "failing"]
    reasons = collections.Counter(reason_class(o.reason) for o in failing)
    lines += [
        "",
        "## Most common reasons for failing",
        "",
        "| examples | reason (names and numbers left out) |",
        "|---:|---|",
    ]
    lines += [f"| {n} | {cell(r)} |" for r, n in reasons.most_common(15)]
    lines += ["", "## Every example", ""]
    for package, items in sorted(by_package.items()):
        lines += [
            f"### {package}",
            "",
            "| example | status | reason | time [s] |",
            "|---|---|---|---:|",
        ]
        for o in items:
            short = o.model.removeprefix(package + ".")
            lines.append(f"| {short} | {o.status} | {cell(o.reason)} | {o.seconds:.2f} |")
        lines.append("")
    if helpers:
        lines += [
            "## Not counted",
            "",
            f"{len(helpers)} non-partial models in `Examples` packages have neither an "
            "`experiment` annotation nor a reference result: components the examples use "
            "(`Utilities`, `BaseClasses`, `Components` and the like), not examples themselves.",
            "",
            "<details><summary>the list</summary>",
            "",
        ]
        lines += [f"- {h}" for h in helpers]
        lines += ["", "</details>", ""]
    path.write_text("\n".join(lines).rstrip("\n") + "\n", encoding="utf-8")


# ---------------------------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------------------------


def library_version(msl: Path, library: str) -> str:
    package = msl / library / "package.mo"
    if package.is_file():
        m = re.search(r'\bversion\s*=\s*"([^"]+)"', package.read_text(errors="replace"))
        if m:
            return m.group(1)
    return "(version unknown)"


def git_commit(repo: Path) -> str:
    try:
        out = subprocess.run(
            ["git", "-C", str(repo), "describe", "--always", "--dirty"],
            capture_output=True, text=True, check=True,
        )
        return out.stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def load_state(path: Path) -> dict[str, Outcome]:
    done: dict[str, Outcome] = {}
    if path.is_file():
        for line in path.read_text().splitlines():
            if line.strip():
                o = Outcome(**json.loads(line))
                done[o.model] = o
    return done


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("msl", type=Path, help="directory that contains the library (e.g. Modelica/)")
    ap.add_argument("moss", type=Path, help="the moss binary")
    ap.add_argument("--library", default="Modelica", help="top-level package (default Modelica)")
    ap.add_argument("--refs", type=Path, help="MAP-LIB reference results (folders per model)")
    ap.add_argument(
        "--earlier-refs",
        type=Path,
        help="earlier references for CSVs missing from --refs (scripts/earlier_references.py)",
    )
    ap.add_argument("--timeout", type=float, default=120, help="seconds per model (120)")
    ap.add_argument("--tolerance", type=float, default=0.002, help="tube tolerance (0.002)")
    ap.add_argument("--memory", type=float, default=8, help="GiB of address space per run (8)")
    ap.add_argument("--output", type=Path, help="the Markdown report to write")
    ap.add_argument(
        "--state",
        type=Path,
        default=Path(tempfile.gettempdir()) / "msl-coverage-state.jsonl",
        help="JSON-lines file with one outcome per model (default in the temp directory)",
    )
    ap.add_argument("--resume", action="store_true", help="skip models already in --state")
    ap.add_argument("--report-only", action="store_true", help="only rebuild the report")
    ap.add_argument("--only", help="regular expression: run only the models it matches")
    ap.add_argument("--list", action="store_true", help="list the example models and exit")
    args = ap.parse_args(argv)

    began = time.monotonic()
    classes = scan_library(args.msl / args.library, "")
    if not classes and (args.msl / f"{args.library}.mo").is_file():
        classes = scan_library(args.msl / f"{args.library}.mo", "")
    candidates = example_models(classes)
    examples, helpers = [], []
    for c in candidates:
        ref = find_reference(args.refs, c.name, args.earlier_refs)
        has_ref = ref.csv is not None or ref.signals is not None or ref.missing
        (examples if c.experiment is not None or has_ref else helpers).append(c.name)
    if args.only:
        examples = [m for m in examples if re.search(args.only, m)]
    if args.list:
        print("\n".join(examples))
        return 0

    moss = args.moss.resolve()
    done = load_state(args.state) if (args.resume or args.report_only) else {}
    if not args.report_only:
        if not args.resume:
            args.state.write_text("")
        env_path = os.environ.get("MODELICAPATH", "")
        os.environ["MODELICAPATH"] = str(args.msl.resolve()) + (":" + env_path if env_path else "")
        todo = [m for m in examples if m not in done]
        for k, model in enumerate(todo, 1):
            ref = find_reference(args.refs, model, args.earlier_refs)
            outcome = run_model(moss, model, ref, args.timeout,
                                args.tolerance, args.memory)
            done[model] = outcome
            with open(args.state, "a") as f:
                f.write(json.dumps(dataclasses.asdict(outcome)) + "\n")
            print(f"[{k}/{len(todo)}] {model}: {outcome.status} ({outcome.seconds:.1f} s) "
                  f"{outcome.reason[:150]}", flush=True)
    outcomes = [done[m] for m in examples if m in done]
    if args.output:
        elapsed = sum(o.seconds for o in outcomes)
        header = {
            "library": args.library,
            "version": library_version(args.msl, args.library),
            "commit": git_commit(Path(__file__).resolve().parent),
            "refs": "MAP-LIB_ReferenceResults" if args.refs else "none",
            "timeout": f"{args.timeout:g}",
            "tolerance": f"{args.tolerance:g}",
            "date": time.strftime("%Y-%m-%d"),
            "elapsed": f"{elapsed / 3600:.1f} h" if elapsed > 5400 else f"{elapsed / 60:.0f} min",
        }
        write_report(args.output, outcomes, helpers, header)
        print(f"wrote {args.output} ({len(outcomes)} examples)")
    counts = collections.Counter(o.status for o in outcomes)
    print(", ".join(f"{s}: {counts[s]}" for s in STATUSES) + f" (of {len(outcomes)}); "
          f"{time.monotonic() - began:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
