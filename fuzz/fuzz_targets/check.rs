//! Fuzz target `check`: parse → instantiate/flatten → type check of a one-file model (the
//! file's last top-level class), as `moss check FILE.mo` does. No input may panic, hang or
//! overflow the stack; rejected models must come back as diagnostics.
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Some(flat) = common::flatten(data) {
        // `moss check` prints these counts; computing them walks the whole flat model.
        let _ = moss_frontend::stats::stats(&flat.model);
    }
});
