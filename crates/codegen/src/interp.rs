//! The interpreter of the causal program.

use crate::model::RuntimeError;
use moss_symbolic::CausalProgram;

/// Executes a [`CausalProgram`]; implements [`crate::ExecutableModel`].
pub struct Interpreter {
    pub program: CausalProgram,
}

impl Interpreter {
    /// Compile the program's expressions into the interpreter's internal form.
    pub fn new(program: CausalProgram) -> Result<Interpreter, RuntimeError> {
        Err(RuntimeError {
            time: 0.0,
            message: format!(
                "cannot execute `{}`: the interpreter is not implemented yet",
                program.name
            ),
            details: vec![],
        })
    }
}
