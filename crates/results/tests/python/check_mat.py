"""Check that a moss .mat result reads correctly with scipy.io.loadmat and DyMat.

Usage: python3 check_mat.py RESULT.mat EXPECTED.csv

EXPECTED.csv holds the same result written by moss's CSV writer (all variables expanded,
shortest round-trip numbers), so every value must match exactly. Exit status 0 when all checks
pass, 1 with a message per failed check otherwise, 2 when scipy or DyMat is missing.
"""

import csv
import sys

try:
    import numpy
    import scipy.io
    import DyMat
except ImportError as err:  # pragma: no cover - depends on the machine
    print(f"check_mat.py: {err}; install with: python3 -m pip install scipy DyMat")
    sys.exit(2)

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)


def read_expected(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    names = rows[0]
    columns = {n: numpy.array([float(r[i]) for r in rows[1:]]) for i, n in enumerate(names)}
    return names, columns


def check_scipy_layout(path, names):
    mat = scipy.io.loadmat(path, chars_as_strings=False)
    aclass = ["".join(row).rstrip() for row in mat["Aclass"]]
    check(aclass == ["Atrajectory", "1.1", "", "binTrans"], f"Aclass is {aclass}")
    stored = ["".join(col).rstrip() for col in zip(*mat["name"])]
    check(stored == names, f"name matrix holds {stored}, expected {names}")
    info = mat["dataInfo"]
    check(info.dtype == numpy.int32, f"dataInfo has type {info.dtype}, expected int32")
    check(info.shape == (4, len(names)), f"dataInfo shape {info.shape}")
    check(list(info[:, 0]) == [0, 1, 0, -1], f"dataInfo of time is {list(info[:, 0])}")
    for key in ("data_1", "data_2"):
        check(mat[key].dtype == numpy.float64, f"{key} has type {mat[key].dtype}")
    return mat


def check_dymat_values(path, names, columns, mat):
    result = DyMat.DyMatFile(path)
    time = columns["time"]
    absc = result.abscissa(2, valuesOnly=True)
    check(numpy.array_equal(absc, time), "DyMat abscissa differs from time")
    check(set(result.names()) == set(names[1:]), f"DyMat names {sorted(result.names())}")
    for name in names[1:]:
        expected = columns[name]
        values = result.data(name)
        if result.block(name) == 1:
            check(len(values) == 2, f"{name}: {len(values)} values in data_1")
            check(values[0] == expected[0] and values[-1] == expected[-1],
                  f"{name}: data_1 values {values} differ from {expected[0]}")
        else:
            check(numpy.array_equal(values, expected), f"{name}: trajectory differs")
    # Aliases: shared data columns with the sign stored in dataInfo.
    info = mat["dataInfo"]
    negated = [names[j] for j in range(len(names)) if info[1, j] < 0]
    check(len(negated) > 0, "the fixture should contain a negated alias")
    for name in negated:
        shared = dict(result.sharedData(name))
        check(any(sign < 0 for sign in shared.values()),
              f"{name}: DyMat sees no negated partner in {shared}")


def main(argv):
    if len(argv) != 3:
        print(__doc__)
        return 2
    path, expected_path = argv[1], argv[2]
    names, columns = read_expected(expected_path)
    mat = check_scipy_layout(path, names)
    check_dymat_values(path, names, columns, mat)
    for message in failures:
        print(f"check_mat.py: {message}")
    if not failures:
        print(f"check_mat.py: {path}: {len(names)} variables read correctly by scipy and DyMat")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
