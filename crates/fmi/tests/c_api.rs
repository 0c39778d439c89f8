//! The FMI 2.0 C functions called directly (as an importer would through `dlsym`), without
//! Python: the state machine of Model Exchange and Co-Simulation on a bouncing ball,
//! `fmi2Reset`, and bad calls, each answered with `fmi2Error` and a logged message instead of
//! a crash.

use moss_fmi::fmi2::*;
use moss_fmi::payload::{Payload, RESOURCE_FILE};
use std::ffi::{c_char, c_int, c_void, CStr, CString};
use std::path::PathBuf;
use std::sync::Mutex;

const OK: c_int = 0;
const DISCARD: c_int = 2;
const ERROR: c_int = 3;

const BALL: &str = r#"
model Ball
  parameter Real e = 0.8 "Coefficient of restitution";
  parameter Real h0 = 1 "Drop height";
  Real h(start = h0, fixed = true) "Height";
  Real v(start = 0, fixed = true) "Upward speed";
  output Integer bounces(start = 0, fixed = true) "Impacts so far";
equation
  der(h) = v;
  der(v) = -9.81;
  when h <= 0 then
    reinit(v, -e*pre(v));
    bounces = pre(bounces) + 1;
  end when;
  when bounces >= 3 then
    terminate("three bounces");
  end when;
  annotation(experiment(StopTime = 3));
end Ball;
"#;

/// The ball exported like `moss fmu` does (payload only): resource URI, GUID, variable table
/// and number of event indicators.
struct Exported {
    uri: CString,
    guid: CString,
    table: moss_fmi::variables::Table,
    n_indicators: usize,
}

impl Exported {
    /// Value reference of a variable, through the table the runtime uses.
    fn vr(&self, name: &str) -> u32 {
        self.table
            .vr_of(name)
            .unwrap_or_else(|| panic!("no variable {name}"))
    }
}

fn exported_ball(label: &str) -> Exported {
    exported(BALL, "Ball", label, &["bounces"])
}

/// A model exported like `moss fmu` does (payload only); `outputs` its top-level outputs.
fn exported(source: &str, name: &str, label: &str, outputs: &[&str]) -> Exported {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("moss-fmi-c-api-{}-{label}", std::process::id()));
    let resources = dir.join("resources");
    std::fs::create_dir_all(&resources).expect("creates the folder");
    let model = dir.join(format!("{name}.mo"));
    std::fs::write(&model, source).expect("writes the model");
    let load = moss_frontend::LoadOptions {
        libs: vec![],
        use_modelicapath: false,
        use_bundled: true,
    };
    let flat = moss_frontend::flatten_model(&load, &model.to_string_lossy())
        .unwrap_or_else(|_| panic!("{name} flattens"));
    let program = moss_symbolic::translate(&flat.model).expect("the model translates");
    let outputs = outputs.iter().map(|o| o.to_string()).collect();
    let payload = Payload::new(program, outputs).expect("serializes");
    let table = moss_fmi::variables::table(&payload.program, &payload.outputs);
    let n_indicators = payload.program.zero_crossings.len();
    std::fs::write(
        resources.join(RESOURCE_FILE),
        payload.to_bytes().expect("bytes"),
    )
    .expect("writes the payload");
    let uri = format!("file://{}", resources.display()).replace(' ', "%20");
    Exported {
        uri: CString::new(uri).expect("no NUL"),
        guid: CString::new(payload.token).expect("no NUL"),
        table,
        n_indicators,
    }
}

/// Messages the FMU logged, from all instances of this test process.
static LOG: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// The logger. The FMU always calls it with the format "%s" and exactly one argument, the
/// message; on x86-64 System V a variadic call passes these in the same registers as this
/// fixed-argument function receives them (defining a C-variadic function needs unstable Rust).
extern "C" fn logger(
    _env: *mut c_void,
    _name: *const c_char,
    _status: c_int,
    _category: *const c_char,
    _format: *const c_char,
    message: *const c_char,
) {
    let text = unsafe { CStr::from_ptr(message) }
        .to_string_lossy()
        .into_owned();
    LOG.lock().expect("log lock").push(text);
}

#[repr(C)]
struct Callbacks {
    logger: *const c_void,
    allocate: *const c_void,
    free: *const c_void,
    step_finished: *const c_void,
    environment: *mut c_void,
}

fn callbacks() -> Callbacks {
    Callbacks {
        logger: if cfg!(all(target_arch = "x86_64", target_os = "linux")) {
            logger as *const c_void
        } else {
            std::ptr::null()
        },
        allocate: std::ptr::null(),
        free: std::ptr::null(),
        step_finished: std::ptr::null(),
        environment: std::ptr::null_mut(),
    }
}

fn instantiate(kind: c_int, uri: &CStr, guid: &CStr, cb: &Callbacks) -> *mut c_void {
    unsafe {
        fmi2Instantiate(
            c"ball".as_ptr(),
            kind,
            guid.as_ptr(),
            uri.as_ptr(),
            (cb as *const Callbacks).cast(),
            0,
            0,
        )
    }
}

fn logged(fragment: &str) -> bool {
    LOG.lock()
        .expect("log lock")
        .iter()
        .any(|m| m.contains(fragment))
}

fn initialize(c: *mut c_void) {
    unsafe {
        assert_eq!(fmi2SetupExperiment(c, 0, 0.0, 0.0, 0, 0.0), OK);
        assert_eq!(fmi2EnterInitializationMode(c), OK);
        assert_eq!(fmi2ExitInitializationMode(c), OK);
    }
}

/// Model Exchange driven by a fixed-step explicit Euler loop with event detection on the
/// indicators, as a simple importer would: the ball bounces (stays above the floor up to
/// one step's fall) and the third impact's `terminate()` is reported.
#[test]
fn model_exchange_state_machine_runs_the_ball() {
    let ball = exported_ball("me");
    let cb = callbacks();
    let c = instantiate(0, &ball.uri, &ball.guid, &cb);
    assert!(!c.is_null(), "instantiation failed: {:?}", LOG.lock());
    initialize(c);
    let mut info = [0u8; 32];
    let info_ptr = info.as_mut_ptr().cast();
    unsafe {
        assert_eq!(fmi2NewDiscreteStates(c, info_ptr), OK);
        assert_eq!(fmi2EnterContinuousTimeMode(c), OK);
    }
    let nz = ball.n_indicators;
    let (mut x, mut dx) = ([0.0; 2], [0.0; 2]);
    let (mut z, mut z_prev) = (vec![0.0; nz], vec![0.0; nz]);
    unsafe {
        assert_eq!(fmi2GetContinuousStates(c, x.as_mut_ptr(), 2), OK);
        assert_eq!(fmi2GetEventIndicators(c, z_prev.as_mut_ptr(), nz), OK);
    }
    assert_eq!(x, [1.0, 0.0]);
    let (dt, mut t, mut events, mut min_h) = (1e-4, 0.0, 0, f64::INFINITY);
    let mut terminated = false;
    while t < 3.0 && !terminated {
        unsafe {
            assert_eq!(fmi2GetDerivatives(c, dx.as_mut_ptr(), 2), OK);
            t += dt;
            x = [x[0] + dt * dx[0], x[1] + dt * dx[1]];
            assert_eq!(fmi2SetTime(c, t), OK);
            assert_eq!(fmi2SetContinuousStates(c, x.as_ptr(), 2), OK);
            assert_eq!(fmi2GetEventIndicators(c, z.as_mut_ptr(), nz), OK);
        }
        min_h = min_h.min(x[0]);
        if z.iter().zip(&z_prev).any(|(a, b)| (a > &0.0) != (b > &0.0)) {
            events += 1;
            unsafe {
                assert_eq!(fmi2EnterEventMode(c), OK);
                assert_eq!(fmi2NewDiscreteStates(c, info_ptr), OK);
                // fmi2EventInfo: newDiscreteStatesNeeded, terminateSimulation, ...
                terminated = i32::from_ne_bytes(info[4..8].try_into().expect("4 bytes")) != 0;
                assert_eq!(fmi2EnterContinuousTimeMode(c), OK);
                assert_eq!(fmi2GetContinuousStates(c, x.as_mut_ptr(), 2), OK);
                assert_eq!(fmi2GetEventIndicators(c, z.as_mut_ptr(), nz), OK);
            }
        }
        z_prev.copy_from_slice(&z);
    }
    assert!(
        terminated,
        "terminate() after three bounces was not reported"
    );
    assert!(min_h > -0.01, "the ball fell through the floor: {min_h}");
    // the third impact of the closed form is at 1.75 s
    assert!((1.74..1.77).contains(&t), "terminated at {t}");
    assert!(events >= 3, "{events} events");
    let mut bounces = 0;
    unsafe {
        assert_eq!(fmi2GetInteger(c, &ball.vr("bounces"), 1, &mut bounces), OK);
        assert_eq!(fmi2Terminate(c), OK);
        fmi2FreeInstance(c);
    }
    assert_eq!(bounces, 3);
}

/// Co-Simulation: 0.1 s steps until `terminate()` (third impact at 1.75 s) ends a step early
/// with fmi2Discard and the exact event time; `fmi2Reset` gives the same run again.
#[test]
fn co_simulation_steps_reset_and_terminate() {
    let ball = exported_ball("cs");
    let cb = callbacks();
    let c = instantiate(1, &ball.uri, &ball.guid, &cb);
    assert!(!c.is_null());
    let t3 = {
        // closed form: impacts at t1, t1 + 2 e v1/g, ... with v1 = sqrt(2 g h0)
        let (g, e) = (9.81f64, 0.8f64);
        let v1 = (2.0 * g).sqrt();
        v1 / g + 2.0 * e * v1 / g + 2.0 * e * e * v1 / g
    };
    for _run in 0..2 {
        initialize(c);
        let mut t = 0.0;
        let status = loop {
            let s = unsafe { fmi2DoStep(c, t, 0.1, 1) };
            if s != OK {
                break s;
            }
            t += 0.1;
        };
        assert_eq!(status, DISCARD, "terminate() ends the run");
        let (mut last, mut done) = (0.0, 0);
        unsafe {
            assert_eq!(fmi2GetRealStatus(c, 2, &mut last), OK);
            assert_eq!(fmi2GetBooleanStatus(c, 3, &mut done), OK);
        }
        assert_eq!(done, 1);
        assert!(
            (last - t3).abs() < 1e-6,
            "terminated at {last}, expected {t3}"
        );
        unsafe { assert_eq!(fmi2Reset(c), OK) };
    }
    unsafe { fmi2FreeInstance(c) };
}

/// Bad calls are errors with a message, never a crash.
#[test]
fn bad_calls_are_errors_with_messages() {
    let ball = exported_ball("errors");
    let cb = callbacks();
    let wrong = CString::new("{00000000-0000-0000-0000-000000000000}").expect("no NUL");
    let (uri, guid) = (&ball.uri, &ball.guid);
    assert!(
        instantiate(0, uri, &wrong, &cb).is_null(),
        "a wrong GUID is refused"
    );
    assert!(
        instantiate(7, uri, guid, &cb).is_null(),
        "an unknown fmi2Type is refused"
    );
    // an FMU exported for Model Exchange only refuses Co-Simulation
    let me_only = exported(BALL, "Ball", "me-only", &["bounces"]);
    let dir = moss_fmi::fmi2::resource_dir(&me_only.uri.to_string_lossy()).expect("a file URI");
    let file = dir.join(RESOURCE_FILE);
    let payload = Payload::from_bytes(&std::fs::read(&file).expect("reads")).expect("payload");
    let bytes = payload
        .with_interfaces(true, false)
        .to_bytes()
        .expect("bytes");
    std::fs::write(&file, bytes).expect("writes");
    assert!(instantiate(1, &me_only.uri, &me_only.guid, &cb).is_null());
    let me = instantiate(0, &me_only.uri, &me_only.guid, &cb);
    assert!(!me.is_null(), "Model Exchange is offered");
    unsafe { fmi2FreeInstance(me) };
    let c = instantiate(0, uri, guid, &cb);
    assert!(!c.is_null());
    let h = ball.vr("h");
    let mut value = 0.0;
    let mut int = 0;
    unsafe {
        assert_eq!(fmi2GetReal(c, &9999u32, 1, &mut value), ERROR);
        assert_eq!(
            fmi2SetReal(c, &h, 1, &2.0),
            ERROR,
            "a state is not settable"
        );
        assert_eq!(fmi2GetInteger(c, &h, 1, &mut int), ERROR, "h is a Real");
        assert_eq!(fmi2GetReal(c, std::ptr::null(), 3, &mut value), ERROR);
        assert_eq!(
            fmi2DoStep(c, 0.0, 0.1, 0),
            ERROR,
            "no stepping before initialization"
        );
        assert_eq!(fmi2GetFMUstate(c, std::ptr::null_mut()), ERROR);
        let mut size = 0usize;
        assert_eq!(
            fmi2SerializedFMUstateSize(c, std::ptr::null_mut(), &mut size),
            ERROR
        );
        let mut state: *mut c_void = std::ptr::null_mut();
        let junk = c"junk".as_ptr();
        assert_eq!(fmi2DeSerializeFMUstate(c, junk, 4, &mut state), ERROR);
        assert!(state.is_null());
        assert_eq!(fmi2SetRealInputDerivatives(c, &h, 1, &1, &1.0), ERROR);
        assert_eq!(fmi2GetString(c, &h, 1, std::ptr::null_mut()), ERROR);
    }
    initialize(c);
    unsafe {
        assert_eq!(
            fmi2SetReal(c, &ball.vr("e"), 1, &0.5),
            ERROR,
            "parameters are fixed"
        );
        assert_eq!(fmi2GetReal(c, &h, 1, &mut value), OK);
        fmi2FreeInstance(c);
    }
    assert_eq!(value, 1.0);
    if cfg!(all(target_arch = "x86_64", target_os = "linux")) {
        for fragment in [
            "does not match",
            "exported without CoSimulation",
            "unknown value reference 9999",
            "cannot set `h`",
            "not Integer",
            "null array",
            "null FMU state",
            "not a serialized FMU state",
            "not allowed in Instantiated mode",
            "not supported",
            "no String variables",
            "setting the parameter `e`",
        ] {
            assert!(
                logged(fragment),
                "nothing logged with {fragment:?}: {:?}",
                LOG.lock()
            );
        }
    }
}

const NONLINEAR: &str = r#"
model Nonlinear
  input Real u(start = 0.5);
  output Real y;
  Real x1(start = 1, fixed = true);
  Real x2(start = 0.5, fixed = true);
equation
  der(x1) = x2;
  der(x2) = 2*(1 - x1^2)*x2 - x1 + sin(u)*x1;
  y = x1*x2 + u^2;
end Nonlinear;
"#;

/// `fmi2GetDirectionalDerivative` agrees with finite differences of the FMU's own
/// functions: derivatives along a state direction (the symbolic tangent program), and an
/// output and a derivative along a direction of states and the input (central differences
/// inside the FMU).
#[test]
fn directional_derivatives_agree_with_finite_differences() {
    let m = exported(NONLINEAR, "Nonlinear", "dirder", &["y"]);
    let cb = callbacks();
    let c = instantiate(0, &m.uri, &m.guid, &cb);
    assert!(!c.is_null());
    initialize(c);
    let mut info = [0u8; 32];
    let (x1, x2, u, y) = (m.vr("x1"), m.vr("x2"), m.vr("u"), m.vr("y"));
    let (dx1, dx2) = (m.vr("der(x1)"), m.vr("der(x2)"));
    unsafe {
        assert_eq!(fmi2NewDiscreteStates(c, info.as_mut_ptr().cast()), OK);
        assert_eq!(fmi2EnterContinuousTimeMode(c), OK);
        assert_eq!(fmi2SetTime(c, 0.3), OK);
    }
    let x = [1.2, -0.3];
    let u0 = 0.7;
    // f(x, u) -> (der(x1), der(x2), y), through the FMU
    let eval = |x: [f64; 2], uval: f64| -> [f64; 3] {
        let mut d = [0.0; 2];
        let mut yv = 0.0;
        unsafe {
            assert_eq!(fmi2SetContinuousStates(c, x.as_ptr(), 2), OK);
            assert_eq!(fmi2SetReal(c, &u, 1, &uval), OK);
            assert_eq!(fmi2GetDerivatives(c, d.as_mut_ptr(), 2), OK);
            assert_eq!(fmi2GetReal(c, &y, 1, &mut yv), OK);
        }
        [d[0], d[1], yv]
    };
    let h = 1e-6;
    // states -> derivatives along s
    let s = [0.4, -1.3];
    let plus = eval([x[0] + h * s[0], x[1] + h * s[1]], u0);
    let minus = eval([x[0] - h * s[0], x[1] - h * s[1]], u0);
    eval(x, u0);
    let mut jv = [0.0; 2];
    unsafe {
        assert_eq!(
            fmi2GetDirectionalDerivative(
                c,
                [dx1, dx2].as_ptr(),
                2,
                [x1, x2].as_ptr(),
                2,
                s.as_ptr(),
                jv.as_mut_ptr()
            ),
            OK
        );
    }
    for i in 0..2 {
        let fd = (plus[i] - minus[i]) / (2.0 * h);
        assert!(
            (jv[i] - fd).abs() < 1e-6 * (1.0 + fd.abs()),
            "der(x{}): {} vs {fd}",
            i + 1,
            jv[i]
        );
    }
    // states and input -> output and der(x2) along (s, w)
    let w = 2.0;
    let plus = eval([x[0] + h * s[0], x[1] + h * s[1]], u0 + h * w);
    let minus = eval([x[0] - h * s[0], x[1] - h * s[1]], u0 - h * w);
    eval(x, u0);
    let mut jv = [0.0; 2];
    unsafe {
        assert_eq!(
            fmi2GetDirectionalDerivative(
                c,
                [y, dx2].as_ptr(),
                2,
                [x1, x2, u].as_ptr(),
                3,
                [s[0], s[1], w].as_ptr(),
                jv.as_mut_ptr()
            ),
            OK
        );
    }
    let expected = [
        (plus[2] - minus[2]) / (2.0 * h),
        (plus[1] - minus[1]) / (2.0 * h),
    ];
    // the closed form of dy = x2 dx1 + x1 dx2 + 2 u du
    let exact_dy = x[1] * s[0] + x[0] * s[1] + 2.0 * u0 * w;
    assert!(
        (jv[0] - exact_dy).abs() < 1e-6,
        "dy: {} vs closed form {exact_dy}",
        jv[0]
    );
    for i in 0..2 {
        assert!(
            (jv[i] - expected[i]).abs() < 1e-5 * (1.0 + expected[i].abs()),
            "{i}: {} vs {}",
            jv[i],
            expected[i]
        );
    }
    // the point itself is unchanged
    assert_eq!(eval(x, u0), eval(x, u0));
    let mut back = [0.0; 2];
    unsafe {
        assert_eq!(fmi2GetContinuousStates(c, back.as_mut_ptr(), 2), OK);
        assert_eq!(
            fmi2GetDirectionalDerivative(c, &y, 1, &dx1, 1, &1.0, jv.as_mut_ptr()),
            ERROR,
            "a derivative is no known"
        );
        fmi2FreeInstance(c);
    }
    assert_eq!(back, x);
}

/// `fmi2GetFMUstate`/`fmi2SetFMUstate`: going back to a saved state and stepping again gives
/// the same trajectory, bit for bit, through the impacts in between; so does a state that
/// went through `fmi2SerializeFMUstate` and `fmi2DeSerializeFMUstate`.
#[test]
fn fmu_state_rolls_co_simulation_back() {
    let ball = exported_ball("state");
    let cb = callbacks();
    let c = instantiate(1, &ball.uri, &ball.guid, &cb);
    assert!(!c.is_null());
    initialize(c);
    let h = ball.vr("h");
    let step_to = |from: f64, to: f64| {
        let mut t = from;
        while t < to - 1e-9 {
            assert_eq!(unsafe { fmi2DoStep(c, t, 0.05, 0) }, OK);
            t += 0.05;
        }
        let mut v = 0.0;
        assert_eq!(unsafe { fmi2GetReal(c, &h, 1, &mut v) }, OK);
        v
    };
    let at_half = step_to(0.0, 0.5);
    let mut state: *mut c_void = std::ptr::null_mut();
    assert_eq!(unsafe { fmi2GetFMUstate(c, &mut state) }, OK);
    assert!(!state.is_null());
    let first = step_to(0.5, 1.5);
    assert_eq!(unsafe { fmi2SetFMUstate(c, state) }, OK);
    let mut back = 0.0;
    assert_eq!(unsafe { fmi2GetReal(c, &h, 1, &mut back) }, OK);
    assert_eq!(back, at_half);
    let second = step_to(0.5, 1.5);
    assert_eq!(first, second, "the replay differs");
    // through bytes
    let mut size = 0usize;
    assert_eq!(
        unsafe { fmi2SerializedFMUstateSize(c, state, &mut size) },
        OK
    );
    let mut bytes = vec![0 as c_char; size];
    assert_eq!(
        unsafe { fmi2SerializeFMUstate(c, state, bytes.as_mut_ptr(), size) },
        OK
    );
    let mut read: *mut c_void = std::ptr::null_mut();
    assert_eq!(
        unsafe { fmi2DeSerializeFMUstate(c, bytes.as_ptr(), size, &mut read) },
        OK
    );
    assert_eq!(unsafe { fmi2SetFMUstate(c, read) }, OK);
    assert_eq!(step_to(0.5, 1.5), first, "the replay from bytes differs");
    assert_eq!(unsafe { fmi2FreeFMUstate(c, &mut read) }, OK);
    // the state may be overwritten in place, then freed once
    assert_eq!(unsafe { fmi2GetFMUstate(c, &mut state) }, OK);
    assert_eq!(unsafe { fmi2FreeFMUstate(c, &mut state) }, OK);
    assert!(state.is_null());
    unsafe { fmi2FreeInstance(c) };
}

/// Parameters set before initialization (as FMPy's `start_values` do) are read back before
/// initialization, enter the initialization problem (`h(start = h0)`), and stay after it.
#[test]
fn parameters_set_before_initialization_change_the_run() {
    let ball = exported_ball("params");
    let cb = callbacks();
    let c = instantiate(1, &ball.uri, &ball.guid, &cb);
    assert!(!c.is_null());
    let (h0, h) = (ball.vr("h0"), ball.vr("h"));
    let mut v = 0.0;
    unsafe {
        assert_eq!(fmi2SetReal(c, &h0, 1, &2.0), OK);
        assert_eq!(fmi2GetReal(c, &h0, 1, &mut v), OK);
        assert_eq!(v, 2.0, "the set value before initialization");
    }
    initialize(c);
    unsafe {
        assert_eq!(fmi2GetReal(c, &h, 1, &mut v), OK);
        assert_eq!(v, 2.0, "h starts at h0");
        assert_eq!(fmi2DoStep(c, 0.0, 0.5, 0), OK);
        assert_eq!(fmi2GetReal(c, &h, 1, &mut v), OK);
        // free fall, no impact before sqrt(2 h0 / g) = 0.64 s
        assert!((v - (2.0 - 0.5 * 9.81 * 0.25)).abs() < 1e-9, "h(0.5) = {v}");
        assert_eq!(fmi2GetReal(c, &h0, 1, &mut v), OK);
        assert_eq!(v, 2.0);
        fmi2FreeInstance(c);
    }
}
