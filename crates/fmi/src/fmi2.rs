//! The FMI 2.0 C API: all 44 functions of `fmi2Functions.h` (common, Model Exchange,
//! Co-Simulation), exported unprefixed as the standard requires of a binary FMU.
//!
//! Every function converts its C arguments, runs under `catch_unwind` (a panic never
//! crosses the C boundary; it becomes `fmi2Error` with a logged message) and reports
//! failures through the importer's logger. Unsupported functions (input/output derivatives,
//! asynchronous steps) return `fmi2Error` and say why;
//! modelDescription.xml declares the matching capability flags false.

#![allow(clippy::missing_safety_doc)]

use crate::fmu_state;
use crate::instance::{Instance, Kind, StepResult};
use crate::payload::{Payload, RESOURCE_FILE};
use crate::variables::BaseType;
use std::ffi::{c_char, c_int, c_uint, c_void, CStr, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;

type Status = c_int;
const OK: Status = 0;
const DISCARD: Status = 2;
const ERROR: Status = 3;

type Component = *mut c_void;
type ValueReference = c_uint;
type Logger =
    unsafe extern "C" fn(*mut c_void, *const c_char, Status, *const c_char, *const c_char, ...);

/// `fmi2CallbackFunctions`
#[repr(C)]
pub struct CallbackFunctions {
    logger: Option<Logger>,
    allocate_memory: Option<unsafe extern "C" fn(usize, usize) -> *mut c_void>,
    free_memory: Option<unsafe extern "C" fn(*mut c_void)>,
    step_finished: Option<unsafe extern "C" fn(*mut c_void, Status)>,
    component_environment: *mut c_void,
}

/// `fmi2EventInfo`
#[repr(C)]
pub struct EventInfo {
    new_discrete_states_needed: c_int,
    terminate_simulation: c_int,
    nominals_of_continuous_states_changed: c_int,
    values_of_continuous_states_changed: c_int,
    next_event_time_defined: c_int,
    next_event_time: f64,
}

// fmi2StatusKind
const DO_STEP_STATUS: c_int = 0;
const PENDING_STATUS: c_int = 1;
const LAST_SUCCESSFUL_TIME: c_int = 2;
const TERMINATED: c_int = 3;

/// The importer's logger, copied at instantiation (the callback struct need not outlive
/// the call).
#[derive(Clone, Copy)]
struct Log {
    logger: Option<Logger>,
    environment: *mut c_void,
}

impl Log {
    fn emit(&self, instance: &CStr, status: Status, category: &str, message: &str) {
        let Some(logger) = self.logger else { return };
        let category = CString::new(category).unwrap_or_default();
        let message = CString::new(message.replace('\0', " ")).unwrap_or_default();
        // The message goes through "%s": the logger is printf-like and the text may hold '%'.
        unsafe {
            logger(
                self.environment,
                instance.as_ptr(),
                status,
                category.as_ptr(),
                c"%s".as_ptr(),
                message.as_ptr(),
            )
        };
    }
}

/// What an `fmi2Component` points to.
struct Fmu {
    name: CString,
    log: Log,
    logging_on: bool,
    instance: Instance,
}

impl Fmu {
    fn error(&self, message: &str) {
        self.log.emit(&self.name, ERROR, "logStatusError", message);
    }

    fn event(&self, message: &str) {
        if self.logging_on {
            self.log.emit(&self.name, OK, "logEvents", message);
        }
    }
}

pub(crate) fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

/// Run `f` on the instance behind `c`, turning errors and panics into `fmi2Error` with a
/// logged message naming the function.
fn with_fmu(
    c: Component,
    func: &str,
    f: impl FnOnce(&mut Fmu) -> Result<Status, String>,
) -> Status {
    if c.is_null() {
        return ERROR;
    }
    // SAFETY: a non-null component is one `fmi2Instantiate` returned and
    // `fmi2FreeInstance` has not freed (the importer's obligation).
    let fmu = unsafe { &mut *(c as *mut Fmu) };
    match catch_unwind(AssertUnwindSafe(|| f(fmu))) {
        Ok(Ok(status)) => status,
        Ok(Err(message)) => {
            fmu.error(&format!("{func}: {message}"));
            ERROR
        }
        Err(p) => {
            fmu.error(&format!(
                "{func}: internal error: {}",
                panic_text(p.as_ref())
            ));
            ERROR
        }
    }
}

/// A slice from a C array; an empty slice for `n == 0` (the pointer may then be null).
pub(crate) unsafe fn slice<'a, T>(p: *const T, n: usize) -> Result<&'a [T], String> {
    if n == 0 {
        Ok(&[])
    } else if p.is_null() {
        Err("null array".into())
    } else {
        Ok(unsafe { std::slice::from_raw_parts(p, n) })
    }
}

pub(crate) unsafe fn slice_mut<'a, T>(p: *mut T, n: usize) -> Result<&'a mut [T], String> {
    if n == 0 {
        Ok(&mut [])
    } else if p.is_null() {
        Err("null array".into())
    } else {
        Ok(unsafe { std::slice::from_raw_parts_mut(p, n) })
    }
}

pub(crate) unsafe fn text(p: *const c_char) -> Option<String> {
    (!p.is_null()).then(|| unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

/// The directory a `file:` URI names (`file:///a/b`, `file://host/a/b`, `file:/a/b`),
/// percent-decoded.
pub fn resource_dir(uri: &str) -> Result<PathBuf, String> {
    let path = if let Some(rest) = uri.strip_prefix("file://") {
        // skip an authority (host) part
        &rest[rest.find('/').unwrap_or(rest.len())..]
    } else if let Some(rest) = uri.strip_prefix("file:") {
        rest
    } else {
        return Err(format!("the resource location `{uri}` is not a file: URI"));
    };
    let bytes = path.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    Ok(PathBuf::from(String::from_utf8_lossy(&out).into_owned()))
}

fn load_payload(resource_location: Option<String>) -> Result<Payload, String> {
    let uri = resource_location.ok_or("no resource location given")?;
    let file = resource_dir(&uri)?.join(RESOURCE_FILE);
    let bytes = std::fs::read(&file)
        .map_err(|e| format!("cannot read the model file {}: {e}", file.display()))?;
    Payload::from_bytes(&bytes)
}

fn instantiate(
    kind: c_int,
    guid: Option<String>,
    resource_location: Option<String>,
) -> Result<Instance, String> {
    let kind = match kind {
        0 => Kind::ModelExchange,
        1 => Kind::CoSimulation,
        k => return Err(format!("unknown fmi2Type {k}")),
    };
    let payload = load_payload(resource_location)?;
    if let Some(g) = guid.filter(|g| *g != payload.token) {
        return Err(format!(
            "the GUID {g} does not match the model stored in the FMU ({})",
            payload.token
        ));
    }
    Instance::new(kind, payload)
}

// ---------------------------------------------------------------- common functions

#[no_mangle]
pub extern "C" fn fmi2GetTypesPlatform() -> *const c_char {
    c"default".as_ptr()
}

#[no_mangle]
pub extern "C" fn fmi2GetVersion() -> *const c_char {
    c"2.0".as_ptr()
}

#[no_mangle]
pub unsafe extern "C" fn fmi2SetDebugLogging(
    c: Component,
    logging_on: c_int,
    _n_categories: usize,
    _categories: *const *const c_char,
) -> Status {
    with_fmu(c, "fmi2SetDebugLogging", |fmu| {
        fmu.logging_on = logging_on != 0;
        Ok(OK)
    })
}

#[no_mangle]
pub unsafe extern "C" fn fmi2Instantiate(
    instance_name: *const c_char,
    fmu_type: c_int,
    fmu_guid: *const c_char,
    fmu_resource_location: *const c_char,
    functions: *const CallbackFunctions,
    _visible: c_int,
    logging_on: c_int,
) -> Component {
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let name = unsafe { text(instance_name) }.unwrap_or_else(|| "moss".into());
        let log = if functions.is_null() {
            Log {
                logger: None,
                environment: std::ptr::null_mut(),
            }
        } else {
            let f = unsafe { &*functions };
            Log {
                logger: f.logger,
                environment: f.component_environment,
            }
        };
        let cname = CString::new(name.replace('\0', " ")).unwrap_or_default();
        let guid = unsafe { text(fmu_guid) };
        let location = unsafe { text(fmu_resource_location) };
        match instantiate(fmu_type, guid, location) {
            Ok(instance) => Box::into_raw(Box::new(Fmu {
                name: cname,
                log,
                logging_on: logging_on != 0,
                instance,
            })) as Component,
            Err(message) => {
                log.emit(
                    &cname,
                    ERROR,
                    "logStatusError",
                    &format!("fmi2Instantiate: {message}"),
                );
                std::ptr::null_mut()
            }
        }
    }));
    outcome.unwrap_or(std::ptr::null_mut())
}

#[no_mangle]
pub unsafe extern "C" fn fmi2FreeInstance(c: Component) {
    if c.is_null() {
        return;
    }
    // SAFETY: `c` came from `fmi2Instantiate` and is freed once (the importer's obligation).
    let _ = catch_unwind(AssertUnwindSafe(|| {
        drop(unsafe { Box::from_raw(c as *mut Fmu) })
    }));
}

#[no_mangle]
pub unsafe extern "C" fn fmi2SetupExperiment(
    c: Component,
    tolerance_defined: c_int,
    tolerance: f64,
    start_time: f64,
    stop_time_defined: c_int,
    stop_time: f64,
) -> Status {
    with_fmu(c, "fmi2SetupExperiment", |fmu| {
        fmu.instance.setup_experiment(
            (tolerance_defined != 0).then_some(tolerance),
            start_time,
            (stop_time_defined != 0).then_some(stop_time),
        )?;
        Ok(OK)
    })
}

#[no_mangle]
pub unsafe extern "C" fn fmi2EnterInitializationMode(c: Component) -> Status {
    with_fmu(c, "fmi2EnterInitializationMode", |fmu| {
        fmu.instance.enter_initialization()?;
        Ok(OK)
    })
}

#[no_mangle]
pub unsafe extern "C" fn fmi2ExitInitializationMode(c: Component) -> Status {
    with_fmu(c, "fmi2ExitInitializationMode", |fmu| {
        fmu.instance.exit_initialization()?;
        fmu.event(&format!("initialized at t = {}", fmu.instance.time));
        Ok(OK)
    })
}

#[no_mangle]
pub unsafe extern "C" fn fmi2Terminate(c: Component) -> Status {
    with_fmu(c, "fmi2Terminate", |fmu| {
        fmu.instance.terminate()?;
        Ok(OK)
    })
}

#[no_mangle]
pub unsafe extern "C" fn fmi2Reset(c: Component) -> Status {
    with_fmu(c, "fmi2Reset", |fmu| {
        fmu.instance.reset()?;
        Ok(OK)
    })
}

fn get_values<T>(
    c: Component,
    func: &str,
    ty: BaseType,
    vr: *const ValueReference,
    nvr: usize,
    value: *mut T,
    convert: impl Fn(f64) -> T,
) -> Status {
    with_fmu(c, func, |fmu| {
        let vrs = unsafe { slice(vr, nvr) }?;
        let out = unsafe { slice_mut(value, nvr) }?;
        let mut buf = vec![0.0; nvr];
        fmu.instance.get(vrs, ty, &mut buf)?;
        for (o, v) in out.iter_mut().zip(buf) {
            *o = convert(v);
        }
        Ok(OK)
    })
}

fn set_values<T: Copy>(
    c: Component,
    func: &str,
    ty: BaseType,
    vr: *const ValueReference,
    nvr: usize,
    value: *const T,
    convert: impl Fn(T) -> f64,
) -> Status {
    with_fmu(c, func, |fmu| {
        let vrs = unsafe { slice(vr, nvr) }?;
        let values: Vec<f64> = unsafe { slice(value, nvr) }?
            .iter()
            .map(|&v| convert(v))
            .collect();
        fmu.instance.set(vrs, ty, &values)?;
        Ok(OK)
    })
}

#[no_mangle]
pub unsafe extern "C" fn fmi2GetReal(
    c: Component,
    vr: *const ValueReference,
    nvr: usize,
    value: *mut f64,
) -> Status {
    get_values(c, "fmi2GetReal", BaseType::Real, vr, nvr, value, |v| v)
}

#[no_mangle]
pub unsafe extern "C" fn fmi2GetInteger(
    c: Component,
    vr: *const ValueReference,
    nvr: usize,
    value: *mut c_int,
) -> Status {
    get_values(
        c,
        "fmi2GetInteger",
        BaseType::Integer,
        vr,
        nvr,
        value,
        |v| v.round() as c_int,
    )
}

#[no_mangle]
pub unsafe extern "C" fn fmi2GetBoolean(
    c: Component,
    vr: *const ValueReference,
    nvr: usize,
    value: *mut c_int,
) -> Status {
    get_values(
        c,
        "fmi2GetBoolean",
        BaseType::Boolean,
        vr,
        nvr,
        value,
        |v| c_int::from(v != 0.0),
    )
}

#[no_mangle]
pub unsafe extern "C" fn fmi2GetString(
    c: Component,
    _vr: *const ValueReference,
    nvr: usize,
    _value: *mut *const c_char,
) -> Status {
    no_strings(c, "fmi2GetString", nvr)
}

/// The FMU has no String variables (String values are folded away at translation).
fn no_strings(c: Component, func: &str, nvr: usize) -> Status {
    with_fmu(c, func, |_| {
        if nvr == 0 {
            Ok(OK)
        } else {
            Err("this FMU has no String variables".into())
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn fmi2SetReal(
    c: Component,
    vr: *const ValueReference,
    nvr: usize,
    value: *const f64,
) -> Status {
    set_values(c, "fmi2SetReal", BaseType::Real, vr, nvr, value, |v| v)
}

#[no_mangle]
pub unsafe extern "C" fn fmi2SetInteger(
    c: Component,
    vr: *const ValueReference,
    nvr: usize,
    value: *const c_int,
) -> Status {
    set_values(
        c,
        "fmi2SetInteger",
        BaseType::Integer,
        vr,
        nvr,
        value,
        f64::from,
    )
}

#[no_mangle]
pub unsafe extern "C" fn fmi2SetBoolean(
    c: Component,
    vr: *const ValueReference,
    nvr: usize,
    value: *const c_int,
) -> Status {
    set_values(
        c,
        "fmi2SetBoolean",
        BaseType::Boolean,
        vr,
        nvr,
        value,
        |v| if v != 0 { 1.0 } else { 0.0 },
    )
}

#[no_mangle]
pub unsafe extern "C" fn fmi2SetString(
    c: Component,
    _vr: *const ValueReference,
    nvr: usize,
    _value: *const *const c_char,
) -> Status {
    no_strings(c, "fmi2SetString", nvr)
}

fn unsupported(c: Component, func: &str, why: &str) -> Status {
    with_fmu(c, func, |_| Err(format!("not supported: {why}")))
}

/// `fmi2GetFMUstate`: a new state, or the one `*state` points to overwritten (FMI 2.0 lets
/// the importer reuse a state).
#[no_mangle]
pub unsafe extern "C" fn fmi2GetFMUstate(c: Component, state: *mut *mut c_void) -> Status {
    with_fmu(c, "fmi2GetFMUstate", |fmu| {
        unsafe { fmu_state::store(state, fmu.instance.state()) }?;
        Ok(OK)
    })
}

#[no_mangle]
pub unsafe extern "C" fn fmi2SetFMUstate(c: Component, state: *mut c_void) -> Status {
    with_fmu(c, "fmi2SetFMUstate", |fmu| {
        fmu.instance.set_state(unsafe { fmu_state::get(state) }?)?;
        Ok(OK)
    })
}

#[no_mangle]
pub unsafe extern "C" fn fmi2FreeFMUstate(c: Component, state: *mut *mut c_void) -> Status {
    with_fmu(c, "fmi2FreeFMUstate", |_| {
        unsafe { fmu_state::free(state) };
        Ok(OK)
    })
}

#[no_mangle]
pub unsafe extern "C" fn fmi2SerializedFMUstateSize(
    c: Component,
    state: *mut c_void,
    size: *mut usize,
) -> Status {
    with_fmu(c, "fmi2SerializedFMUstateSize", |_| {
        unsafe { fmu_state::serialized_size(state, size) }?;
        Ok(OK)
    })
}

#[no_mangle]
pub unsafe extern "C" fn fmi2SerializeFMUstate(
    c: Component,
    state: *mut c_void,
    out: *mut c_char,
    size: usize,
) -> Status {
    with_fmu(c, "fmi2SerializeFMUstate", |_| {
        unsafe { fmu_state::serialize(state, out as *mut u8, size) }?;
        Ok(OK)
    })
}

#[no_mangle]
pub unsafe extern "C" fn fmi2DeSerializeFMUstate(
    c: Component,
    bytes: *const c_char,
    size: usize,
    state: *mut *mut c_void,
) -> Status {
    with_fmu(c, "fmi2DeSerializeFMUstate", |_| {
        unsafe { fmu_state::deserialize(bytes as *const u8, size, state) }?;
        Ok(OK)
    })
}

#[no_mangle]
pub unsafe extern "C" fn fmi2GetDirectionalDerivative(
    c: Component,
    unknown: *const ValueReference,
    n_unknown: usize,
    known: *const ValueReference,
    n_known: usize,
    dv_known: *const f64,
    dv_unknown: *mut f64,
) -> Status {
    with_fmu(c, "fmi2GetDirectionalDerivative", |fmu| {
        let unknowns = unsafe { slice(unknown, n_unknown) }?;
        let knowns = unsafe { slice(known, n_known) }?;
        let seed = unsafe { slice(dv_known, n_known) }?;
        let out = unsafe { slice_mut(dv_unknown, n_unknown) }?;
        fmu.instance
            .directional_derivative(unknowns, knowns, seed, out)?;
        Ok(OK)
    })
}

// ---------------------------------------------------------------- Model Exchange

#[no_mangle]
pub unsafe extern "C" fn fmi2EnterEventMode(c: Component) -> Status {
    with_fmu(c, "fmi2EnterEventMode", |fmu| {
        fmu.instance.enter_event_mode()?;
        Ok(OK)
    })
}

#[no_mangle]
pub unsafe extern "C" fn fmi2NewDiscreteStates(c: Component, info: *mut EventInfo) -> Status {
    with_fmu(c, "fmi2NewDiscreteStates", |fmu| {
        if info.is_null() {
            return Err("null fmi2EventInfo".into());
        }
        let e = fmu.instance.new_discrete_states()?;
        fmu.event(&format!(
            "event at t = {}{}",
            fmu.instance.time,
            if e.states_changed {
                ", states changed"
            } else {
                ""
            }
        ));
        if let Some(msg) = &e.terminate {
            let text = format!(
                "the model called terminate() at t = {}: {msg}",
                fmu.instance.time
            );
            fmu.log.emit(&fmu.name, OK, "logEvents", &text);
        }
        // SAFETY: checked non-null; the importer passes a writable struct.
        let out = unsafe { &mut *info };
        out.new_discrete_states_needed = 0;
        out.terminate_simulation = c_int::from(e.terminate.is_some());
        out.nominals_of_continuous_states_changed = 0;
        out.values_of_continuous_states_changed = c_int::from(e.states_changed);
        out.next_event_time_defined = c_int::from(e.next_event_time.is_some());
        out.next_event_time = e.next_event_time.unwrap_or(0.0);
        Ok(OK)
    })
}

#[no_mangle]
pub unsafe extern "C" fn fmi2EnterContinuousTimeMode(c: Component) -> Status {
    with_fmu(c, "fmi2EnterContinuousTimeMode", |fmu| {
        fmu.instance.enter_continuous_mode()?;
        Ok(OK)
    })
}

#[no_mangle]
pub unsafe extern "C" fn fmi2CompletedIntegratorStep(
    c: Component,
    _no_set_fmu_state_prior: c_int,
    enter_event_mode: *mut c_int,
    terminate_simulation: *mut c_int,
) -> Status {
    with_fmu(c, "fmi2CompletedIntegratorStep", |_| {
        // No step events: every event of a moss model is a zero crossing or a time event.
        if !enter_event_mode.is_null() {
            unsafe { *enter_event_mode = 0 };
        }
        if !terminate_simulation.is_null() {
            unsafe { *terminate_simulation = 0 };
        }
        Ok(OK)
    })
}

#[no_mangle]
pub unsafe extern "C" fn fmi2SetTime(c: Component, time: f64) -> Status {
    with_fmu(c, "fmi2SetTime", |fmu| {
        fmu.instance.set_time(time)?;
        Ok(OK)
    })
}

#[no_mangle]
pub unsafe extern "C" fn fmi2SetContinuousStates(c: Component, x: *const f64, nx: usize) -> Status {
    with_fmu(c, "fmi2SetContinuousStates", |fmu| {
        fmu.instance.set_states(unsafe { slice(x, nx) }?)?;
        Ok(OK)
    })
}

#[no_mangle]
pub unsafe extern "C" fn fmi2GetDerivatives(c: Component, dx: *mut f64, nx: usize) -> Status {
    with_fmu(c, "fmi2GetDerivatives", |fmu| {
        fmu.instance.derivatives(unsafe { slice_mut(dx, nx) }?)?;
        Ok(OK)
    })
}

#[no_mangle]
pub unsafe extern "C" fn fmi2GetEventIndicators(c: Component, z: *mut f64, nz: usize) -> Status {
    with_fmu(c, "fmi2GetEventIndicators", |fmu| {
        fmu.instance
            .event_indicators(unsafe { slice_mut(z, nz) }?)?;
        Ok(OK)
    })
}

#[no_mangle]
pub unsafe extern "C" fn fmi2GetContinuousStates(c: Component, x: *mut f64, nx: usize) -> Status {
    with_fmu(c, "fmi2GetContinuousStates", |fmu| {
        fmu.instance.states(unsafe { slice_mut(x, nx) }?)?;
        Ok(OK)
    })
}

#[no_mangle]
pub unsafe extern "C" fn fmi2GetNominalsOfContinuousStates(
    c: Component,
    x: *mut f64,
    nx: usize,
) -> Status {
    with_fmu(c, "fmi2GetNominalsOfContinuousStates", |fmu| {
        fmu.instance.nominals(unsafe { slice_mut(x, nx) }?)?;
        Ok(OK)
    })
}

// ---------------------------------------------------------------- Co-Simulation

#[no_mangle]
pub unsafe extern "C" fn fmi2SetRealInputDerivatives(
    c: Component,
    _vr: *const ValueReference,
    _nvr: usize,
    _order: *const c_int,
    _value: *const f64,
) -> Status {
    unsupported(
        c,
        "fmi2SetRealInputDerivatives",
        "inputs are held constant over a step (canInterpolateInputs=false)",
    )
}

#[no_mangle]
pub unsafe extern "C" fn fmi2GetRealOutputDerivatives(
    c: Component,
    _vr: *const ValueReference,
    _nvr: usize,
    _order: *const c_int,
    _value: *mut f64,
) -> Status {
    unsupported(
        c,
        "fmi2GetRealOutputDerivatives",
        "output derivatives are not provided (maxOutputDerivativeOrder=0)",
    )
}

#[no_mangle]
pub unsafe extern "C" fn fmi2DoStep(
    c: Component,
    current_communication_point: f64,
    communication_step_size: f64,
    _no_set_fmu_state_prior: c_int,
) -> Status {
    with_fmu(c, "fmi2DoStep", |fmu| {
        match fmu
            .instance
            .do_step(current_communication_point, communication_step_size)?
        {
            StepResult::Completed => Ok(OK),
            StepResult::Terminated { time, message } => {
                fmu.log.emit(
                    &fmu.name,
                    DISCARD,
                    "logEvents",
                    &format!("the model called terminate() at t = {time}: {message}"),
                );
                Ok(DISCARD)
            }
        }
    })
}

#[no_mangle]
pub unsafe extern "C" fn fmi2CancelStep(c: Component) -> Status {
    unsupported(
        c,
        "fmi2CancelStep",
        "fmi2DoStep always completes before it returns",
    )
}

#[no_mangle]
pub unsafe extern "C" fn fmi2GetStatus(c: Component, kind: c_int, _value: *mut Status) -> Status {
    with_fmu(c, "fmi2GetStatus", |_| match kind {
        DO_STEP_STATUS | PENDING_STATUS => {
            Err("no asynchronous step is pending (fmi2DoStep always completes)".into())
        }
        k => Err(format!("status kind {k} is not an fmi2Status")),
    })
}

#[no_mangle]
pub unsafe extern "C" fn fmi2GetRealStatus(c: Component, kind: c_int, value: *mut f64) -> Status {
    with_fmu(c, "fmi2GetRealStatus", |fmu| {
        if kind != LAST_SUCCESSFUL_TIME || value.is_null() {
            return Err(format!("status kind {kind} has no Real value"));
        }
        unsafe { *value = fmu.instance.last_successful_time };
        Ok(OK)
    })
}

#[no_mangle]
pub unsafe extern "C" fn fmi2GetIntegerStatus(
    c: Component,
    kind: c_int,
    _value: *mut c_int,
) -> Status {
    with_fmu(c, "fmi2GetIntegerStatus", |_| {
        Err(format!("status kind {kind} has no Integer value"))
    })
}

#[no_mangle]
pub unsafe extern "C" fn fmi2GetBooleanStatus(
    c: Component,
    kind: c_int,
    value: *mut c_int,
) -> Status {
    with_fmu(c, "fmi2GetBooleanStatus", |fmu| {
        if kind != TERMINATED || value.is_null() {
            return Err(format!("status kind {kind} has no Boolean value"));
        }
        unsafe { *value = c_int::from(fmu.instance.terminated) };
        Ok(OK)
    })
}

#[no_mangle]
pub unsafe extern "C" fn fmi2GetStringStatus(
    c: Component,
    kind: c_int,
    _value: *mut *const c_char,
) -> Status {
    with_fmu(c, "fmi2GetStringStatus", |_| {
        Err(format!("status kind {kind} has no String value"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn file_uris_become_paths() {
        let p = |u: &str| resource_dir(u).expect("a file URI");
        assert_eq!(
            p("file:///tmp/a%20b/resources"),
            PathBuf::from("/tmp/a b/resources")
        );
        assert_eq!(p("file://localhost/x/y"), PathBuf::from("/x/y"));
        assert_eq!(p("file:/x/y/"), PathBuf::from("/x/y/"));
        assert!(resource_dir("http://example/x").is_err());
    }

    #[test]
    fn null_components_are_errors() {
        assert_eq!(unsafe { fmi2EnterEventMode(std::ptr::null_mut()) }, ERROR);
        assert_eq!(
            unsafe { fmi2DoStep(std::ptr::null_mut(), 0.0, 0.1, 0) },
            ERROR
        );
        unsafe { fmi2FreeInstance(std::ptr::null_mut()) };
    }

    #[test]
    fn missing_resources_give_no_instance() {
        let c = unsafe {
            fmi2Instantiate(
                c"m".as_ptr(),
                0,
                std::ptr::null(),
                c"file:///nonexistent/moss".as_ptr(),
                std::ptr::null(),
                0,
                0,
            )
        };
        assert!(c.is_null());
    }
}
