//! The FMI 3.0 C API: all 75 functions of `fmi3Functions.h`, over the same [`Instance`] as
//! FMI 2.0 (`fmi2.rs`), so both standards behave alike. As there, every function runs under
//! `catch_unwind`, and failures are `fmi3Error` with a message to the importer's logger.
//!
//! Supported: Model Exchange and Co-Simulation (without event mode and early return: every
//! event is handled inside `fmi3DoStep`), Float64, Int32 and Boolean variables (moss's Real,
//! Integer/enumeration and Boolean), `time` and the event indicators as variables,
//! directional derivatives, FMU state get/set/serialization. Not supported (error with a
//! message): Scheduled Execution, clocks, adjoint derivatives, configuration mode, output derivatives, the
//! variable dependency queries, and the types moss has no variables of (an empty request
//! for them succeeds).

#![allow(clippy::missing_safety_doc)]

use crate::fmi2::{panic_text, slice, slice_mut, text};
use crate::fmu_state;
use crate::instance::{Instance, Kind, StepResult};
use crate::payload::{Payload, RESOURCE_FILE};
use crate::variables::BaseType;
use std::ffi::{c_char, c_int, c_void, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;

type Status = c_int;
const OK: Status = 0;
const ERROR: Status = 3;

type Instance3 = *mut c_void;
type ValueReference = u32;
type LogMessage = unsafe extern "C" fn(*mut c_void, Status, *const c_char, *const c_char);

#[derive(Clone, Copy)]
struct Log {
    callback: Option<LogMessage>,
    environment: *mut c_void,
}

impl Log {
    fn emit(&self, status: Status, category: &str, message: &str) {
        let Some(callback) = self.callback else {
            return;
        };
        let category = CString::new(category).unwrap_or_default();
        let message = CString::new(message.replace('\0', " ")).unwrap_or_default();
        unsafe {
            callback(
                self.environment,
                status,
                category.as_ptr(),
                message.as_ptr(),
            )
        };
    }
}

/// What an `fmi3Instance` points to.
struct Fmu {
    log: Log,
    logging_on: bool,
    instance: Instance,
}

fn with_fmu(
    c: Instance3,
    func: &str,
    f: impl FnOnce(&mut Fmu) -> Result<Status, String>,
) -> Status {
    if c.is_null() {
        return ERROR;
    }
    // SAFETY: a non-null instance is one an `fmi3Instantiate*` returned and
    // `fmi3FreeInstance` has not freed (the importer's obligation).
    let fmu = unsafe { &mut *(c as *mut Fmu) };
    match catch_unwind(AssertUnwindSafe(|| f(fmu))) {
        Ok(Ok(status)) => status,
        Ok(Err(message)) => {
            fmu.log
                .emit(ERROR, "logStatusError", &format!("{func}: {message}"));
            ERROR
        }
        Err(p) => {
            fmu.log.emit(
                ERROR,
                "logStatusError",
                &format!("{func}: internal error: {}", panic_text(p.as_ref())),
            );
            ERROR
        }
    }
}

fn instantiate(
    kind: Kind,
    token: *const c_char,
    resource_path: *const c_char,
    logging_on: bool,
    environment: *mut c_void,
    log_message: Option<LogMessage>,
) -> Instance3 {
    let log = Log {
        callback: log_message,
        environment,
    };
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let token = unsafe { text(token) };
        let path = unsafe { text(resource_path) };
        match load(kind, token, path) {
            Ok(instance) => Box::into_raw(Box::new(Fmu {
                log,
                logging_on,
                instance,
            })) as Instance3,
            Err(message) => {
                log.emit(
                    ERROR,
                    "logStatusError",
                    &format!("fmi3Instantiate: {message}"),
                );
                std::ptr::null_mut()
            }
        }
    }));
    outcome.unwrap_or(std::ptr::null_mut())
}

fn load(
    kind: Kind,
    token: Option<String>,
    resource_path: Option<String>,
) -> Result<Instance, String> {
    let dir = PathBuf::from(resource_path.ok_or("no resource path given")?);
    let file = dir.join(RESOURCE_FILE);
    let bytes = std::fs::read(&file)
        .map_err(|e| format!("cannot read the model file {}: {e}", file.display()))?;
    let payload = Payload::from_bytes(&bytes)?;
    if let Some(t) = token.filter(|t| *t != payload.token) {
        return Err(format!(
            "the instantiation token {t} does not match the model stored in the FMU ({})",
            payload.token
        ));
    }
    Instance::new(kind, payload)
}

// ---------------------------------------------------------------- common functions

#[no_mangle]
pub extern "C" fn fmi3GetVersion() -> *const c_char {
    c"3.0".as_ptr()
}

#[no_mangle]
pub unsafe extern "C" fn fmi3SetDebugLogging(
    c: Instance3,
    logging_on: bool,
    _n_categories: usize,
    _categories: *const *const c_char,
) -> Status {
    with_fmu(c, "fmi3SetDebugLogging", |fmu| {
        fmu.logging_on = logging_on;
        Ok(OK)
    })
}

#[no_mangle]
pub unsafe extern "C" fn fmi3InstantiateModelExchange(
    _instance_name: *const c_char,
    instantiation_token: *const c_char,
    resource_path: *const c_char,
    _visible: bool,
    logging_on: bool,
    instance_environment: *mut c_void,
    log_message: Option<LogMessage>,
) -> Instance3 {
    instantiate(
        Kind::ModelExchange,
        instantiation_token,
        resource_path,
        logging_on,
        instance_environment,
        log_message,
    )
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn fmi3InstantiateCoSimulation(
    _instance_name: *const c_char,
    instantiation_token: *const c_char,
    resource_path: *const c_char,
    _visible: bool,
    logging_on: bool,
    event_mode_used: bool,
    _early_return_allowed: bool,
    _required_intermediate_variables: *const ValueReference,
    _n_required_intermediate_variables: usize,
    instance_environment: *mut c_void,
    log_message: Option<LogMessage>,
    _intermediate_update: *const c_void,
) -> Instance3 {
    if event_mode_used {
        // modelDescription.xml says hasEventMode="false": every event is handled in the step.
        let log = Log {
            callback: log_message,
            environment: instance_environment,
        };
        log.emit(
            ERROR,
            "logStatusError",
            "fmi3InstantiateCoSimulation: event mode is not supported (hasEventMode=\"false\"): events are handled inside fmi3DoStep",
        );
        return std::ptr::null_mut();
    }
    instantiate(
        Kind::CoSimulation,
        instantiation_token,
        resource_path,
        logging_on,
        instance_environment,
        log_message,
    )
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn fmi3InstantiateScheduledExecution(
    _instance_name: *const c_char,
    _instantiation_token: *const c_char,
    _resource_path: *const c_char,
    _visible: bool,
    _logging_on: bool,
    instance_environment: *mut c_void,
    log_message: Option<LogMessage>,
    _clock_update: *const c_void,
    _lock_preemption: *const c_void,
    _unlock_preemption: *const c_void,
) -> Instance3 {
    let log = Log {
        callback: log_message,
        environment: instance_environment,
    };
    log.emit(
        ERROR,
        "logStatusError",
        "fmi3InstantiateScheduledExecution: Scheduled Execution is not supported",
    );
    std::ptr::null_mut()
}

#[no_mangle]
pub unsafe extern "C" fn fmi3FreeInstance(c: Instance3) {
    if c.is_null() {
        return;
    }
    // SAFETY: `c` came from an `fmi3Instantiate*` and is freed once.
    let _ = catch_unwind(AssertUnwindSafe(|| {
        drop(unsafe { Box::from_raw(c as *mut Fmu) })
    }));
}

#[no_mangle]
pub unsafe extern "C" fn fmi3EnterInitializationMode(
    c: Instance3,
    tolerance_defined: bool,
    tolerance: f64,
    start_time: f64,
    stop_time_defined: bool,
    stop_time: f64,
) -> Status {
    with_fmu(c, "fmi3EnterInitializationMode", |fmu| {
        fmu.instance.setup_experiment(
            tolerance_defined.then_some(tolerance),
            start_time,
            stop_time_defined.then_some(stop_time),
        )?;
        fmu.instance.enter_initialization()?;
        Ok(OK)
    })
}

#[no_mangle]
pub unsafe extern "C" fn fmi3ExitInitializationMode(c: Instance3) -> Status {
    with_fmu(c, "fmi3ExitInitializationMode", |fmu| {
        fmu.instance.exit_initialization()?;
        if fmu.logging_on {
            let t = fmu.instance.time;
            fmu.log
                .emit(OK, "logEvents", &format!("initialized at t = {t}"));
        }
        Ok(OK)
    })
}

#[no_mangle]
pub unsafe extern "C" fn fmi3EnterEventMode(c: Instance3) -> Status {
    with_fmu(c, "fmi3EnterEventMode", |fmu| {
        fmu.instance.enter_event_mode()?;
        Ok(OK)
    })
}

#[no_mangle]
pub unsafe extern "C" fn fmi3Terminate(c: Instance3) -> Status {
    with_fmu(c, "fmi3Terminate", |fmu| {
        fmu.instance.terminate()?;
        Ok(OK)
    })
}

#[no_mangle]
pub unsafe extern "C" fn fmi3Reset(c: Instance3) -> Status {
    with_fmu(c, "fmi3Reset", |fmu| {
        fmu.instance.reset()?;
        Ok(OK)
    })
}

// ---------------------------------------------------------------- getters and setters

#[allow(clippy::too_many_arguments)]
fn get_values<T>(
    c: Instance3,
    func: &str,
    ty: BaseType,
    vr: *const ValueReference,
    nvr: usize,
    value: *mut T,
    n_values: usize,
    convert: impl Fn(f64) -> T,
) -> Status {
    with_fmu(c, func, |fmu| {
        if n_values != nvr {
            return Err(format!("{n_values} values for {nvr} scalar variables"));
        }
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

#[allow(clippy::too_many_arguments)]
fn set_values<T: Copy>(
    c: Instance3,
    func: &str,
    ty: BaseType,
    vr: *const ValueReference,
    nvr: usize,
    value: *const T,
    n_values: usize,
    convert: impl Fn(T) -> f64,
) -> Status {
    with_fmu(c, func, |fmu| {
        if n_values != nvr {
            return Err(format!("{n_values} values for {nvr} scalar variables"));
        }
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
pub unsafe extern "C" fn fmi3GetFloat64(
    c: Instance3,
    vr: *const ValueReference,
    nvr: usize,
    value: *mut f64,
    n_values: usize,
) -> Status {
    get_values(
        c,
        "fmi3GetFloat64",
        BaseType::Real,
        vr,
        nvr,
        value,
        n_values,
        |v| v,
    )
}

#[no_mangle]
pub unsafe extern "C" fn fmi3GetInt32(
    c: Instance3,
    vr: *const ValueReference,
    nvr: usize,
    value: *mut i32,
    n_values: usize,
) -> Status {
    get_values(
        c,
        "fmi3GetInt32",
        BaseType::Integer,
        vr,
        nvr,
        value,
        n_values,
        |v| v.round() as i32,
    )
}

#[no_mangle]
pub unsafe extern "C" fn fmi3GetBoolean(
    c: Instance3,
    vr: *const ValueReference,
    nvr: usize,
    value: *mut bool,
    n_values: usize,
) -> Status {
    get_values(
        c,
        "fmi3GetBoolean",
        BaseType::Boolean,
        vr,
        nvr,
        value,
        n_values,
        |v| v != 0.0,
    )
}

#[no_mangle]
pub unsafe extern "C" fn fmi3SetFloat64(
    c: Instance3,
    vr: *const ValueReference,
    nvr: usize,
    value: *const f64,
    n_values: usize,
) -> Status {
    set_values(
        c,
        "fmi3SetFloat64",
        BaseType::Real,
        vr,
        nvr,
        value,
        n_values,
        |v| v,
    )
}

#[no_mangle]
pub unsafe extern "C" fn fmi3SetInt32(
    c: Instance3,
    vr: *const ValueReference,
    nvr: usize,
    value: *const i32,
    n_values: usize,
) -> Status {
    set_values(
        c,
        "fmi3SetInt32",
        BaseType::Integer,
        vr,
        nvr,
        value,
        n_values,
        f64::from,
    )
}

#[no_mangle]
pub unsafe extern "C" fn fmi3SetBoolean(
    c: Instance3,
    vr: *const ValueReference,
    nvr: usize,
    value: *const bool,
    n_values: usize,
) -> Status {
    set_values(
        c,
        "fmi3SetBoolean",
        BaseType::Boolean,
        vr,
        nvr,
        value,
        n_values,
        |v| if v { 1.0 } else { 0.0 },
    )
}

/// A request for variables of a type the FMU has none of: fine when empty.
fn no_variables_of(c: Instance3, func: &str, ty: &str, nvr: usize) -> Status {
    with_fmu(c, func, |_| {
        if nvr == 0 {
            Ok(OK)
        } else {
            Err(format!("this FMU has no {ty} variables"))
        }
    })
}

/// Getters and setters of the types moss has no variables of.
macro_rules! absent_type {
    ($get:ident, $set:ident, $t:ty, $name:literal) => {
        #[no_mangle]
        pub unsafe extern "C" fn $get(
            c: Instance3,
            _vr: *const ValueReference,
            nvr: usize,
            _value: *mut $t,
            _n_values: usize,
        ) -> Status {
            no_variables_of(c, stringify!($get), $name, nvr)
        }

        #[no_mangle]
        pub unsafe extern "C" fn $set(
            c: Instance3,
            _vr: *const ValueReference,
            nvr: usize,
            _value: *const $t,
            _n_values: usize,
        ) -> Status {
            no_variables_of(c, stringify!($set), $name, nvr)
        }
    };
}

absent_type!(fmi3GetFloat32, fmi3SetFloat32, f32, "Float32");
absent_type!(fmi3GetInt8, fmi3SetInt8, i8, "Int8");
absent_type!(fmi3GetUInt8, fmi3SetUInt8, u8, "UInt8");
absent_type!(fmi3GetInt16, fmi3SetInt16, i16, "Int16");
absent_type!(fmi3GetUInt16, fmi3SetUInt16, u16, "UInt16");
absent_type!(fmi3GetUInt32, fmi3SetUInt32, u32, "UInt32");
absent_type!(fmi3GetInt64, fmi3SetInt64, i64, "Int64");
absent_type!(fmi3GetUInt64, fmi3SetUInt64, u64, "UInt64");
absent_type!(fmi3GetString, fmi3SetString, *const c_char, "String");

#[no_mangle]
pub unsafe extern "C" fn fmi3GetBinary(
    c: Instance3,
    _vr: *const ValueReference,
    nvr: usize,
    _value_sizes: *mut usize,
    _values: *mut *const u8,
    _n_values: usize,
) -> Status {
    no_variables_of(c, "fmi3GetBinary", "Binary", nvr)
}

#[no_mangle]
pub unsafe extern "C" fn fmi3SetBinary(
    c: Instance3,
    _vr: *const ValueReference,
    nvr: usize,
    _value_sizes: *const usize,
    _values: *const *const u8,
    _n_values: usize,
) -> Status {
    no_variables_of(c, "fmi3SetBinary", "Binary", nvr)
}

#[no_mangle]
pub unsafe extern "C" fn fmi3GetClock(
    c: Instance3,
    _vr: *const ValueReference,
    nvr: usize,
    _values: *mut bool,
) -> Status {
    no_variables_of(c, "fmi3GetClock", "Clock", nvr)
}

#[no_mangle]
pub unsafe extern "C" fn fmi3SetClock(
    c: Instance3,
    _vr: *const ValueReference,
    nvr: usize,
    _values: *const bool,
) -> Status {
    no_variables_of(c, "fmi3SetClock", "Clock", nvr)
}

// ---------------------------------------------------------------- unsupported features

fn unsupported(c: Instance3, func: &str, why: &str) -> Status {
    with_fmu(c, func, |_| Err(format!("not supported: {why}")))
}

const NO_CLOCKS: &str = "the FMU has no clocks";

#[no_mangle]
pub unsafe extern "C" fn fmi3GetNumberOfVariableDependencies(
    c: Instance3,
    _vr: ValueReference,
    _n: *mut usize,
) -> Status {
    unsupported(
        c,
        "fmi3GetNumberOfVariableDependencies",
        "the dependencies are in modelDescription.xml",
    )
}

#[no_mangle]
pub unsafe extern "C" fn fmi3GetVariableDependencies(
    c: Instance3,
    _dependent: ValueReference,
    _element_indices_of_dependent: *mut usize,
    _independents: *mut ValueReference,
    _element_indices_of_independents: *mut usize,
    _dependency_kinds: *mut c_int,
    _n_dependencies: usize,
) -> Status {
    unsupported(
        c,
        "fmi3GetVariableDependencies",
        "the dependencies are in modelDescription.xml",
    )
}

#[no_mangle]
pub unsafe extern "C" fn fmi3GetFMUState(c: Instance3, state: *mut *mut c_void) -> Status {
    with_fmu(c, "fmi3GetFMUState", |fmu| {
        unsafe { fmu_state::store(state, fmu.instance.state()) }?;
        Ok(OK)
    })
}

#[no_mangle]
pub unsafe extern "C" fn fmi3SetFMUState(c: Instance3, state: *mut c_void) -> Status {
    with_fmu(c, "fmi3SetFMUState", |fmu| {
        fmu.instance.set_state(unsafe { fmu_state::get(state) }?)?;
        Ok(OK)
    })
}

#[no_mangle]
pub unsafe extern "C" fn fmi3FreeFMUState(c: Instance3, state: *mut *mut c_void) -> Status {
    with_fmu(c, "fmi3FreeFMUState", |_| {
        unsafe { fmu_state::free(state) };
        Ok(OK)
    })
}

#[no_mangle]
pub unsafe extern "C" fn fmi3SerializedFMUStateSize(
    c: Instance3,
    state: *mut c_void,
    size: *mut usize,
) -> Status {
    with_fmu(c, "fmi3SerializedFMUStateSize", |_| {
        unsafe { fmu_state::serialized_size(state, size) }?;
        Ok(OK)
    })
}

#[no_mangle]
pub unsafe extern "C" fn fmi3SerializeFMUState(
    c: Instance3,
    state: *mut c_void,
    out: *mut u8,
    size: usize,
) -> Status {
    with_fmu(c, "fmi3SerializeFMUState", |_| {
        unsafe { fmu_state::serialize(state, out, size) }?;
        Ok(OK)
    })
}

#[no_mangle]
pub unsafe extern "C" fn fmi3DeserializeFMUState(
    c: Instance3,
    bytes: *const u8,
    size: usize,
    state: *mut *mut c_void,
) -> Status {
    with_fmu(c, "fmi3DeserializeFMUState", |_| {
        unsafe { fmu_state::deserialize(bytes, size, state) }?;
        Ok(OK)
    })
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn fmi3GetDirectionalDerivative(
    c: Instance3,
    unknowns: *const ValueReference,
    n_unknowns: usize,
    knowns: *const ValueReference,
    n_knowns: usize,
    seed: *const f64,
    n_seed: usize,
    sensitivity: *mut f64,
    n_sensitivity: usize,
) -> Status {
    with_fmu(c, "fmi3GetDirectionalDerivative", |fmu| {
        if n_seed != n_knowns || n_sensitivity != n_unknowns {
            return Err("array sizes do not match the scalar variables".into());
        }
        let unknowns = unsafe { slice(unknowns, n_unknowns) }?;
        let knowns = unsafe { slice(knowns, n_knowns) }?;
        let seed = unsafe { slice(seed, n_seed) }?;
        let out = unsafe { slice_mut(sensitivity, n_sensitivity) }?;
        fmu.instance
            .directional_derivative(unknowns, knowns, seed, out)?;
        Ok(OK)
    })
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn fmi3GetAdjointDerivative(
    c: Instance3,
    _unknowns: *const ValueReference,
    _n_unknowns: usize,
    _knowns: *const ValueReference,
    _n_knowns: usize,
    _seed: *const f64,
    _n_seed: usize,
    _sensitivity: *mut f64,
    _n_sensitivity: usize,
) -> Status {
    unsupported(
        c,
        "fmi3GetAdjointDerivative",
        "adjoint derivatives are not provided (providesAdjointDerivatives=false)",
    )
}

#[no_mangle]
pub unsafe extern "C" fn fmi3EnterConfigurationMode(c: Instance3) -> Status {
    unsupported(
        c,
        "fmi3EnterConfigurationMode",
        "the FMU has no structural parameters",
    )
}

#[no_mangle]
pub unsafe extern "C" fn fmi3ExitConfigurationMode(c: Instance3) -> Status {
    unsupported(
        c,
        "fmi3ExitConfigurationMode",
        "the FMU has no structural parameters",
    )
}

#[no_mangle]
pub unsafe extern "C" fn fmi3GetIntervalDecimal(
    c: Instance3,
    _vr: *const ValueReference,
    _nvr: usize,
    _intervals: *mut f64,
    _qualifiers: *mut c_int,
) -> Status {
    unsupported(c, "fmi3GetIntervalDecimal", NO_CLOCKS)
}

#[no_mangle]
pub unsafe extern "C" fn fmi3GetIntervalFraction(
    c: Instance3,
    _vr: *const ValueReference,
    _nvr: usize,
    _counters: *mut u64,
    _resolutions: *mut u64,
    _qualifiers: *mut c_int,
) -> Status {
    unsupported(c, "fmi3GetIntervalFraction", NO_CLOCKS)
}

#[no_mangle]
pub unsafe extern "C" fn fmi3GetShiftDecimal(
    c: Instance3,
    _vr: *const ValueReference,
    _nvr: usize,
    _shifts: *mut f64,
) -> Status {
    unsupported(c, "fmi3GetShiftDecimal", NO_CLOCKS)
}

#[no_mangle]
pub unsafe extern "C" fn fmi3GetShiftFraction(
    c: Instance3,
    _vr: *const ValueReference,
    _nvr: usize,
    _counters: *mut u64,
    _resolutions: *mut u64,
) -> Status {
    unsupported(c, "fmi3GetShiftFraction", NO_CLOCKS)
}

#[no_mangle]
pub unsafe extern "C" fn fmi3SetIntervalDecimal(
    c: Instance3,
    _vr: *const ValueReference,
    _nvr: usize,
    _intervals: *const f64,
) -> Status {
    unsupported(c, "fmi3SetIntervalDecimal", NO_CLOCKS)
}

#[no_mangle]
pub unsafe extern "C" fn fmi3SetIntervalFraction(
    c: Instance3,
    _vr: *const ValueReference,
    _nvr: usize,
    _counters: *const u64,
    _resolutions: *const u64,
) -> Status {
    unsupported(c, "fmi3SetIntervalFraction", NO_CLOCKS)
}

#[no_mangle]
pub unsafe extern "C" fn fmi3SetShiftDecimal(
    c: Instance3,
    _vr: *const ValueReference,
    _nvr: usize,
    _shifts: *const f64,
) -> Status {
    unsupported(c, "fmi3SetShiftDecimal", NO_CLOCKS)
}

#[no_mangle]
pub unsafe extern "C" fn fmi3SetShiftFraction(
    c: Instance3,
    _vr: *const ValueReference,
    _nvr: usize,
    _counters: *const u64,
    _resolutions: *const u64,
) -> Status {
    unsupported(c, "fmi3SetShiftFraction", NO_CLOCKS)
}

#[no_mangle]
pub unsafe extern "C" fn fmi3EvaluateDiscreteStates(c: Instance3) -> Status {
    unsupported(c, "fmi3EvaluateDiscreteStates", NO_CLOCKS)
}

// ---------------------------------------------------------------- events

/// Write through an optional out-pointer.
unsafe fn put<T>(p: *mut T, v: T) {
    if !p.is_null() {
        unsafe { *p = v };
    }
}

#[no_mangle]
pub unsafe extern "C" fn fmi3UpdateDiscreteStates(
    c: Instance3,
    discrete_states_need_update: *mut bool,
    terminate_simulation: *mut bool,
    nominals_changed: *mut bool,
    values_changed: *mut bool,
    next_event_time_defined: *mut bool,
    next_event_time: *mut f64,
) -> Status {
    with_fmu(c, "fmi3UpdateDiscreteStates", |fmu| {
        let e = fmu.instance.new_discrete_states()?;
        let t = fmu.instance.time;
        if fmu.logging_on {
            fmu.log.emit(OK, "logEvents", &format!("event at t = {t}"));
        }
        if let Some(msg) = &e.terminate {
            let text = format!("the model called terminate() at t = {t}: {msg}");
            fmu.log.emit(OK, "logEvents", &text);
        }
        unsafe {
            put(discrete_states_need_update, false);
            put(terminate_simulation, e.terminate.is_some());
            put(nominals_changed, false);
            put(values_changed, e.states_changed);
            put(next_event_time_defined, e.next_event_time.is_some());
            put(next_event_time, e.next_event_time.unwrap_or(0.0));
        }
        Ok(OK)
    })
}

// ---------------------------------------------------------------- Model Exchange

#[no_mangle]
pub unsafe extern "C" fn fmi3EnterContinuousTimeMode(c: Instance3) -> Status {
    with_fmu(c, "fmi3EnterContinuousTimeMode", |fmu| {
        fmu.instance.enter_continuous_mode()?;
        Ok(OK)
    })
}

#[no_mangle]
pub unsafe extern "C" fn fmi3CompletedIntegratorStep(
    c: Instance3,
    _no_set_fmu_state_prior: bool,
    enter_event_mode: *mut bool,
    terminate_simulation: *mut bool,
) -> Status {
    with_fmu(c, "fmi3CompletedIntegratorStep", |_| {
        // No step events: every event of a moss model is a zero crossing or a time event.
        unsafe {
            put(enter_event_mode, false);
            put(terminate_simulation, false);
        }
        Ok(OK)
    })
}

#[no_mangle]
pub unsafe extern "C" fn fmi3SetTime(c: Instance3, time: f64) -> Status {
    with_fmu(c, "fmi3SetTime", |fmu| {
        fmu.instance.set_time(time)?;
        Ok(OK)
    })
}

#[no_mangle]
pub unsafe extern "C" fn fmi3SetContinuousStates(c: Instance3, x: *const f64, nx: usize) -> Status {
    with_fmu(c, "fmi3SetContinuousStates", |fmu| {
        fmu.instance.set_states(unsafe { slice(x, nx) }?)?;
        Ok(OK)
    })
}

#[no_mangle]
pub unsafe extern "C" fn fmi3GetContinuousStateDerivatives(
    c: Instance3,
    dx: *mut f64,
    nx: usize,
) -> Status {
    with_fmu(c, "fmi3GetContinuousStateDerivatives", |fmu| {
        fmu.instance.derivatives(unsafe { slice_mut(dx, nx) }?)?;
        Ok(OK)
    })
}

#[no_mangle]
pub unsafe extern "C" fn fmi3GetEventIndicators(c: Instance3, z: *mut f64, nz: usize) -> Status {
    with_fmu(c, "fmi3GetEventIndicators", |fmu| {
        fmu.instance
            .event_indicators(unsafe { slice_mut(z, nz) }?)?;
        Ok(OK)
    })
}

#[no_mangle]
pub unsafe extern "C" fn fmi3GetContinuousStates(c: Instance3, x: *mut f64, nx: usize) -> Status {
    with_fmu(c, "fmi3GetContinuousStates", |fmu| {
        fmu.instance.states(unsafe { slice_mut(x, nx) }?)?;
        Ok(OK)
    })
}

#[no_mangle]
pub unsafe extern "C" fn fmi3GetNominalsOfContinuousStates(
    c: Instance3,
    x: *mut f64,
    nx: usize,
) -> Status {
    with_fmu(c, "fmi3GetNominalsOfContinuousStates", |fmu| {
        fmu.instance.nominals(unsafe { slice_mut(x, nx) }?)?;
        Ok(OK)
    })
}

#[no_mangle]
pub unsafe extern "C" fn fmi3GetNumberOfEventIndicators(c: Instance3, n: *mut usize) -> Status {
    with_fmu(c, "fmi3GetNumberOfEventIndicators", |fmu| {
        unsafe { put(n, fmu.instance.n_event_indicators()) };
        Ok(OK)
    })
}

#[no_mangle]
pub unsafe extern "C" fn fmi3GetNumberOfContinuousStates(c: Instance3, n: *mut usize) -> Status {
    with_fmu(c, "fmi3GetNumberOfContinuousStates", |fmu| {
        unsafe { put(n, fmu.instance.n_states()) };
        Ok(OK)
    })
}

// ---------------------------------------------------------------- Co-Simulation

#[no_mangle]
pub unsafe extern "C" fn fmi3EnterStepMode(c: Instance3) -> Status {
    unsupported(
        c,
        "fmi3EnterStepMode",
        "the FMU has no event mode in Co-Simulation; it is in step mode after initialization",
    )
}

#[no_mangle]
pub unsafe extern "C" fn fmi3GetOutputDerivatives(
    c: Instance3,
    _vr: *const ValueReference,
    _nvr: usize,
    _orders: *const i32,
    _values: *mut f64,
    _n_values: usize,
) -> Status {
    unsupported(
        c,
        "fmi3GetOutputDerivatives",
        "output derivatives are not provided (maxOutputDerivativeOrder=0)",
    )
}

#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn fmi3DoStep(
    c: Instance3,
    current_communication_point: f64,
    communication_step_size: f64,
    _no_set_fmu_state_prior: bool,
    event_handling_needed: *mut bool,
    terminate_simulation: *mut bool,
    early_return: *mut bool,
    last_successful_time: *mut f64,
) -> Status {
    with_fmu(c, "fmi3DoStep", |fmu| {
        let result = fmu
            .instance
            .do_step(current_communication_point, communication_step_size)?;
        let terminated = matches!(result, StepResult::Terminated { .. });
        unsafe {
            // every event was handled inside the step
            put(event_handling_needed, false);
            put(terminate_simulation, terminated);
            put(early_return, terminated);
            put(last_successful_time, fmu.instance.last_successful_time);
        }
        if let StepResult::Terminated { time, message } = result {
            fmu.log.emit(
                OK,
                "logEvents",
                &format!("the model called terminate() at t = {time}: {message}"),
            );
        }
        Ok(OK)
    })
}

// ---------------------------------------------------------------- Scheduled Execution

#[no_mangle]
pub unsafe extern "C" fn fmi3ActivateModelPartition(
    c: Instance3,
    _clock_reference: ValueReference,
    _activation_time: f64,
) -> Status {
    unsupported(
        c,
        "fmi3ActivateModelPartition",
        "Scheduled Execution is not supported",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn null_instances_are_errors() {
        assert_eq!(unsafe { fmi3EnterEventMode(std::ptr::null_mut()) }, ERROR);
        assert_eq!(
            unsafe {
                fmi3GetFloat64(
                    std::ptr::null_mut(),
                    std::ptr::null(),
                    0,
                    std::ptr::null_mut(),
                    0,
                )
            },
            ERROR
        );
        unsafe { fmi3FreeInstance(std::ptr::null_mut()) };
    }
}
