//! The FMU-state handles of both FMI versions (`fmi2GetFMUstate` ... `fmi2DeSerializeFMUstate`,
//! `fmi3GetFMUState` ... `fmi3DeserializeFMUState`): an opaque pointer to a boxed
//! [`State`], created, overwritten, freed, serialized and read back here, once for both
//! APIs. Every function checks its pointers and returns an error message instead of
//! touching a null one.

use crate::fmi2::{slice, slice_mut};
use crate::instance::State;
use std::ffi::c_void;

/// `*state = now`: a new box when `*state` is null, else the box it points to overwritten.
///
/// # Safety
/// `state` is null or writable; a non-null `*state` is a handle this module created and
/// has not freed.
pub unsafe fn store(state: *mut *mut c_void, now: State) -> Result<(), String> {
    if state.is_null() {
        return Err("null FMU state pointer".into());
    }
    // SAFETY: checked non-null; a non-null `*state` is one this module created.
    unsafe {
        if (*state).is_null() {
            *state = Box::into_raw(Box::new(now)) as *mut c_void;
        } else {
            *((*state) as *mut State) = now;
        }
    }
    Ok(())
}

/// The state a handle points to.
///
/// # Safety
/// `state` is null or a handle this module created and has not freed.
pub unsafe fn get<'a>(state: *mut c_void) -> Result<&'a State, String> {
    if state.is_null() {
        Err("null FMU state".into())
    } else {
        // SAFETY: a live handle (see above).
        Ok(unsafe { &*(state as *const State) })
    }
}

/// Frees the handle `*state` points to (nothing when null) and nulls it.
///
/// # Safety
/// `state` is null or writable; a non-null `*state` is a live handle.
pub unsafe fn free(state: *mut *mut c_void) {
    if !state.is_null() && unsafe { !(*state).is_null() } {
        // SAFETY: a live handle, freed once.
        unsafe {
            drop(Box::from_raw((*state) as *mut State));
            *state = std::ptr::null_mut();
        }
    }
}

/// `*size` = the length of the serialized state.
///
/// # Safety
/// `state` as for [`get`]; `size` null or writable.
pub unsafe fn serialized_size(state: *mut c_void, size: *mut usize) -> Result<(), String> {
    let bytes = unsafe { get(state) }?.to_bytes()?;
    if size.is_null() {
        return Err("null size pointer".into());
    }
    // SAFETY: checked non-null.
    unsafe { *size = bytes.len() };
    Ok(())
}

/// Writes the serialized state into `out` (`size` bytes available).
///
/// # Safety
/// `state` as for [`get`]; `out` null or `size` writable bytes.
pub unsafe fn serialize(state: *mut c_void, out: *mut u8, size: usize) -> Result<(), String> {
    let bytes = unsafe { get(state) }?.to_bytes()?;
    if size < bytes.len() {
        return Err(format!(
            "{size} bytes given, the state needs {}",
            bytes.len()
        ));
    }
    let out = unsafe { slice_mut(out, bytes.len()) }?;
    out.copy_from_slice(&bytes);
    Ok(())
}

/// A new handle holding the state read from `size` bytes.
///
/// # Safety
/// `bytes` null or `size` readable bytes; `state` null or writable.
pub unsafe fn deserialize(
    bytes: *const u8,
    size: usize,
    state: *mut *mut c_void,
) -> Result<(), String> {
    if state.is_null() {
        return Err("null FMU state pointer".into());
    }
    let read = State::from_bytes(unsafe { slice(bytes, size) }?)?;
    // SAFETY: checked non-null.
    unsafe { *state = Box::into_raw(Box::new(read)) as *mut c_void };
    Ok(())
}
