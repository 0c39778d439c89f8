//! External C functions of the MSL's support library that moss runs natively, declared the
//! way libraries declare them, and `when`-statements in algorithms driven by `sample`.

use crate::library_support;

use library_support::{assert_close, scratch_dir, simulate_target, Trajectories};

const SPECTRUM: &str = r#"
model Spectrum "Samples 3 + 2*cos(2*pi*5*t + 0.3) 64 times per second, transforms it at the end"
  function rawRealFFT
    input Real u[:];
    output Integer info;
    output Real amplitudes[div(size(u, 1), 2) + 1];
    output Real phases[div(size(u, 1), 2) + 1];
  protected
    Real work[3*size(u, 1) + 2*(div(size(u, 1), 2) + 1)];
  external "C" info = ModelicaFFT_kiss_fftr(u, size(u, 1), work, size(work, 1), amplitudes, phases);
  end rawRealFFT;
  function writeRealMatrix
    input String fileName;
    input String matrixName;
    input Real matrix[:, :];
    input Boolean append = false;
    input String format = "4";
    output Boolean success;
  external "C" success = ModelicaIO_writeRealMatrix(fileName, matrixName, matrix, size(matrix, 1), size(matrix, 2), append, format);
  end writeRealMatrix;
  parameter Integer ns = 64;
  Real u = 3 + 2*cos(2*Modelica.Constants.pi*5*time + 0.3);
  Real buf[ns](each start = 0, each fixed = true);
  Integer iTick(start = 0, fixed = true);
  Integer info(start = -1, fixed = true);
  Real a0(start = 0, fixed = true);
  Real a5(start = 0, fixed = true);
  Real p5(start = 0, fixed = true);
  Boolean written(start = false, fixed = true);
  Boolean trigger = sample(0, 1/ns) "as the MSL's discrete blocks do";
protected
  Real amplitudes[div(ns, 2) + 1];
  Real phases[div(ns, 2) + 1];
algorithm
  when {trigger} then
    iTick := pre(iTick) + 1;
    if iTick <= ns then
      buf[iTick] := u;
    end if;
  end when;
  when time >= 1.01 then
    (info, amplitudes, phases) := rawRealFFT(buf);
    a0 := amplitudes[1];
    a5 := amplitudes[6];
    p5 := phases[6];
    written := writeRealMatrix("spectrum.mat", "A", [amplitudes, phases]);
  end when;
  annotation(experiment(StopTime = 1.1, Interval = 0.01));
end Spectrum;
"#;

fn run_spectrum() -> (Trajectories, std::path::PathBuf) {
    let dir = scratch_dir("Spectrum");
    std::fs::write(dir.join("Spectrum.mo"), SPECTRUM).expect("writable scratch folder");
    let run = simulate_target("Spectrum.mo", &dir, &[]);
    (run, dir)
}

/// 64 samples of one second: the sample `when` in the algorithm fires 64 times before the
/// transform (one edge per sample instant), and the DFT shows the mean and the 5 Hz line.
#[test]
fn fft_of_sampled_cosine_shows_its_mean_and_its_line() {
    let (run, _) = run_spectrum();
    let nf = 33.0;
    // samples at k/64 s for k = 0 .. 70 (stop time 1.1 s): one count per sample edge
    assert_eq!(
        run.last("iTick"),
        71.0,
        "sample edges counted by the algorithm"
    );
    assert_eq!(run.last("info"), 0.0);
    assert_close("DC amplitude", run.last("a0"), 3.0 * 64.0 / nf, 1e-9);
    assert_close("5 Hz amplitude", run.last("a5"), 64.0 / nf, 1e-9);
    assert_close("5 Hz phase", run.last("p5"), 0.3, 1e-9);
}

/// The spectrum written with `ModelicaIO_writeRealMatrix` is a MATLAB v4 file that moss's
/// own reader sees as one 33 x 2 matrix.
#[test]
fn write_real_matrix_stores_a_mat_v4_matrix() {
    let (run, dir) = run_spectrum();
    assert_eq!(run.last("written"), 1.0);
    let bytes = std::fs::read(dir.join("spectrum.mat")).expect("spectrum.mat written");
    let header: Vec<i32> = (0..5)
        .map(|i| i32::from_le_bytes(bytes[4 * i..4 * i + 4].try_into().expect("4 bytes")))
        .collect();
    assert_eq!(header, [0, 33, 2, 0, 2]);
    assert_eq!(&bytes[20..22], b"A\0");
    assert_eq!(bytes.len(), 22 + 8 * 66);
    let value = |k: usize| f64::from_le_bytes(bytes[22 + 8 * k..30 + 8 * k].try_into().expect("8"));
    assert_close(
        "first amplitude in the file",
        value(0),
        run.last("a0"),
        1e-12,
    );
    assert_close(
        "phase of the 5 Hz line in the file",
        value(33 + 5),
        0.3,
        1e-9,
    );
}

/// A library on disk with a resource file, and a `ModelicaServices` whose `loadResource`
/// returns its argument unchanged (the default algorithm of a tool hook): moss resolves the
/// `modelica://` URI itself, through the library roots.
const MEMORY_LIB: &str = r#"
package MemLib "Reads a memory image with the MSL's string and stream functions"
  function readLine
    input String fileName;
    input Integer lineNumber;
    output String string;
    output Boolean endOfFile;
  external "C" string = ModelicaInternal_readLine(fileName, lineNumber, endOfFile);
  end readLine;
  function countLines
    input String fileName;
    output Integer numberOfLines;
  external "C" numberOfLines = ModelicaInternal_countLines(fileName);
  end countLines;
  function scanInteger
    input String string;
    input Integer startIndex = 1;
    input Boolean unsigned = false;
    output Integer nextIndex;
    output Integer number;
  external "C" ModelicaStrings_scanInteger(string, startIndex, unsigned, nextIndex, number);
  end scanInteger;
  function length
    input String string;
    output Integer result;
  external "C" result = ModelicaStrings_length(string);
  end length;
  function substring
    input String string;
    input Integer startIndex;
    input Integer endIndex;
    output String result;
  external "C" result = ModelicaStrings_substring(string, startIndex, endIndex);
  end substring;
  function readWords "Each line a word of bits, lowest bit first"
    input String fileName;
    input Integer n;
    input Integer width;
    output Integer words[n];
  protected
    String line;
    Boolean endOfFile;
    Integer next;
    Integer bit;
  algorithm
    for i in 1:n loop
      (line, endOfFile) := readLine(fileName, i);
      words[i] := 0;
      next := 1;
      for j in 1:width loop
        (next, bit) := scanInteger(line, next, true);
        words[i] := words[i] + bit*integer(2^(j - 1));
      end for;
    end for;
  end readWords;
  function commentLength "Length of the comment after the bits of line k"
    input String fileName;
    input Integer k;
    output Integer n;
  protected
    String line;
    Boolean endOfFile;
  algorithm
    (line, endOfFile) := readLine(fileName, k);
    n := length(substring(line, 7, length(line)));
  end commentLength;
  function endOfFileAt
    input String fileName;
    input Integer k;
    output Boolean endOfFile;
  protected
    String line;
  algorithm
    (line, endOfFile) := readLine(fileName, k);
  end endOfFileAt;
  model Memory
    parameter String fileName = ModelicaServices.ExternalReferences.loadResource(
      "modelica://MemLib/Resources/memory.txt");
    discrete Integer words[3](each start = -1, each fixed = true);
    discrete Integer lines(start = -1, fixed = true);
    discrete Integer comment(start = -1, fixed = true);
    discrete Boolean pastEnd(start = false, fixed = true);
  algorithm
    when initial() then
      words := readWords(fileName, 3, 3);
      lines := countLines(fileName);
      comment := commentLength(fileName, 2);
      pastEnd := endOfFileAt(fileName, 4);
    end when;
    annotation(experiment(StopTime = 1));
  end Memory;
end MemLib;
"#;

const SERVICES: &str = r#"
package ModelicaServices
  package ExternalReferences
    function loadResource
      input String uri;
      output String fileReference;
    algorithm
      fileReference := uri;
    end loadResource;
  end ExternalReferences;
end ModelicaServices;
"#;

/// Simulate `model` of library `name` (source `package`) with one resource file, on a
/// library path that also has the `ModelicaServices` stub.
fn run_with_resource(
    name: &str,
    package: &str,
    (file, contents): (&str, &str),
    model: &str,
) -> Trajectories {
    let dir = scratch_dir(name);
    let lib = dir.join(name);
    std::fs::create_dir_all(lib.join("Resources")).expect("writable scratch folder");
    std::fs::write(lib.join("package.mo"), package).expect("writes");
    std::fs::write(lib.join("Resources").join(file), contents).expect("writes");
    std::fs::create_dir_all(dir.join("ModelicaServices")).expect("writes");
    std::fs::write(dir.join("ModelicaServices").join("package.mo"), SERVICES).expect("writes");
    simulate_target(model, &dir, &["--lib", &dir.to_string_lossy()])
}

/// The memory image is read at initialization: three words of three bits (lowest first, one
/// line with a CR-LF ending), the number of lines, the length of a comment cut out with
/// `substring`, and the end of the file past the last line.
#[test]
fn memory_image_is_read_from_a_library_resource() {
    let run = run_with_resource(
        "MemLib",
        MEMORY_LIB,
        ("memory.txt", "1 0 0\n0 1 1 # six\r\n1 1 1\n"),
        "MemLib.Memory",
    );
    assert_eq!(
        [
            run.first("words[1]"),
            run.first("words[2]"),
            run.first("words[3]")
        ],
        [1.0, 6.0, 7.0]
    );
    assert_eq!(run.first("lines"), 3.0);
    // "0 1 1 # six" from byte 7: "# six"
    assert_eq!(run.first("comment"), 5.0);
    assert_eq!(run.first("pastEnd"), 1.0);
}

const PARAMETER_FILE_LIB: &str = r#"
package ParLib "Parameters read from a text file of `name = value` lines"
  function readLine
    input String fileName;
    input Integer lineNumber;
    output String string;
    output Boolean endOfFile;
  external "C" string = ModelicaInternal_readLine(fileName, lineNumber, endOfFile);
  end readLine;
  function scanIdentifier
    input String string;
    input Integer startIndex = 1;
    output Integer nextIndex;
    output String identifier;
  external "C" ModelicaStrings_scanIdentifier(string, startIndex, nextIndex, identifier);
  end scanIdentifier;
  function scanReal
    input String string;
    input Integer startIndex = 1;
    input Boolean unsigned = false;
    output Integer nextIndex;
    output Real number;
  external "C" ModelicaStrings_scanReal(string, startIndex, unsigned, nextIndex, number);
  end scanReal;
  function scanString
    input String string;
    input Integer startIndex = 1;
    output Integer nextIndex;
    output String string2;
  external "C" ModelicaStrings_scanString(string, startIndex, nextIndex, string2);
  end scanString;
  function compare
    input String string1;
    input String string2;
    input Boolean caseSensitive = true;
    output Integer result;
  external "C" result = ModelicaStrings_compare(string1, string2, caseSensitive);
  end compare;
  function readParameter "The number after `name =` on the line that starts with `name`"
    input String fileName;
    input String name;
    output Real value = -1;
  protected
    String line;
    Boolean endOfFile = false;
    Integer next;
    Integer k = 1;
    String identifier;
  algorithm
    while not endOfFile loop
      (line, endOfFile) := readLine(fileName, k);
      (next, identifier) := scanIdentifier(line, 1);
      if compare(identifier, name, false) == 2 then
        // skip `=` (the scan starts after it)
        (next, value) := scanReal(line, next + 2);
        return;
      end if;
      k := k + 1;
    end while;
  end readParameter;
  function label "The string literal after `name =` on the line k"
    input String fileName;
    input Integer k;
    output Integer n "its length";
  protected
    String line;
    Boolean endOfFile;
    Integer next;
    String identifier;
    String text;
  algorithm
    (line, endOfFile) := readLine(fileName, k);
    (next, identifier) := scanIdentifier(line, 1);
    (next, text) := scanString(line, next + 2);
    n := next;
  end label;
  model Inertia "Parameters from the file, and a state driven by them"
    parameter String file = ModelicaServices.ExternalReferences.loadResource(
      "modelica://ParLib/Resources/data.txt");
    parameter Real J = readParameter(file, "J");
    parameter Real w0 = readParameter(file, "W0") "found case-insensitively";
    parameter Integer labelEnd = integer(label(file, 3));
    Real phi(start = 0, fixed = true);
  equation
    der(phi) = w0/J;
    annotation(experiment(StopTime = 1));
  end Inertia;
end ParLib;
"#;

/// Numeric parameters whose bindings read strings stay in the model and in the results; the
/// scanners find identifiers, signed numbers with exponents and quoted strings.
#[test]
fn parameters_are_read_from_a_text_file_with_the_string_scanners() {
    let run = run_with_resource(
        "ParLib",
        PARAMETER_FILE_LIB,
        (
            "data.txt",
            "J = 2.5e-1  // inertia\nw0 = -1.5\nname = \"a \\\"b\\\"\" rest\n",
        ),
        "ParLib.Inertia",
    );
    assert_eq!(run.first("J"), 0.25);
    assert_eq!(run.first("w0"), -1.5);
    // `name = "a \"b\""`: the literal ends after its closing quote at byte 17
    assert_eq!(run.first("labelEnd"), 17.0);
    assert_close("phi at the end", run.last("phi"), -6.0, 1e-9);
}

/// LAPACK's `dgesv` declared as `Modelica.Math.Matrices.LAPACK` declares it (`external
/// "FORTRAN 77"`, the solution written over the right-hand side): a system whose first
/// pivot is zero (row interchange needed), two right-hand sides at once, and a singular
/// matrix reported through `info`.
const LINEAR_SOLVE: &str = r#"
model LinearSolve
  function dgesv_vec
    input Real A[:, size(A, 1)];
    input Real b[size(A, 1)];
    output Real x[size(A, 1)] = b;
    output Integer info;
  protected
    Integer n = size(A, 1);
    Integer nrhs = 1;
    Real Awork[size(A, 1), size(A, 1)] = A;
    Integer lda = max(1, size(A, 1));
    Integer ldb = max(1, size(b, 1));
    Integer ipiv[size(A, 1)];
  external "FORTRAN 77" dgesv(n, nrhs, Awork, lda, ipiv, x, ldb, info);
  end dgesv_vec;
  function dgesv
    input Real A[:, size(A, 1)];
    input Real B[size(A, 1), :];
    output Real X[size(A, 1), size(B, 2)] = B;
    output Integer info;
  protected
    Integer n = size(A, 1);
    Integer nrhs = size(B, 2);
    Real Awork[size(A, 1), size(A, 1)] = A;
    Integer lda = max(1, size(A, 1));
    Integer ldb = max(1, size(B, 1));
    Integer ipiv[size(A, 1)];
  external "FORTRAN 77" dgesv(n, nrhs, Awork, lda, ipiv, X, ldb, info);
  end dgesv;
  parameter Real A[3, 3] = [0, 1, 2; 1, 0, 3; 4, -3, 8];
  Real x[3];
  Integer info;
  Real X[3, 2];
  Integer info2;
  Integer infoSingular;
  Real xs[2];
equation
  (x, info) = dgesv_vec(A, {1, 2, 3}*(1 + time));
  (X, info2) = dgesv(A, [1, 0; 0, 1; 0, 0]);
  (xs, infoSingular) = dgesv_vec([1, 2; 2, 4], {1, 1});
  annotation(experiment(StopTime = 1, Interval = 0.5));
end LinearSolve;
"#;

#[test]
fn lapack_dgesv_solves_with_row_interchanges() {
    let dir = scratch_dir("LinearSolve");
    std::fs::write(dir.join("LinearSolve.mo"), LINEAR_SOLVE).expect("writable scratch folder");
    let run = simulate_target("LinearSolve.mo", &dir, &[]);
    // at t = 1 the right-hand side is {2, 4, 6}: x = {10, 6, -2}
    for (name, want) in [("x[1]", 10.0), ("x[2]", 6.0), ("x[3]", -2.0)] {
        assert_close(name, run.last(name), want, 1e-12);
    }
    assert_eq!(run.last("info"), 0.0);
    // the first two columns of inv(A)
    let inverse = [
        ("X[1,1]", -4.5),
        ("X[2,1]", -2.0),
        ("X[3,1]", 1.5),
        ("X[1,2]", 7.0),
        ("X[2,2]", 4.0),
        ("X[3,2]", -2.0),
    ];
    for (name, want) in inverse {
        assert_close(name, run.last(name), want, 1e-12);
    }
    assert_eq!(run.last("info2"), 0.0);
    // U[2,2] of [1, 2; 2, 4] is exactly zero: LAPACK's info = 2
    assert_eq!(run.last("infoSingular"), 2.0);
}

/// The MSL's matrix readers, declared as `Modelica.Utilities.Streams` declares them.
const MATRIX_READERS: &str = r#"
  function readMatrixSize
    input String fileName;
    input String matrixName;
    output Integer dim[2];
  external "C" ModelicaIO_readMatrixSizes(fileName, matrixName, dim);
  end readMatrixSize;
  function readRealMatrix
    input String fileName;
    input String matrixName;
    input Integer nrow;
    input Integer ncol;
    input Boolean verboseRead = true;
    output Real matrix[nrow, ncol];
  external "C" ModelicaIO_readRealMatrix(fileName, matrixName, matrix, size(matrix, 1), size(matrix, 2), verboseRead);
  end readRealMatrix;
"#;

/// Parameters sized and bound by `readMatrixSize`/`readRealMatrix` (as the MSL's
/// `ReadRealMatrixFromFile` does) get their size and values at translation time, from a
/// MAT v4 file, a MAT level-5 file and a text table file; the values drive a state.
#[test]
fn matrices_sized_by_their_files_are_read_at_translation_time() {
    let dir = scratch_dir("ReadMatrices");
    let a = [11.0, 12.0, 21.0, 22.0, 31.0, 0.5];
    for (file, format) in [
        ("m4.mat", moss_matio::MatFormat::V4),
        ("m6.mat", moss_matio::MatFormat::Level5),
    ] {
        let path = dir.join(file).to_string_lossy().into_owned();
        moss_matio::write_matrix(&path, "A", 3, 2, &a, false, format).expect("writes");
    }
    std::fs::write(
        dir.join("m.txt"),
        "#1\n# a text table\ndouble B(2,3) # two rows\n1 2 3\n4 5 6\n",
    )
    .expect("writes");
    let model = format!(
        r#"
model ReadMatrices
{MATRIX_READERS}
  final parameter Integer dim[2] = readMatrixSize("m4.mat", "A");
  final parameter Real A[:, :] = readRealMatrix("m4.mat", "A", dim[1], dim[2]);
  final parameter Integer dim6[2] = readMatrixSize("m6.mat", "A");
  final parameter Real A6[:, :] = readRealMatrix("m6.mat", "A", dim6[1], dim6[2]);
  final parameter Integer dimB[2] = readMatrixSize("m.txt", "B");
  final parameter Real B[:, :] = readRealMatrix("m.txt", "B", dimB[1], dimB[2]);
  parameter Integer rows = size(A, 1);
  parameter Integer colsB = size(B, 2);
  Real x(start = 1, fixed = true);
equation
  der(x) = -A[3, 2]*x;
  annotation(experiment(StopTime = 1, Interval = 0.1));
end ReadMatrices;
"#
    );
    std::fs::write(dir.join("ReadMatrices.mo"), model).expect("writes");
    let run = simulate_target("ReadMatrices.mo", &dir, &[]);
    assert_eq!(run.last("rows"), 3.0);
    assert_eq!(run.last("colsB"), 3.0);
    assert_eq!(run.last("A[2,1]"), 21.0);
    assert_eq!(run.last("A6[3,1]"), 31.0);
    assert_eq!(run.last("B[2,3]"), 6.0);
    assert_close("x(1) = exp(-A[3,2])", run.last("x"), (-0.5f64).exp(), 1e-5);
}

/// A file that lacks the matrix is an error naming the file and the matrices it has.
#[test]
fn a_matrix_missing_from_its_file_is_a_clear_error() {
    let dir = scratch_dir("MissingMatrix");
    let path = dir.join("m4.mat").to_string_lossy().into_owned();
    moss_matio::write_matrix(&path, "A", 1, 1, &[1.0], false, moss_matio::MatFormat::V4)
        .expect("writes");
    let model = format!(
        r#"
model MissingMatrix
{MATRIX_READERS}
  final parameter Integer dim[2] = readMatrixSize("m4.mat", "Z");
  Real x = dim[1]*time;
end MissingMatrix;
"#
    );
    std::fs::write(dir.join("MissingMatrix.mo"), model).expect("writes");
    let out = library_support::moss_command()
        .current_dir(&dir)
        .args(["simulate", "MissingMatrix.mo"])
        .output()
        .expect("runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("has no matrix named `Z` (it has: A)")
            && stderr.contains("MissingMatrix.mo:"),
        "{stderr}"
    );
}

/// The part of the MSL a table read from a file needs, declared as the MSL declares it: the
/// external table object, a table function taking it, and `Strings.isEmpty` on the C string
/// functions (the MSL's `CombiTimeTable` passes `if tableOnFile and not isEmpty(fileName)
/// then fileName else "NoName"` to the object).
const TABLE_LIB: &str = r#"
package Modelica
  package Utilities
    package Strings
      function length
        input String string;
        output Integer result;
      external "C" result = ModelicaStrings_length(string);
      end length;
      function skipWhiteSpace
        input String string;
        input Integer startIndex(min = 1) = 1;
        output Integer nextIndex;
      external "C" nextIndex = ModelicaStrings_skipWhiteSpace(string, startIndex);
      end skipWhiteSpace;
      function isEmpty
        input String string;
        output Boolean result;
      protected
        Integer nextIndex;
        Integer len;
      algorithm
        nextIndex := skipWhiteSpace(string);
        len := length(string);
        result := len < 1 or nextIndex > len;
      end isEmpty;
    end Strings;
  end Utilities;
  package Blocks
    package Types
      type Smoothness = enumeration(LinearSegments, ContinuousDerivative, ConstantSegments);
      type Extrapolation = enumeration(HoldLastPoint, LastTwoPoints, Periodic, NoExtrapolation);
      type TimeEvents = enumeration(Always, AtDiscontinuities, NoTimeEvents);
      class ExternalCombiTimeTable
        extends ExternalObject;
        function constructor
          input String tableName;
          input String fileName;
          input Real table[:, :];
          input Real startTime;
          input Integer columns[:];
          input Smoothness smoothness;
          input Extrapolation extrapolation;
          input Real shiftTime = 0.0;
          input TimeEvents timeEvents = TimeEvents.Always;
          input Boolean verboseRead = true;
          input String delimiter = ",";
          input Integer nHeaderLines = 0;
          output ExternalCombiTimeTable externalCombiTimeTable;
        external "C" externalCombiTimeTable = ModelicaStandardTables_CombiTimeTable_init2(fileName, tableName, table, size(table, 1), size(table, 2), startTime, columns, size(columns, 1), smoothness, extrapolation, shiftTime, timeEvents, verboseRead, delimiter, nHeaderLines);
        end constructor;
        function destructor
          input ExternalCombiTimeTable externalCombiTimeTable;
        external "C" ModelicaStandardTables_CombiTimeTable_close(externalCombiTimeTable);
        end destructor;
      end ExternalCombiTimeTable;
    end Types;
    package Tables
      package Internal
        function getTimeTableValueNoDer
          input Modelica.Blocks.Types.ExternalCombiTimeTable tableID;
          input Integer icol;
          input Real timeIn;
          input Real nextTimeEvent;
          input Real pre_nextTimeEvent;
          output Real y;
        external "C" y = ModelicaStandardTables_CombiTimeTable_getValue(tableID, icol, timeIn, nextTimeEvent, pre_nextTimeEvent);
        end getTimeTableValueNoDer;
      end Internal;
    end Tables;
  end Blocks;
end Modelica;
"#;

/// Time tables with `tableOnFile = true` are read at translation time: a matrix of a text
/// table file by name, and a CSV file with a header line and its own delimiter; the
/// interpolated values are the files' values.
#[test]
fn time_tables_are_read_from_text_and_csv_files() {
    let dir = scratch_dir("FileTables");
    std::fs::create_dir_all(dir.join("Modelica")).expect("writes");
    std::fs::write(dir.join("Modelica").join("package.mo"), TABLE_LIB).expect("writes");
    std::fs::write(
        dir.join("tables.txt"),
        "#1\ndouble other(1,2)\n0 0\ndouble tab1(3,2) # time, y\n0 0\n1 10\n2 40\n",
    )
    .expect("writes");
    std::fs::write(dir.join("tab.csv"), "time;y\n0;1\n2;5\n").expect("writes");
    let model = r#"
model FileTables
  import Modelica.Blocks.Types;
  parameter Boolean tableOnFile = true;
  parameter String textFile = "tables.txt";
  parameter String csvFile = "tab.csv";
  final parameter Types.ExternalCombiTimeTable text = Types.ExternalCombiTimeTable("tab1",
    if tableOnFile and not Modelica.Utilities.Strings.isEmpty(textFile) then textFile else "NoName",
    fill(0.0, 0, 2), 0.0, {2}, Types.Smoothness.LinearSegments, Types.Extrapolation.LastTwoPoints);
  final parameter Types.ExternalCombiTimeTable csv = Types.ExternalCombiTimeTable("NoName",
    csvFile, fill(0.0, 0, 2), 0.0, {2}, Types.Smoothness.LinearSegments,
    Types.Extrapolation.LastTwoPoints, 0.0, Types.TimeEvents.Always, false, ";", 1);
  Real y = Modelica.Blocks.Tables.Internal.getTimeTableValueNoDer(text, 1, time, 0, 0);
  Real z = Modelica.Blocks.Tables.Internal.getTimeTableValueNoDer(csv, 1, time, 0, 0);
  annotation(experiment(StopTime = 2, Interval = 0.25));
end FileTables;
"#;
    std::fs::write(dir.join("FileTables.mo"), model).expect("writes");
    let run = simulate_target("FileTables.mo", &dir, &["--lib", &dir.to_string_lossy()]);
    for (k, &t) in run.time().iter().enumerate() {
        let y = if t <= 1.0 {
            10.0 * t
        } else {
            10.0 + 30.0 * (t - 1.0)
        };
        assert_close("text table", run.get("y")[k], y, 1e-9);
        assert_close("CSV table", run.get("z")[k], 1.0 + 2.0 * t, 1e-9);
    }
}
