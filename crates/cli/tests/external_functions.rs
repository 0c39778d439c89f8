//! External C functions of the MSL's support library that moss runs natively, declared the
//! way libraries declare them, and `when`-statements in algorithms driven by `sample`.

mod library_support;

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
