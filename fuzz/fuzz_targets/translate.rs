//! Fuzz target `translate`: `check`, then the symbolic stage (alias elimination,
//! causalization, index reduction, tearing, Jacobians) and code generation (the
//! interpreter's program), as `moss translate FILE.mo` does; no simulation.
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Some(flat) = common::flatten(data) else {
        return;
    };
    match moss_symbolic::translate(&flat.model) {
        Ok(program) => {
            let _ = moss_symbolic::dump::program_text(&program);
            let _ = moss_codegen::Interpreter::new(program);
        }
        Err(diags) => common::assert_no_internal_error(&diags),
    }
});
